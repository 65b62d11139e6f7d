import TrendyModels

/// A person's day: a local date counted from 1970-01-01 (day 0), in the zone where its events
/// were logged and after the person's "day starts at" hour. Pure arithmetic on the proleptic
/// Gregorian calendar (no `Calendar`; the same conversions as the wire format's dates), so every
/// platform and the server count the same days.
public struct Day: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// Days since 1970-01-01.
    public var number: Int

    /// The day `number` days after 1970-01-01.
    public init(_ number: Int) { self.number = number }

    /// The day of a date given as year, month (1–12) and day of month.
    public init(year: Int, month: Int, day: Int) { number = ISO8601.daysFromCivil(year, month, day) }

    /// The day an ISO date (`2026-11-26`) names; nil when it is not one.
    public init?(iso text: some StringProtocol) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]), (1...12).contains(m), d >= 1,
            d <= Self.daysIn(month: m, year: y)
        else { return nil }
        self.init(year: y, month: m, day: d)
    }

    /// Year, month (1–12) and day of month.
    public var civil: (year: Int, month: Int, day: Int) { ISO8601.civil(fromDays: number) }

    /// The ISO date, `2026-11-26`; the year always has four digits (`0999-06-01`), as
    /// ``init(iso:)`` reads it (an outside tester saved a date off in the year 999 and every later
    /// read of the settings failed).
    public var iso: String {
        let (y, m, d) = civil
        let year = String(abs(y))
        return (y < 0 ? "-" : "") + String(repeating: "0", count: max(0, 4 - year.count)) + year
            + "-\(m < 10 ? "0" : "")\(m)-\(d < 10 ? "0" : "")\(d)"
    }

    /// The weekday, 0 = Monday … 6 = Sunday (1970-01-01 was a Thursday).
    public var weekday: Int { ((number % 7) + 7 + 3) % 7 }

    /// The Monday that starts this day's week.
    public var monday: Day { Day(number - weekday) }

    /// The first day of this day's month.
    public var firstOfMonth: Day {
        let (y, m, _) = civil
        return Day(year: y, month: m, day: 1)
    }

    /// The day `n` days later (earlier for negative `n`).
    public func adding(_ n: Int) -> Day { Day(number + n) }

    /// Whole days from `self` to `other`.
    public func distance(to other: Day) -> Int { other.number - number }

    /// The ISO date.
    public var description: String { iso }

    /// Orders days by date.
    public static func < (a: Day, b: Day) -> Bool { a.number < b.number }

    /// The weekday names, Monday first.
    public static let weekdayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

    /// Days in a month of a year.
    public static func daysIn(month: Int, year: Int) -> Int { ISO8601.daysInMonth(year, month) }

    /// Encodes as the ISO date.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(iso)
    }

    /// Decodes an ISO date.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let text = try c.decode(String.self)
        guard let day = Day(iso: text) else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "not an ISO date: \(text)")
        }
        self = day
    }
}
