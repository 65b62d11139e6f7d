/// The small numeric helpers behind a correlation run. Missing values are `Double.nan` throughout.
enum Statistics {
    /// Pearson's r over the indices where both values are present; 0 when undefined (fewer than 3
    /// pairs, or either side constant).
    static func pearson(_ x: [Double], _ y: [Double]) -> (r: Double, n: Int) {
        var n = 0
        var sx = 0.0
        var sy = 0.0
        for i in 0..<min(x.count, y.count) where !x[i].isNaN && !y[i].isNaN {
            n += 1
            sx += x[i]
            sy += y[i]
        }
        guard n >= 3 else { return (0, n) }
        let mx = sx / Double(n)
        let my = sy / Double(n)
        var sxx = 0.0
        var syy = 0.0
        var sxy = 0.0
        for i in 0..<min(x.count, y.count) where !x[i].isNaN && !y[i].isNaN {
            let dx = x[i] - mx
            let dy = y[i] - my
            sxx += dx * dx
            syy += dy * dy
            sxy += dx * dy
        }
        return (correlation(sxy: sxy, sxx: sxx, syy: syy), n)
    }

    /// r from centred sums; 0 when a side has no spread, clamped to [-1, 1] against rounding.
    static func correlation(sxy: Double, sxx: Double, syy: Double) -> Double {
        let scale = (sxx * syy).squareRoot()
        guard scale > 1e-12, scale.isFinite else { return 0 }
        return min(1, max(-1, sxy / scale))
    }

    /// Pearson's r of x on day t against y on day t + lag, over every day both are present.
    static func laggedPearson(_ x: [Double], _ y: [Double], lag: Int) -> (r: Double, n: Int) {
        let count = min(x.count, y.count) - lag
        guard count > 0 else { return (0, 0) }
        return pearson(Array(x[0..<count]), Array(y[lag..<(lag + count)]))
    }

    /// The mean of the present values; nil when there are none.
    static func mean(_ values: some Sequence<Double>) -> Double? {
        var sum = 0.0
        var n = 0
        for v in values where !v.isNaN {
            sum += v
            n += 1
        }
        return n == 0 ? nil : sum / Double(n)
    }

    /// Where the top third of the values starts: the value at rank ⌊2n/3⌋ of the sorted values.
    static func upperTercile(_ values: [Double]) -> Double? {
        let sorted = values.filter { !$0.isNaN }.sorted()
        guard !sorted.isEmpty else { return nil }
        return sorted[min(sorted.count - 1, sorted.count * 2 / 3)]
    }
}
