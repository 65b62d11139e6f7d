/// One declared test: does x on day t go with y on day t + lag?
public struct CorrelationTest: Sendable, Codable, Hashable, Identifiable {
    enum CodingKeys: String, CodingKey {
        case id
        case x
        case y
        case lag
        case n
        case r
        case rawR = "raw_r"
        case p
        case q
        case permutations
        case effect
        case days
    }

    /// `"corr:<xId>:<yId>:lag<k>"`, deterministic.
    public var id: String
    /// The id of the series on the earlier (or same) day.
    public var x: String
    /// The id of the series on the later (or same) day.
    public var y: String
    /// Days from x to y: 0 = same day, 1 = x on day t and y on day t + 1 ("the day after").
    public var lag: Int
    /// The paired days behind `r`.
    public var n: Int
    /// Pearson r of the weekday-adjusted, pre-whitened series: the statistic that was tested.
    public var r: Double
    /// Pearson r of the raw values over every paired day, for reference.
    public var rawR: Double
    /// The two-sided whole-week permutation p-value, its shuffles widened by the pair's dependence factor
    /// (see the report's `method`).
    public var p: Double
    /// The Benjamini–Hochberg q-value within the run's family.
    public var q: Double
    /// Permutations actually drawn for this test (fewer than the limit when it stopped early).
    public var permutations: Int
    /// The effect in the person's units.
    public var effect: Effect
    /// The days behind the effect: x's "high" days whose y was compared.
    public var days: [Day]

    /// A test with every field given.
    public init(
        id: String, x: String, y: String, lag: Int, n: Int, r: Double, rawR: Double, p: Double, q: Double,
        permutations: Int, effect: Effect, days: [Day]
    ) {
        self.id = id
        self.x = x
        self.y = y
        self.lag = lag
        self.n = n
        self.r = r
        self.rawR = rawR
        self.p = p
        self.q = q
        self.permutations = permutations
        self.effect = effect
        self.days = days
    }

    /// The deterministic id of the test of x against y at a lag.
    public static func id(x: String, y: String, lag: Int) -> String { "corr:\(x):\(y):lag\(lag)" }
}

/// A test's effect in the person's units: y on x's "high" days against y on the other days.
public struct Effect: Sendable, Codable, Hashable {
    enum CodingKeys: String, CodingKey {
        case sentence
        case threshold
        case highDays = "high_days"
        case highHits = "high_hits"
        case highMean = "high_mean"
        case otherDays = "other_days"
        case otherHits = "other_hits"
        case otherMean = "other_mean"
    }

    /// The effect in one sentence: `"Headache on 9 of 14 days after 3+ Coffee, against 6 of 61 other days"`.
    public var sentence: String
    /// x's high-day bar: a count for a type (high = count ≥ threshold), a value for a property.
    public var threshold: Double
    /// High days of x whose y was compared.
    public var highDays: Int
    /// For a type y: how many of those days had y logged.
    public var highHits: Int?
    /// For a property y: y's mean on those days.
    public var highMean: Double?
    /// The other days of x whose y was compared.
    public var otherDays: Int
    /// For a type y: how many of the other days had y logged.
    public var otherHits: Int?
    /// For a property y: y's mean on the other days.
    public var otherMean: Double?

    /// An effect with every field given.
    public init(
        sentence: String, threshold: Double, highDays: Int, highHits: Int?, highMean: Double?, otherDays: Int,
        otherHits: Int?, otherMean: Double?
    ) {
        self.sentence = sentence
        self.threshold = threshold
        self.highDays = highDays
        self.highHits = highHits
        self.highMean = highMean
        self.otherDays = otherDays
        self.otherHits = otherHits
        self.otherMean = otherMean
    }
}
