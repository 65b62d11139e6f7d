/// The knobs of a correlation run. `standard` is what Trendy ships; tests may tighten or loosen.
public struct CorrelationSettings: Sendable, Hashable, Codable {
    enum CodingKeys: String, CodingKey {
        case q
        case lags
        case minimumDays = "minimum_days"
        case minimumActiveDays = "minimum_active_days"
        case minimumValues = "minimum_values"
        case minimumPermutations = "minimum_permutations"
        case maximumPermutations = "maximum_permutations"
        case resolution
        case exceedancesToStop = "exceedances_to_stop"
        case redundancy
        case phiLimit = "phi_limit"
        case seed
    }

    /// The Benjamini–Hochberg false discovery rate: a finding needs q ≤ this.
    public var q: Double
    /// The declared lags, in days: 0 compares the same day, k > 0 compares x's day with y's day
    /// k days later (tested in both directions). Never scanned for the best.
    public var lags: [Int]
    /// The shortest window (in days) worth testing at all.
    public var minimumDays: Int
    /// A type needs this many days logged, and as many days not logged.
    public var minimumActiveDays: Int
    /// A property needs this many days with a value.
    public var minimumValues: Int
    /// The fewest permutations a test may draw before it can report its smallest p.
    public var minimumPermutations: Int
    /// The most permutations any one test may draw: a cap on the adaptive choice (see `resolution`)
    /// that wins over `minimumPermutations`.
    public var maximumPermutations: Int
    /// The permutation limit is `resolution × tests / q`, so the smallest attainable p sits this many
    /// times below the Benjamini–Hochberg bar `q / tests` (then clamped by the minimum and maximum).
    public var resolution: Double
    /// Besag–Clifford sequential stopping: a test stops once this many permuted |r| reach the observed.
    public var exceedancesToStop: Int
    /// Two series whose raw same-day |r| reaches this are one input.
    public var redundancy: Double
    /// The AR(1) coefficient used for pre-whitening is clamped to ± this.
    public var phiLimit: Double
    /// The seed of the permutation sequence.
    public var seed: UInt64

    /// Settings with every field given; the defaults are `standard`'s.
    public init(
        q: Double = 0.10, lags: [Int] = [0, 1], minimumDays: Int = 56, minimumActiveDays: Int = 8,
        minimumValues: Int = 14, minimumPermutations: Int = 5_000, maximumPermutations: Int = 500_000,
        resolution: Double = 20, exceedancesToStop: Int = 10, redundancy: Double = 0.95, phiLimit: Double = 0.95,
        seed: UInt64 = 0x7472_656E_6479
    ) {
        self.q = q
        self.lags = lags
        self.minimumDays = minimumDays
        self.minimumActiveDays = minimumActiveDays
        self.minimumValues = minimumValues
        self.minimumPermutations = minimumPermutations
        self.maximumPermutations = maximumPermutations
        self.resolution = resolution
        self.exceedancesToStop = exceedancesToStop
        self.redundancy = redundancy
        self.phiLimit = phiLimit
        self.seed = seed
    }

    /// What Trendy ships: q = 0.10, lags 0 and 1, 56 days, 8 active days, 14 values, ≥ 5,000 permutations.
    public static let standard = CorrelationSettings()

    /// The declared lags, cleaned: non-negative, unique, ascending.
    var declaredLags: [Int] { Array(Set(lags.filter { $0 >= 0 })).sorted() }

    /// The permutation limit for a family of `tests` tests: `resolution × tests / q` rounded up, at least
    /// `minimumPermutations`, at most `maximumPermutations`.
    public func permutationLimit(tests: Int) -> Int {
        let wanted = (resolution * Double(tests) / max(q, 1e-9)).rounded(.up)
        let cap = max(1, maximumPermutations)
        let floor = min(max(1, minimumPermutations), cap)
        return wanted >= Double(cap) ? cap : max(floor, Int(wanted))
    }
}
