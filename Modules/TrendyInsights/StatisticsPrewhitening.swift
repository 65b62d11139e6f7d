/// A series prepared for testing: weekday means removed, then pre-whitened with its own AR(1) fit.
struct WhitenedSeries: Sendable {
    /// The innovations e_t = z_t − φ·z_{t−1}; `nan` where the day had no value and on day 0.
    var residuals: [Double]
    /// The fitted, clamped AR(1) coefficient of the weekday-adjusted series.
    var phi: Double
}

extension Statistics {
    /// Subtracts each weekday's mean (over the days with a value) from the values; missing stays missing.
    /// A weekday with no value at all keeps the overall mean as its mean.
    static func weekdayAdjusted(_ values: [Double], firstWeekday: Int) -> [Double] {
        var sums = [Double](repeating: 0, count: 7)
        var counts = [Int](repeating: 0, count: 7)
        for (t, v) in values.enumerated() where !v.isNaN {
            sums[(firstWeekday + t) % 7] += v
            counts[(firstWeekday + t) % 7] += 1
        }
        let overall = mean(values) ?? 0
        let means = (0..<7).map { counts[$0] > 0 ? sums[$0] / Double(counts[$0]) : overall }
        return values.enumerated().map { t, v in v.isNaN ? .nan : v - means[(firstWeekday + t) % 7] }
    }

    /// The lag-1 autocorrelation of a centred series with gaps: the mean lagged product over the days
    /// whose previous day is also present, divided by the mean square over the present days.
    /// 0 when fewer than 3 such pairs or no spread.
    static func lagOneAutocorrelation(_ z: [Double]) -> Double {
        var lagged = 0.0
        var pairs = 0
        var square = 0.0
        var present = 0
        for t in z.indices where !z[t].isNaN {
            square += z[t] * z[t]
            present += 1
            if t > 0, !z[t - 1].isNaN {
                lagged += z[t] * z[t - 1]
                pairs += 1
            }
        }
        guard pairs >= 3, square > 1e-12 else { return 0 }
        return (lagged / Double(pairs)) / (square / Double(present))
    }

    /// Weekday-adjusts and pre-whitens `values` (see `WhitenedSeries`). φ is clamped to ±`phiLimit`;
    /// a missing previous day counts as 0, that is, as its weekday mean; day 0 is dropped.
    static func whitened(_ values: [Double], firstWeekday: Int, phiLimit: Double) -> WhitenedSeries {
        let z = weekdayAdjusted(values, firstWeekday: firstWeekday)
        let phi = min(phiLimit, max(-phiLimit, lagOneAutocorrelation(z)))
        var residuals = [Double](repeating: .nan, count: z.count)
        for t in z.indices.dropFirst() where !z[t].isNaN {
            let previous = z[t - 1].isNaN ? 0 : z[t - 1]
            residuals[t] = z[t] - phi * previous
        }
        return WhitenedSeries(residuals: residuals, phi: phi)
    }
}
