/// This week so far against the same span of last week, for one type.
public struct WeekComparison: Sendable, Hashable, Codable, Identifiable {
    /// Which way it went, when a test says it moved.
    public enum Direction: String, Sendable, Hashable, Codable {
        /// More than last week, beyond chance.
        case up
        /// Fewer than last week, beyond chance.
        case down
        /// A difference chance explains.
        case same
    }

    /// `week:<type id>`.
    public var id: String
    /// The type.
    public var typeId: String
    /// Its name.
    public var typeName: String
    /// Events from Monday to now.
    public var thisWeek: Int
    /// Events from last Monday to the same moment a week ago.
    public var lastWeek: Int
    /// The days compared (Monday … today); today counts up to now on both sides.
    public var days: Int
    /// This week's count over last week's (nil when last week had none).
    public var ratio: Double?
    /// The exact binomial test's p that both spans have the same rate.
    public var p: Double
    /// Up, down, or the same.
    public var direction: Direction
    /// In words.
    public var sentence: String
    /// How it was computed.
    public var explanation: Explanation

    enum CodingKeys: String, CodingKey {
        case id
        case typeId = "type_id"
        case typeName = "type_name"
        case thisWeek = "this_week"
        case lastWeek = "last_week"
        case days, ratio, p, direction, sentence, explanation
    }

    /// The level below which a change is called up or down.
    public static let level = 0.05

    /// The comparison for `type`, nil when neither span has an event.
    public static func compare(
        _ type: InsightType, daily: [Int: Int], partial: PartialDays, today: Day
    ) -> WeekComparison? {
        let monday = today.monday
        var this = partial.today
        var last = partial.lastWeek
        var days: [Day] = [today, today.adding(-7)]
        for n in monday.number..<today.number {
            this += daily[n] ?? 0
            last += daily[n - 7] ?? 0
            days += [Day(n), Day(n - 7)]
        }
        guard this + last > 0 else { return nil }
        let p = CountTests.binomialTwoSided(this, of: this + last)
        let direction: Direction = p < level ? (this > last ? .up : .down) : .same
        let words: String
        switch direction {
        case .up: words = "up"
        case .down: words = "down"
        case .same: words = "about the same"
        }
        let sentence =
            "\(type.name): \(this) this week, \(last) by this time last week — \(words) (p = \(InsightFormat.p(p)))."
        return WeekComparison(
            id: "week:\(type.id)", typeId: type.id, typeName: type.name, thisWeek: this, lastWeek: last,
            days: monday.distance(to: today) + 1, ratio: last == 0 ? nil : Double(this) / Double(last), p: p,
            direction: direction, sentence: sentence,
            explanation: Explanation(
                firstDay: monday.adding(-7), lastDay: today, n: this + last,
                method: """
                    Like for like: Monday to now against last Monday to the same moment a week ago (today counts \
                    up to now on both sides), so both spans have the same weekdays and hours. Exact binomial test \
                    of \(this) of \(this + last) events falling in this week when both weeks have one rate; up or \
                    down only when p < \(level).
                    """,
                statistic: "rate ratio = \(last == 0 ? "–" : InsightFormat.decimal(Double(this) / Double(last), 2))",
                p: p, days: days.sorted()))
    }
}
