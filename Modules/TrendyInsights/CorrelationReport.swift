/// What a correlation run found, what it tested, what it left out and how it decided.
public struct CorrelationReport: Sendable, Codable, Hashable {
    /// The first day of the window (index 0 of every series).
    public var firstDay: Day
    /// The window's length in days.
    public var days: Int
    /// The size of the Benjamini–Hochberg family: every test run, significant or not.
    public var testsRun: Int
    /// Every test run, smallest p first.
    public var tests: [CorrelationTest]
    /// The tests with q ≤ `settings.q`, strongest |r| first.
    public var findings: [CorrelationTest]
    /// Series left out, and why.
    public var excluded: [Exclusion]
    /// Groups of series ids that moved together and were tested as one (the first id is the one tested).
    public var collapsed: [[String]]
    /// The most permutations a test could draw in this run (the adaptive limit; see `method`).
    public var permutationLimit: Int
    /// The settings the run used, so it can be replayed.
    public var settings: CorrelationSettings
    /// One paragraph, in words, on how the tests were chosen and decided.
    public var method: String

    /// A report with every field given.
    public init(
        firstDay: Day, days: Int, testsRun: Int, tests: [CorrelationTest], findings: [CorrelationTest],
        excluded: [Exclusion], collapsed: [[String]], permutationLimit: Int, settings: CorrelationSettings,
        method: String
    ) {
        self.firstDay = firstDay
        self.days = days
        self.testsRun = testsRun
        self.tests = tests
        self.findings = findings
        self.excluded = excluded
        self.collapsed = collapsed
        self.permutationLimit = permutationLimit
        self.settings = settings
        self.method = method
    }
}

/// A series that was not tested, with the reason as a value and in words.
public struct Exclusion: Sendable, Codable, Hashable {
    /// Why a series was left out.
    public enum Reason: Sendable, Codable, Hashable {
        /// The whole window is shorter than the minimum; nothing was tested.
        case historyTooShort(days: Int, needed: Int)
        /// A type logged on too few days.
        case tooFewLoggedDays(logged: Int, needed: Int)
        /// A type logged on nearly every day: too few days without it to compare against.
        case tooFewUnloggedDays(unlogged: Int, needed: Int)
        /// A property with a value on too few days.
        case tooFewValues(values: Int, needed: Int)
        /// A property with the same value every day it has one.
        case noVariation
        /// Moves with another series (same-day |r| at least the redundancy bar); tested as that one.
        case redundant(keptAs: String, r: Double)
        /// A second series with an id already seen; the first one was used.
        case duplicateId
    }

    /// The id of the series left out.
    public var series: String
    /// Its label.
    public var label: String
    /// Why, as a value.
    public var reason: Reason
    /// Why, in words: `"logged on 3 days; 8 needed"`.
    public var text: String

    /// An exclusion whose text is written from its reason.
    public init(series: String, label: String, reason: Reason) {
        self.series = series
        self.label = label
        self.reason = reason
        self.text = Self.text(for: reason)
    }

    /// The words for a reason.
    public static func text(for reason: Reason) -> String {
        switch reason {
        case .historyTooShort(let days, let needed):
            "the history covers \(days) days; \(needed) needed before anything is tested"
        case .tooFewLoggedDays(let logged, let needed):
            "logged on \(logged) day\(logged == 1 ? "" : "s"); \(needed) needed"
        case .tooFewUnloggedDays(let unlogged, let needed):
            "not logged on only \(unlogged) day\(unlogged == 1 ? "" : "s"); \(needed) days without it needed to compare"
        case .tooFewValues(let values, let needed):
            "a value on \(values) day\(values == 1 ? "" : "s"); \(needed) needed"
        case .noVariation:
            "the same value on every day it has one"
        case .redundant(let keptAs, let r):
            "moves with \(keptAs) (same-day r = \(Effect.decimal(r, places: 2))); tested as \(keptAs)"
        case .duplicateId:
            "another series has the same id; the first was used"
        }
    }
}
