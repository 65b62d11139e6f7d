import Foundation
import TrendyInsights

/// Trendy's original correlation rule, kept as the baseline the honest method is measured against.
///
/// Only the days on which something (any type) was logged; plain Pearson r of two types' counts on
/// those days; a normal-approximation p from z = r·√(n − 2)/√(1 − r²); published when p < 0.10;
/// same-day type pairs only; no adjustment for weekdays, autocorrelation or the number of pairs tried.
public enum TrendyBaseline {
    /// A pair the baseline would publish.
    public struct Finding: Sendable, Hashable {
        /// The first type's id.
        public var x: String
        /// The second type's id.
        public var y: String
        /// Pearson r over the logged days.
        public var r: Double
        /// The normal-approximation two-sided p.
        public var p: Double
        /// The days used.
        public var n: Int
    }

    /// Every same-day type pair the baseline would publish at `alpha`.
    public static func findings(_ series: [DailySeries], alpha: Double = 0.10) -> [Finding] {
        let types = series.filter(\.isType)
        let days = types.map(\.values.count).max() ?? 0
        let logged = (0..<days).filter { t in types.contains { t < $0.values.count && $0.values[t] > 0 } }
        var found: [Finding] = []
        for i in types.indices {
            for j in types.indices where j > i {
                let x = logged.map { types[i].values[$0] }
                let y = logged.map { types[j].values[$0] }
                let r = NullHistories.pearson(x, y)
                let n = logged.count
                guard n >= 3, r != 0, abs(r) < 1 else { continue }
                let z = r * Double(n - 2).squareRoot() / (1 - r * r).squareRoot()
                let p = erfc(abs(z) / 2.0.squareRoot())
                if p < alpha { found.append(Finding(x: types[i].id, y: types[j].id, r: r, p: p, n: n)) }
            }
        }
        return found
    }

    /// Whether the baseline would publish any correlation for the series.
    public static func publishesAny(_ series: [DailySeries]) -> Bool { !findings(series).isEmpty }

    /// Whether the baseline would publish any correlation for the history.
    public static func publishesAny(_ history: NullHistories.History) -> Bool { publishesAny(history.series) }
}
