import Foundation

/// A run of days on which a type was logged, possibly kept through days that do not break it.
public struct StreakRun: Sendable, Hashable, Codable {
    /// Why a day without a log did not break the run.
    public enum Reason: String, Sendable, Hashable, Codable {
        /// A weekday or date the person marked as a day off.
        case skip
        /// One of the month's grace days.
        case grace
        /// The clock jumped over it (a flight east across zones): the day was never lived.
        case clockJump = "clock_jump"
    }

    /// A day kept without a log.
    public struct Kept: Sendable, Hashable, Codable {
        /// The day.
        public var day: Day
        /// Why it did not break the run.
        public var reason: Reason
    }

    /// The first day.
    public var start: Day
    /// The last day logged.
    public var end: Day
    /// Days logged in it.
    public var logged: Int
    /// Days kept without a log.
    public var kept: [Kept]

    /// Days from the first to the last, both included.
    public var days: Int { start.distance(to: end) + 1 }
}

/// A type's streaks and strength.
public struct Streak: Sendable, Hashable, Codable, Identifiable {
    /// `streak:<type id>`.
    public var id: String
    /// The type.
    public var typeId: String
    /// Its name.
    public var typeName: String
    /// The run still going (its last log today or yesterday, or kept since); nil when broken.
    public var current: StreakRun?
    /// The longest run (the latest of equals).
    public var longest: StreakRun?
    /// Whether today is logged yet.
    public var loggedToday: Bool
    /// Loop Habit Tracker's strength score, 0–1: each day's log counts half as much 13 days later.
    public var strength: Double
    /// In words.
    public var sentence: String
    /// How it was computed.
    public var explanation: Explanation

    enum CodingKeys: String, CodingKey {
        case id
        case typeId = "type_id"
        case typeName = "type_name"
        case current, longest
        case loggedToday = "logged_today"
        case strength, sentence, explanation
    }
}

/// Streaks: runs of consecutive days logged, kept through marked days off, a monthly grace budget
/// and days a clock jump skipped; and Loop's exponential strength score beside them.
public enum Streaks {
    /// Loop Habit Tracker's multiplier for a daily habit (`0.5^(√1 / 13)`): half-life 13 days.
    public static let multiplier = pow(0.5, 1.0 / 13.0)

    /// The streak of `type` from its daily counts, up to `today`.
    public static func streak(
        _ type: InsightType, daily: [Int: Int], dayZones: [Int: Set<String>], today: Day, settings: InsightSettings,
        clock: DayClock
    ) -> Streak? {
        let active = daily.compactMap { $0.value > 0 && $0.key <= today.number ? $0.key : nil }.sorted()
        guard let first = active.first else { return nil }
        let skipWeekdays = Set(settings.skipWeekdays)
        let skipDays = Set(settings.skipDays.map(\.number))
        var graceUsed: [Int: Int] = [:]
        var runs: [StreakRun] = []
        var run: StreakRun?
        var pending: [StreakRun.Kept] = []  // kept since the last log
        var score = 0.0
        var nextActiveIndex = 0
        for n in first...today.number {
            let day = Day(n)
            if daily[n, default: 0] > 0 {
                nextActiveIndex += 1
                if var r = run {
                    r.kept += pending
                    r.end = day
                    r.logged += 1
                    run = r
                } else {
                    run = StreakRun(start: day, end: day, logged: 1, kept: [])
                }
                pending = []
                score = score * multiplier + (1 - multiplier)
                continue
            }
            if n == today.number { break }  // today is not over: nothing is missed yet
            guard run != nil else {
                score *= multiplier
                continue
            }
            let reason: StreakRun.Reason?
            if let last = run?.end, nextActiveIndex < active.count,
                bridged(last, Day(active[nextActiveIndex]), dayZones: dayZones, clock: clock)
            {
                reason = .clockJump
            } else if skipWeekdays.contains(day.weekday) || skipDays.contains(n) {
                reason = .skip
            } else if settings.gracePerMonth > 0,
                graceUsed[day.firstOfMonth.number, default: 0] < settings.gracePerMonth
            {
                reason = .grace
            } else {
                reason = nil
            }
            if let reason {
                if reason == .grace { graceUsed[day.firstOfMonth.number, default: 0] += 1 }
                pending.append(.init(day: day, reason: reason))
                continue  // a kept day leaves the score as it was
            }
            score *= multiplier
            if let r = run { runs.append(r) }
            for kept in pending where kept.reason == .grace { graceUsed[kept.day.firstOfMonth.number, default: 0] -= 1 }
            run = nil
            pending = []
        }
        var current: StreakRun?
        if var r = run {
            r.kept += pending
            current = r
            runs.append(r)
        }
        let longest = runs.max { a, b in a.logged != b.logged ? a.logged < b.logged : a.end < b.end }
        let loggedToday = daily[today.number, default: 0] > 0
        let days = Array(active.suffix(60)).map(Day.init)
        let explanation = Explanation(
            firstDay: Day(first), lastDay: today, n: active.count,
            method: """
                Days are local dates where each event was logged, starting at \(settings.dayStartHour):00. A run \
                continues through days marked off, up to \(settings.gracePerMonth) grace day(s) a month and days a \
                clock jump skipped; today never breaks it. Strength is Loop Habit Tracker's score: every day \
                multiplies it by 0.5^(1/13) and a logged day adds the rest, so a day's weight halves every 13 days; \
                kept days leave it as it was.
                """,
            statistic: "strength = \(InsightFormat.decimal(score, 3))", days: days)
        return Streak(
            id: "streak:\(type.id)", typeId: type.id, typeName: type.name, current: current, longest: longest,
            loggedToday: loggedToday, strength: score,
            sentence: sentence(
                type.name, current: current, longest: longest, loggedToday: loggedToday, strength: score),
            explanation: explanation)
    }

    /// Whether the days between `a` and `b` were never lived: the start of `b` where it was
    /// logged comes before the end of `a` where that was logged (for some zone of each day).
    static func bridged(_ a: Day, _ b: Day, dayZones: [Int: Set<String>], clock: DayClock) -> Bool {
        guard b.number > a.number + 1 else { return false }
        let zonesA = dayZones[a.number] ?? [""]
        let zonesB = dayZones[b.number] ?? [""]
        guard zonesA != zonesB || zonesA.count > 1 else { return false }
        for za in zonesA {
            let endA = clock.start(of: a.adding(1), zone: za.isEmpty ? nil : za)
            for zb in zonesB where clock.start(of: b, zone: zb.isEmpty ? nil : zb) < endA { return true }
        }
        return false
    }

    static func sentence(
        _ name: String, current: StreakRun?, longest: StreakRun?, loggedToday: Bool, strength: Double
    ) -> String {
        let percent = Int((strength * 100).rounded())
        guard let current else {
            let best = longest.map { "; longest \($0.logged) day\($0.logged == 1 ? "" : "s") to \($0.end.iso)" } ?? ""
            return "\(name): no streak now\(best); strength \(percent) %."
        }
        let kept = current.kept.isEmpty ? "" : " (\(current.kept.count) kept)"
        let today = loggedToday ? "" : " — log today to keep it"
        return "\(name): \(current.logged) day\(current.logged == 1 ? "" : "s") in a row since \(current.start.iso)"
            + "\(kept)\(today); strength \(percent) %."
    }
}

/// Number formatting that is the same on every platform and locale (the reports and the CLI).
public enum InsightFormat {
    /// `x` with `places` decimals.
    public static func decimal(_ x: Double, _ places: Int) -> String {
        guard x.isFinite else { return "–" }
        return Effect.decimal(x, places: places)
    }

    /// A p or q value: three significant figures, or "< 0.0001".
    public static func p(_ x: Double) -> String {
        if x < 0.0001 { return "< 0.0001" }
        return String(format: x < 0.01 ? "%.4f" : "%.3f", x)
    }
}
