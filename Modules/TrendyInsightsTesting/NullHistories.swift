import Foundation
import TrendyInsights

/// Seeded synthetic histories for checking what a correlation method publishes.
///
/// Null histories have types that are independent of each other by construction, each an AR(1)
/// latent process with a weekday rhythm turned into Poisson daily counts; some carry a numeric
/// property with missing days. Planted histories add one type that drives another's next day.
/// Every history is a pure function of its seed.
///
/// Not simulated: trends, holidays, changes of habit, logging fatigue, multi-day effects.
public enum NullHistories {
    /// A synthetic history, ready for `Correlations.run(history.series, firstDay: history.firstDay)`.
    public struct History: Sendable, Hashable {
        /// The first day of the window.
        public var firstDay: Day
        /// The window's length in days.
        public var days: Int
        /// The series, every one `days` long.
        public var series: [DailySeries]
        /// The dependencies planted on purpose (empty in a null history).
        public var planted: [Planted]
    }

    /// A dependency planted on purpose: `cause` on day t raises `effect` on day t + `lag`.
    public struct Planted: Sendable, Hashable {
        /// The id of the driving series.
        public var cause: String
        /// The id of the driven series.
        public var effect: String
        /// Days from cause to effect.
        public var lag: Int
        /// Pearson r of the raw counts, cause on day t against effect on day t + lag, as generated.
        public var realizedR: Double
    }

    /// A null history: 3–6 independent types over 90–365 days (φ of each latent process drawn from
    /// {0, 0.4, 0.6, 0.8}), and in about half of them one or two properties with missing days.
    public static func history(seed: UInt64) -> History {
        var rng = SeededGenerator.stream(1, of: seed)
        let days = 90 + rng.below(276)
        let firstDay = Day(year: 2025, month: 1, day: 6).adding(rng.below(7))
        let typeCount = 3 + rng.below(4)
        var types = (0..<typeCount).map { typeCounts(index: $0, days: days, firstDay: firstDay, rng: &rng) }
        if rng.unit() < 0.5 {
            for _ in 0..<(1 + rng.below(2)) {
                let owner = rng.below(typeCount)
                types.append(property(of: types[owner], days: days, firstDay: firstDay, rng: &rng))
            }
        }
        return History(firstDay: firstDay, days: days, series: unique(types), planted: [])
    }

    /// A history where one type drives another's next day with raw lag-1 r of at least `effect`
    /// (resampled until the generated r reaches it), plus two independent types and, in about half of
    /// them, a property. Each cause event is followed the next day by an effect event with a
    /// probability tuned so the population r is `effect + 0.05`.
    public static func planted(effect: Double = 0.4, days: Int = 120, seed: UInt64) -> History {
        var rng = SeededGenerator.stream(2, of: seed)
        let firstDay = Day(year: 2025, month: 1, day: 6).adding(rng.below(7))
        var best = History(firstDay: firstDay, days: days, series: [], planted: [])
        for _ in 0..<200 {
            var series = (0..<4).map { typeCounts(index: $0, days: days, firstDay: firstDay, rng: &rng) }
            let planted = drive(series[0], into: &series[1], target: effect + 0.05, rng: &rng)
            if rng.unit() < 0.5 {
                series.append(property(of: series[2 + rng.below(2)], days: days, firstDay: firstDay, rng: &rng))
            }
            let history = History(firstDay: firstDay, days: days, series: series, planted: [planted])
            if planted.realizedR >= effect { return history }
            if planted.realizedR > (best.planted.first?.realizedR ?? -1) { best = history }
        }
        return best
    }

    /// The benchmark input: `types` types and `properties` numeric properties (on the first types) over
    /// `days` days, with two planted next-day dependencies (type 0 → type 1, type 2 → type 3) so that
    /// some tests run to the permutation limit, as real findings do.
    public static func benchmarkInput(types: Int = 20, properties: Int = 5, days: Int = 365, seed: UInt64)
        -> History
    {
        var rng = SeededGenerator.stream(3, of: seed)
        let firstDay = Day(year: 2025, month: 1, day: 6)
        var series = (0..<types).map { typeCounts(index: $0, days: days, firstDay: firstDay, rng: &rng) }
        var planted: [Planted] = []
        for (cause, effect) in [(0, 1), (2, 3)] where effect < types {
            planted.append(drive(series[cause], into: &series[effect], target: 0.45, rng: &rng))
        }
        for p in 0..<properties where types > 0 {
            series.append(property(of: series[p % types], days: days, firstDay: firstDay, rng: &rng))
        }
        return History(firstDay: firstDay, days: days, series: unique(series), planted: planted)
    }

    // MARK: Generators

    private static let labels = [
        "Coffee", "Headache", "Run", "Beer", "Nap", "Walk", "Meditation", "Snack", "Tea", "Migraine", "Yoga",
        "Wine", "Swim", "Reading", "Sugar", "Cycling", "Stretching", "Takeaway", "Gaming", "Sauna",
    ]

    /// A type's counts: Poisson with mean exp(μ + weekday rhythm + AR(1) latent).
    private static func typeCounts(index: Int, days: Int, firstDay: Day, rng: inout SeededGenerator)
        -> DailySeries
    {
        let phi = [0, 0.4, 0.6, 0.8][rng.below(4)]
        let sd = 0.4 + 0.3 * rng.unit()
        let meanCount = 0.25 + 1.75 * rng.unit()
        let mu = log(meanCount) - sd * sd / 2
        let rhythm = (0..<7).map { _ in 0.35 * gaussian(&rng) }
        let latent = ar1(phi: phi, sd: sd, days: days, rng: &rng)
        let counts = (0..<days).map { t in
            Double(poisson(exp(mu + rhythm[(firstDay.weekday + t) % 7] + latent[t]), &rng))
        }
        let label = labels[index % labels.count] + (index < labels.count ? "" : " \(index / labels.count + 1)")
        return .type("t\(index)", label: label, counts: counts)
    }

    /// A property of `owner`: a value on about 85 % of its logged days, from its own AR(1) process.
    private static func property(of owner: DailySeries, days: Int, firstDay: Day, rng: inout SeededGenerator)
        -> DailySeries
    {
        let latent = ar1(phi: [0, 0.4, 0.6, 0.8][rng.below(4)], sd: 1, days: days, rng: &rng)
        let rhythm = (0..<7).map { _ in 0.4 * gaussian(&rng) }
        let values = (0..<days).map { t -> Double in
            guard owner.values[t] > 0, rng.unit() < 0.85 else { return .nan }
            return 7 + latent[t] + rhythm[(firstDay.weekday + t) % 7] + 0.5 * gaussian(&rng)
        }
        return .property(owner.typeId, key: "hours", label: "\(owner.label)'s hours", unit: "hours", values: values)
    }

    /// Adds to `effect`'s day t + 1 one event per `cause` event on day t, each with probability π, where π
    /// makes the population lag-1 r about `target`; returns what was planted.
    private static func drive(
        _ cause: DailySeries, into effect: inout DailySeries, target: Double, rng: inout SeededGenerator
    ) -> Planted {
        let (x, base) = (cause.values, effect.values)
        let (vx, mx, vb) = (variance(x), x.reduce(0, +) / Double(x.count), variance(base))
        func r(_ pi: Double) -> Double {
            pi * vx / (vx * (vb + pi * (1 - pi) * mx + pi * pi * vx)).squareRoot()
        }
        var (low, high) = (0.0, 1.0)
        for _ in 0..<50 {
            let mid = (low + high) / 2
            if r(mid) < target { low = mid } else { high = mid }
        }
        var values = base
        for t in 1..<values.count {
            for _ in 0..<Int(x[t - 1]) where rng.unit() < high { values[t] += 1 }
        }
        effect.values = values
        let realized = pearson(Array(x.dropLast()), Array(values.dropFirst()))
        return Planted(cause: cause.id, effect: effect.id, lag: 1, realizedR: realized)
    }

    /// An AR(1) path with stationary standard deviation `sd`.
    private static func ar1(phi: Double, sd: Double, days: Int, rng: inout SeededGenerator) -> [Double] {
        var path = [Double](repeating: 0, count: days)
        var value = sd * gaussian(&rng)
        let innovation = sd * (1 - phi * phi).squareRoot()
        for t in 0..<days {
            if t > 0 { value = phi * value + innovation * gaussian(&rng) }
            path[t] = value
        }
        return path
    }

    /// A standard normal draw (Box–Muller).
    static func gaussian(_ rng: inout SeededGenerator) -> Double {
        let u = 1 - rng.unit()
        return (-2 * log(u)).squareRoot() * cos(2 * Double.pi * rng.unit())
    }

    /// A Poisson draw (Knuth's product method; the mean is capped at 30, far above a day's logging).
    static func poisson(_ mean: Double, _ rng: inout SeededGenerator) -> Int {
        let limit = exp(-min(mean, 30))
        var k = 0
        var product = rng.unit()
        while product > limit {
            k += 1
            product *= rng.unit()
        }
        return k
    }

    private static func variance(_ values: [Double]) -> Double {
        let mean = values.reduce(0, +) / Double(values.count)
        return values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count)
    }

    /// Pearson r of two equally long complete series (0 when either is constant).
    static func pearson(_ x: [Double], _ y: [Double]) -> Double {
        let (mx, my) = (x.reduce(0, +) / Double(x.count), y.reduce(0, +) / Double(y.count))
        var (sxy, sxx, syy) = (0.0, 0.0, 0.0)
        for i in x.indices {
            sxy += (x[i] - mx) * (y[i] - my)
            sxx += (x[i] - mx) * (x[i] - mx)
            syy += (y[i] - my) * (y[i] - my)
        }
        return sxx > 0 && syy > 0 ? sxy / (sxx * syy).squareRoot() : 0
    }

    /// The series with repeated ids (a type given two properties) reduced to the first.
    private static func unique(_ series: [DailySeries]) -> [DailySeries] {
        var seen: Set<String> = []
        return series.filter { seen.insert($0.id).inserted }
    }
}
