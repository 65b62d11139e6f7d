/// Events per week (Mondays, oldest first) per type, counted by the person's days: the Analytics
/// tab's bars and the server's `/analytics/trends`, the same days as every other insight.
public struct WeeklyTrends: Sendable, Hashable, Codable {
    /// One type's counts, one per week.
    public struct TypeTrend: Sendable, Hashable, Codable {
        /// The type.
        public var typeId: String
        /// Its name.
        public var name: String
        /// Events per week, oldest first; this week's up to now.
        public var counts: [Int]

        enum CodingKeys: String, CodingKey {
            case typeId = "type_id"
            case name, counts
        }
    }

    /// The weeks' Mondays, oldest first; the last is this week's.
    public var weeks: [Day]
    /// Per type, in the report's order.
    public var types: [TypeTrend]

    /// The last `weeks` weeks of `data`.
    public static func make(_ data: InsightData, weeks: Int) -> WeeklyTrends {
        let mondays = (0..<max(1, weeks)).reversed().map { data.today.monday.adding(-7 * $0) }
        let types = data.types.map { type in
            let days = data.daily[type.id] ?? [:]
            return TypeTrend(
                typeId: type.id, name: type.name,
                counts: mondays.map { monday in
                    (0..<7).reduce(0) { sum, d in
                        monday.number + d <= data.today.number ? sum + (days[monday.number + d] ?? 0) : sum
                    }
                })
        }
        return WeeklyTrends(weeks: mondays, types: types)
    }
}
