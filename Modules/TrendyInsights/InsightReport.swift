/// The one line the dashboard shows: the strongest insight there is.
public struct Headline: Sendable, Hashable, Codable {
    /// The insight's id (for `trendy insights explain`).
    public var id: String
    /// The line.
    public var sentence: String
}

/// Every insight for one person on one day.
public struct InsightReport: Sendable, Hashable, Codable {
    /// The person's day the report is for.
    public var today: Day
    /// The settings it was computed with.
    public var settings: InsightSettings
    /// Streaks, one per type logged.
    public var streaks: [Streak]
    /// This week against last, per type logged in either.
    public var weeks: [WeekComparison]
    /// Time-of-day and weekday patterns, per type with enough events.
    public var patterns: [TimePattern]
    /// Correlations, the whole family.
    public var correlations: CorrelationReport
    /// Events per week per type, the last ``Insights/trendWeeks`` weeks.
    public var trends: WeeklyTrends
    /// The strongest insight, when there is one.
    public var headline: Headline?
    /// Why the report counts only part of the person's history, when it does (set by the app:
    /// the device has not finished downloading it, or is still counting it).
    public var incomplete: String?

    /// Every insight's id and sentence, in the report's order (the CLI lists these).
    public var sentences: [(id: String, sentence: String)] {
        streaks.map { ($0.id, $0.sentence) } + weeks.map { ($0.id, $0.sentence) }
            + patterns.map { ($0.id, $0.sentence) } + correlations.findings.map { ($0.id, $0.effect.sentence) }
    }

    /// The explanation of the insight `id`, nil when there is none by that id.
    public func explanation(of id: String) -> (sentence: String, explanation: Explanation)? {
        if let s = streaks.first(where: { $0.id == id }) { return (s.sentence, s.explanation) }
        if let w = weeks.first(where: { $0.id == id }) { return (w.sentence, w.explanation) }
        if let p = patterns.first(where: { $0.id == id }) { return (p.sentence, p.explanation) }
        if let c = correlations.tests.first(where: { $0.id == id }) {
            return (
                c.effect.sentence,
                Explanation(
                    firstDay: correlations.firstDay,
                    lastDay: correlations.firstDay.adding(max(0, correlations.days - 1)),
                    n: c.n, method: correlations.method,
                    statistic: "r = \(InsightFormat.decimal(c.r, 3)) (raw r = \(InsightFormat.decimal(c.rawR, 3)))",
                    p: c.p, q: c.q, testsRun: correlations.testsRun, days: c.days)
            )
        }
        return nil
    }

    enum CodingKeys: String, CodingKey {
        case today, settings, streaks, weeks, patterns, correlations, trends, headline, incomplete
    }
}

/// Computes a person's insights from their ``InsightData``: pure and deterministic, the same on
/// the device (from its aggregates) and on the server (from the events).
public enum Insights {
    /// The weeks of the report's trends.
    public static let trendWeeks = 8

    /// Correlations look at no more than this many recent days.
    public static let correlationWindow = 365

    /// The report for `data` under `settings` (without correlations when `correlate` is false).
    public static func report(
        _ data: InsightData, settings: InsightSettings, correlation: CorrelationSettings = .standard,
        correlate: Bool = true, cache: ZoneOffsetCache = ZoneOffsetCache()
    ) -> InsightReport {
        let clock = settings.clock(cache: cache)
        let today = data.today
        var streaks: [Streak] = []
        var weeks: [WeekComparison] = []
        var patterns: [TimePattern] = []
        for type in data.types {
            let daily = data.daily[type.id] ?? [:]
            if let s = Streaks.streak(
                type, daily: daily, dayZones: data.dayZones[type.id] ?? [:], today: today, settings: settings,
                clock: clock)
            {
                streaks.append(s)
            }
            if let w = WeekComparison.compare(
                type, daily: daily, partial: data.partial[type.id] ?? PartialDays(), today: today)
            {
                weeks.append(w)
            }
            if let p = TimePattern.pattern(
                type, slots: data.hours[type.id] ?? Array(repeating: 0, count: 168), daily: daily, today: today)
            {
                patterns.append(p)
            }
        }
        let (series, first) = correlate ? correlationSeries(data) : ([], today)
        let correlations = Correlations.run(series, firstDay: first, settings: correlation)
        let report = InsightReport(
            today: today, settings: settings, streaks: streaks, weeks: weeks, patterns: patterns,
            correlations: correlations, trends: .make(data, weeks: trendWeeks), headline: nil)
        var out = report
        out.headline = headline(report)
        return out
    }

    /// The series correlations test: every day from the first with data to the last (at most the
    /// last ``correlationWindow`` days), one per type and one per numeric property.
    public static func correlationSeries(_ data: InsightData) -> (series: [DailySeries], firstDay: Day) {
        var firstDay = Int.max
        var lastDay = Int.min
        for type in data.types {
            for (d, c) in data.daily[type.id] ?? [:] where c > 0 && d <= data.today.number {
                firstDay = min(firstDay, d)
                lastDay = max(lastDay, d)
            }
        }
        guard firstDay <= lastDay else { return ([], data.today) }
        firstDay = max(firstDay, lastDay - correlationWindow + 1)
        let count = lastDay - firstDay + 1
        var series: [DailySeries] = []
        for type in data.types {
            let days = data.daily[type.id] ?? [:]
            let values = (0..<count).map { Double(days[firstDay + $0] ?? 0) }
            series.append(
                DailySeries(
                    id: "type:\(type.id)", label: type.name, unit: nil, kind: .type(typeId: type.id), values: values))
        }
        let names = Dictionary(data.types.map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a })
        for property in data.properties {
            guard let days = data.propertyDaily[property.seriesId], let typeName = names[property.typeId] else {
                continue
            }
            let hours = property.kind == "duration"
            let values = (0..<count).map { i -> Double in
                guard let v = days[firstDay + i], v.n > 0 else { return .nan }
                return hours ? v.mean / 3600 : v.mean
            }
            series.append(
                DailySeries(
                    id: property.seriesId, label: "\(typeName)'s \(property.label)", unit: hours ? "hours" : nil,
                    kind: .property(typeId: property.typeId, key: property.key), values: values))
        }
        return (series, Day(firstDay))
    }

    /// The strongest insight: a correlation finding, else a week that moved, else the longest
    /// streak still going (3 days or more); nil when there is none.
    public static func headline(_ report: InsightReport) -> Headline? {
        if let c = report.correlations.findings.first {
            return Headline(id: c.id, sentence: c.effect.sentence)
        }
        if let w = report.weeks.filter({ $0.direction != .same }).min(by: { $0.p < $1.p }) {
            return Headline(id: w.id, sentence: w.sentence)
        }
        if let s = report.streaks.filter({ ($0.current?.logged ?? 0) >= 3 }).max(by: {
            ($0.current?.logged ?? 0) < ($1.current?.logged ?? 0)
        }) {
            return Headline(id: s.id, sentence: s.sentence)
        }
        return nil
    }
}
