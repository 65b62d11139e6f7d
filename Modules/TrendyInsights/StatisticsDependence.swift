/// How much of two series' own day-to-day dependence the whole-week shuffle misses.
///
/// For two independent series, the spread of their cross-product over n days is
/// n·σx²·σy²·(1 + 2·Σ_{k ≥ 1} ρx(k)·ρy(k)), where ρ(k) is each series' own autocorrelation at lag k
/// (Bartlett, 1935). Shuffling whole weeks keeps a day's partners within its own week, so the shuffled
/// spread only has the lags inside a week, each weighted by the share of day pairs k apart that fall in
/// the same week: 1 + 2·Σ_{k=1}^{6} (1 − k/7)·ρx(k)·ρy(k). Pre-whitening makes ρ small but not zero (an
/// AR(1) fit does not remove all the dependence of counts driven by a persistent habit), so the ratio
/// of the two is how much too narrow the shuffled distribution is for this pair.
extension Statistics {
    /// The autocorrelation lags the dependence factor sums over: four weeks. What an AR(1) fit leaves in
    /// the residuals of a persistent habit decays roughly like φ^k, still visible after three weeks for
    /// φ near 0.9; each extra lag also adds estimation noise, so the sum stops here.
    static let dependenceLags = 28

    /// The autocorrelations ρ(1) … ρ(`lags`) of a series with gaps: the series is centred on the mean of
    /// its present values, each lag's products are summed over the days where both ends are present, and
    /// divided by the sum of squares over the present days (so ρ shrinks with the gaps, never above 1
    /// in size). All zeros when there is no spread. Index 0 holds ρ(0) = 1.
    static func autocorrelations(_ values: [Double], lags: Int = dependenceLags) -> [Double] {
        var result = [Double](repeating: 0, count: lags + 1)
        result[0] = 1
        guard let mean = mean(values) else { return result }
        let z = values.map { $0.isNaN ? Double.nan : $0 - mean }
        var square = 0.0
        for v in z where !v.isNaN { square += v * v }
        guard square > 1e-12 else { return result }
        for k in stride(from: 1, through: lags, by: 1) where k < z.count {
            var sum = 0.0
            for t in k..<z.count where !z[t].isNaN && !z[t - k].isNaN { sum += z[t] * z[t - k] }
            result[k] = sum / square
        }
        return result
    }

    /// The factor by which the whole-week shuffle understates the null variance of the cross-product of
    /// two independent series with autocorrelations `a` and `b` (from `autocorrelations`):
    /// (1 + 2·Σ_{k=1}^{K} ρa(k)·ρb(k)) / (1 + 2·Σ_{k=1}^{6} (1 − k/7)·ρa(k)·ρb(k)), never below 1.
    ///
    /// Never below 1: the shuffle is exact when weeks are exchangeable, and for independent series a
    /// factor under 1 is estimation noise, not a reason to call a pattern more surprising than the
    /// shuffles say; letting that noise through both ways would also make the far tail too light,
    /// because a spread estimated too small costs more than one estimated too large saves.
    static func dependenceFactor(_ a: [Double], _ b: [Double]) -> Double {
        let lags = min(a.count, b.count) - 1
        guard lags >= 1 else { return 1 }
        var full = 1.0
        var withinWeek = 1.0
        for k in 1...lags {
            let product = a[k] * b[k]
            full += 2 * product
            if k < 7 { withinWeek += 2 * (1 - Double(k) / 7) * product }
        }
        // Both sums are variances of a sum, so positive in exact arithmetic; guard estimation noise.
        return max(1, max(full, 0.25) / max(withinWeek, 0.25))
    }
}
