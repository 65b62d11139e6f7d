import Foundation

/// When in the day and the week a type is logged.
public struct TimePattern: Sendable, Hashable, Codable, Identifiable {
    /// `pattern:<type id>`.
    public var id: String
    /// The type.
    public var typeId: String
    /// Its name.
    public var typeName: String
    /// Events counted.
    public var n: Int
    /// Per weekday (Monday first) × hour: events; the 7 × 24 heat row.
    public var slots: [Int]
    /// Night [0, 6), morning [6, 12), afternoon [12, 18), evening [18, 24): events.
    public var partsOfDay: [Int]
    /// The hour with the most events.
    public var peakHour: Int
    /// The mean hour on a 24-hour circle (23:50 and 00:20 average to 00:05, not noon).
    public var meanHour: Int
    /// How concentrated the hours are, 0 (spread round the clock) to 1 (always the same hour):
    /// the mean resultant length of the hours on a 24-hour circle.
    public var consistency: Double
    /// The Rayleigh test's p that the hours are spread evenly.
    public var hourP: Double
    /// Per weekday: events per such day in the window.
    public var weekdayRates: [Double]
    /// The weekday with the highest rate (0 = Monday).
    public var peakWeekday: Int
    /// The chi-square test's p that every weekday has one rate.
    public var weekdayP: Double
    /// In words.
    public var sentence: String
    /// How it was computed.
    public var explanation: Explanation

    enum CodingKeys: String, CodingKey {
        case id
        case typeId = "type_id"
        case typeName = "type_name"
        case n, slots
        case partsOfDay = "parts_of_day"
        case peakHour = "peak_hour"
        case meanHour = "mean_hour"
        case consistency
        case hourP = "hour_p"
        case weekdayRates = "weekday_rates"
        case peakWeekday = "peak_weekday"
        case weekdayP = "weekday_p"
        case sentence, explanation
    }

    /// Fewer events than this say nothing about time.
    public static let minimumEvents = 10
    /// A pattern is named only below this p.
    public static let level = 0.01
    /// The names of the parts of the day.
    public static let partNames = ["night", "morning", "afternoon", "evening"]

    /// The pattern of `type`, nil with fewer than ``minimumEvents`` events.
    public static func pattern(_ type: InsightType, slots: [Int], daily: [Int: Int], today: Day) -> TimePattern? {
        let n = slots.reduce(0, +)
        guard n >= minimumEvents, slots.count == 168 else { return nil }
        var hours = Array(repeating: 0, count: 24)
        for (i, c) in slots.enumerated() { hours[i % 24] += c }
        let parts = (0..<4).map { part in hours[(part * 6)..<(part * 6 + 6)].reduce(0, +) }
        let peakHour = hours.indices.max { hours[$0] < hours[$1] } ?? 0
        var x = 0.0
        var y = 0.0
        for (h, c) in hours.enumerated() {
            let angle = 2 * Double.pi * (Double(h) + 0.5) / 24
            x += Double(c) * cos(angle)
            y += Double(c) * sin(angle)
        }
        let r = (x * x + y * y).squareRoot() / Double(n)
        var mean = atan2(y, x) * 24 / (2 * Double.pi) - 0.5
        if mean < 0 { mean += 24 }
        let meanHour = Int(mean.rounded()) % 24
        let hourP = CountTests.rayleigh(n: n, r: r)
        // Weekdays: complete days from the first logged day to yesterday.
        let first = daily.filter { $0.value > 0 }.keys.min() ?? today.number
        var counts = Array(repeating: 0.0, count: 7)
        var daysOf = Array(repeating: 0.0, count: 7)
        if first < today.number {
            for d in first..<today.number {
                let w = Day(d).weekday
                daysOf[w] += 1
                counts[w] += Double(daily[d] ?? 0)
            }
        }
        let total = counts.reduce(0, +)
        let span = daysOf.reduce(0, +)
        let rates = (0..<7).map { daysOf[$0] == 0 ? 0 : counts[$0] / daysOf[$0] }
        var chi = 0.0
        if total > 0, span >= 14 {
            for w in 0..<7 where daysOf[w] > 0 {
                let expected = total * daysOf[w] / span
                chi += (counts[w] - expected) * (counts[w] - expected) / expected
            }
        }
        let weekdayP = total > 0 && span >= 14 ? CountTests.chiSquareTail(chi, degreesOfFreedom: 6) : 1
        let peakWeekday = rates.indices.max { rates[$0] < rates[$1] } ?? 0
        var words: [String] = []
        if hourP < level {
            // The part of the day that holds the most events, "mostly" only past half of them;
            // "around" the mean hour only when the hours gather round it.
            let top = parts.indices.max { parts[$0] < parts[$1] } ?? 0
            let share = Int((Double(parts[top]) * 100 / Double(n)).rounded())
            let around = r >= 0.5 ? ", around \(meanHour):00" : ""
            words.append(
                (parts[top] * 2 > n
                    ? "mostly in the \(partNames[top]) (\(share) %)"
                    : "most often in the \(partNames[top]) (\(share) %)")
                    + around + " (consistency \(Int((r * 100).rounded())) %)")
        } else {
            words.append("at no particular time of day")
        }
        if weekdayP < level {
            words.append(
                "most on \(Day.weekdayNames[peakWeekday])s (\(InsightFormat.decimal(rates[peakWeekday], 1)) a day)")
        }
        return TimePattern(
            id: "pattern:\(type.id)", typeId: type.id, typeName: type.name, n: n, slots: slots, partsOfDay: parts,
            peakHour: peakHour, meanHour: meanHour, consistency: r, hourP: hourP, weekdayRates: rates,
            peakWeekday: peakWeekday,
            weekdayP: weekdayP, sentence: "\(type.name): " + words.joined(separator: "; ") + ".",
            explanation: Explanation(
                firstDay: Day(first), lastDay: today, n: n,
                method: """
                    Hours are wall-clock hours where each event was logged; parts of the day are half-open \
                    ([0, 6) is night). Consistency is the mean resultant length of the hours on a 24-hour circle, \
                    tested with Rayleigh's test; weekdays compare events per such day from the first log to \
                    yesterday with a chi-square test (6 degrees of freedom). A pattern is named only at \
                    p < \(level) with at least \(minimumEvents) events.
                    """,
                statistic:
                    "consistency = \(InsightFormat.decimal(r, 2)), weekday chi-square = \(InsightFormat.decimal(chi, 1))",
                p: min(hourP, weekdayP)))
    }
}
