/// What a correlation run found, what it tested, what it left out and how it decided.
public struct CorrelationReport: Sendable, Codable, Hashable {
    enum CodingKeys: String, CodingKey {
        case firstDay = "first_day"
        case days
        case testsRun = "tests_run"
        case tests
        case findings
        case excluded
        case collapsed
        case permutationLimit = "permutation_limit"
        case settings
        case method
    }

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
    public enum Reason: Sendable, Hashable {
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

extension Exclusion.Reason: Codable {
    enum CodingKeys: String, CodingKey {
        case code, days, needed, logged, unlogged, values
        case keptAs = "kept_as"
        case r
    }

    /// The reason's stable code (`too_few_logged_days`).
    public var code: String {
        switch self {
        case .historyTooShort: "history_too_short"
        case .tooFewLoggedDays: "too_few_logged_days"
        case .tooFewUnloggedDays: "too_few_unlogged_days"
        case .tooFewValues: "too_few_values"
        case .noVariation: "no_variation"
        case .redundant: "redundant"
        case .duplicateId: "duplicate_id"
        }
    }

    /// Encodes as `{"code": …, …its numbers}`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(code, forKey: .code)
        switch self {
        case .historyTooShort(let days, let needed):
            try c.encode(days, forKey: .days)
            try c.encode(needed, forKey: .needed)
        case .tooFewLoggedDays(let logged, let needed):
            try c.encode(logged, forKey: .logged)
            try c.encode(needed, forKey: .needed)
        case .tooFewUnloggedDays(let unlogged, let needed):
            try c.encode(unlogged, forKey: .unlogged)
            try c.encode(needed, forKey: .needed)
        case .tooFewValues(let values, let needed):
            try c.encode(values, forKey: .values)
            try c.encode(needed, forKey: .needed)
        case .redundant(let keptAs, let r):
            try c.encode(keptAs, forKey: .keptAs)
            try c.encode(r, forKey: .r)
        case .noVariation, .duplicateId: break
        }
    }

    /// Decodes what ``encode(to:)`` writes.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func int(_ key: CodingKeys) throws -> Int { try c.decode(Int.self, forKey: key) }
        switch try c.decode(String.self, forKey: .code) {
        case "history_too_short": self = .historyTooShort(days: try int(.days), needed: try int(.needed))
        case "too_few_logged_days": self = .tooFewLoggedDays(logged: try int(.logged), needed: try int(.needed))
        case "too_few_unlogged_days": self = .tooFewUnloggedDays(unlogged: try int(.unlogged), needed: try int(.needed))
        case "too_few_values": self = .tooFewValues(values: try int(.values), needed: try int(.needed))
        case "no_variation": self = .noVariation
        case "redundant":
            self = .redundant(
                keptAs: try c.decode(String.self, forKey: .keptAs), r: try c.decode(Double.self, forKey: .r))
        case "duplicate_id": self = .duplicateId
        case let other:
            throw DecodingError.dataCorruptedError(forKey: .code, in: c, debugDescription: "unknown reason \(other)")
        }
    }
}
