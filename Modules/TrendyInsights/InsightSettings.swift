/// What a person chooses about their days: the zone for events logged without one, the hour the
/// day starts, and what keeps a streak through a day without a log.
public struct InsightSettings: Sendable, Hashable, Codable {
    /// The IANA zone for events logged without one (`Europe/Berlin`).
    public var timeZone: String
    /// The hour (0–12) the day starts at: 4 counts a log at 00:20 for the day before.
    public var dayStartHour: Int
    /// Weekdays that never break a streak (0 = Monday … 6 = Sunday).
    public var skipWeekdays: [Int]
    /// Dates that never break a streak (a holiday, a sick day).
    public var skipDays: [Day]
    /// Missed days forgiven per calendar month before a streak breaks.
    public var gracePerMonth: Int

    /// Settings; by default days start at midnight and nothing is skipped or forgiven.
    public init(
        timeZone: String, dayStartHour: Int = 0, skipWeekdays: [Int] = [], skipDays: [Day] = [], gracePerMonth: Int = 0
    ) {
        self.timeZone = timeZone
        self.dayStartHour = dayStartHour
        self.skipWeekdays = skipWeekdays
        self.skipDays = skipDays
        self.gracePerMonth = gracePerMonth
    }

    /// The years a date off may be in (those an event may be in).
    public static let years = 1800...2999

    /// The settings' problems, in words (empty when they are fine).
    public var issues: [String] {
        var out: [String] = []
        if !(0...12).contains(dayStartHour) { out.append("the day start must be an hour from 0 to 12") }
        if skipWeekdays.contains(where: { !(0...6).contains($0) }) { out.append("skip weekdays are 0 (Monday) to 6") }
        if Set(skipWeekdays).count >= 7 { out.append("at least one weekday must count") }
        if !(0...31).contains(gracePerMonth) { out.append("grace days per month must be 0 to 31") }
        if skipDays.contains(where: { !(Self.years).contains($0.civil.year) }) {
            out.append("dates off must be between the years 1800 and 2999, as events are")
        }
        return out
    }

    enum CodingKeys: String, CodingKey {
        case timeZone = "time_zone"
        case dayStartHour = "day_start_hour"
        case skipWeekdays = "skip_weekdays"
        case skipDays = "skip_days"
        case gracePerMonth = "grace_per_month"
    }

    /// The clock these settings count days with.
    public func clock(cache: ZoneOffsetCache = ZoneOffsetCache()) -> DayClock {
        DayClock(homeZone: timeZone, dayStartHour: dayStartHour, cache: cache)
    }
}

/// How a number a person sees was computed: its window, sample, method, statistic, p and q, the
/// size of the family it was tested in, and the days behind it.
public struct Explanation: Sendable, Hashable, Codable {
    /// The first day looked at.
    public var firstDay: Day
    /// The last day looked at.
    public var lastDay: Day
    /// How many days or events the number rests on (the unit is in ``method``).
    public var n: Int
    /// The method, in words.
    public var method: String
    /// The statistic, named, with its value (`r = 0.52`, `strength = 0.83`).
    public var statistic: String
    /// The p-value, when a test was run.
    public var p: Double?
    /// The Benjamini–Hochberg q-value, when the number is one of a family of tests.
    public var q: Double?
    /// How many tests the family had.
    public var testsRun: Int?
    /// The days behind it.
    public var days: [Day]

    /// Creates one.
    public init(
        firstDay: Day, lastDay: Day, n: Int, method: String, statistic: String, p: Double? = nil, q: Double? = nil,
        testsRun: Int? = nil, days: [Day] = []
    ) {
        self.firstDay = firstDay
        self.lastDay = lastDay
        self.n = n
        self.method = method
        self.statistic = statistic
        self.p = p
        self.q = q
        self.testsRun = testsRun
        self.days = days
    }

    enum CodingKeys: String, CodingKey {
        case firstDay = "first_day"
        case lastDay = "last_day"
        case n, method, statistic, p, q
        case testsRun = "tests_run"
        case days
    }
}
