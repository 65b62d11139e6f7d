import Foundation
import Hummingbird
import TrendyAPI
import TrendyInsights
import TrendyModels

/// Trendy's insight and analytics routes, computed by the same module the device uses
/// (``Insights``), from the user's events read a page at a time: `GET /insights`,
/// `/insights/streaks`, `/insights/weekly-summary`, `/insights/correlations`,
/// `/analytics/summary`, `/analytics/trends`. Query: `time_zone` (IANA, default UTC: the zone for
/// events logged without one and the one "today" is in), `day_start` (0–12), `now` (RFC 3339,
/// for a reproducible answer), and for trends `weeks` (1–104).
extension APIRoutes {
    func insights(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        try JSONIO.response(try await insightReport(request))
    }

    func insightStreaks(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        try JSONIO.response(["streaks": try await insightReport(request).streaks])
    }

    func insightWeeks(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        try JSONIO.response(["weeks": try await insightReport(request).weeks])
    }

    func insightCorrelations(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        try JSONIO.response(try await insightReport(request).correlations)
    }

    func analyticsSummary(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let (data, settings) = try await insightData(request)
        let types = data.types.map { type -> AnalyticsSummary.TypeTotal in
            let days = data.daily[type.id] ?? [:]
            let active = days.filter { $0.value > 0 }
            return .init(
                typeId: type.id, name: type.name, count: active.values.reduce(0, +),
                firstDay: active.keys.min().map(Day.init), lastDay: active.keys.max().map(Day.init))
        }
        let report = Insights.report(data, settings: settings, cache: insightZones)
        return try JSONIO.response(
            AnalyticsSummary(
                today: data.today, totalEvents: types.map(\.count).reduce(0, +), types: types,
                headline: report.headline))
    }

    func analyticsTrends(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let weeks = try Self.intParameter(request, "weeks", in: 1...104) ?? 12
        let (data, _) = try await insightData(request)
        return try JSONIO.response(WeeklyTrends.make(data, weeks: weeks))
    }

    func insightReport(_ request: Request) async throws -> InsightReport {
        let (data, settings) = try await insightData(request)
        return Insights.report(data, settings: settings, cache: insightZones)
    }

    /// The user's data from every event, with the request's settings.
    func insightData(_ request: Request) async throws -> (InsightData, InsightSettings) {
        let user = try await guardian.userId(request)
        let query = request.uri.queryParameters
        let zone = query.get("time_zone").map { String($0) } ?? "UTC"
        guard Event.isZoneName(zone), ZoneOffsets.known(zone) != nil else {
            throw ProblemError.malformed("time_zone must be an IANA time zone such as Europe/Berlin")
        }
        let dayStart = try Self.intParameter(request, "day_start", in: 0...12) ?? 0
        var now = self.now()
        if let text = query.get("now") {
            guard let date = TrendyJSON.parseDate(String(text)) else {
                throw ProblemError.malformed("invalid now format, use RFC 3339 (2026-03-14T09:30:00Z)")
            }
            now = date
        }
        var settings = InsightSettings(
            timeZone: zone, dayStartHour: dayStart,
            gracePerMonth: try Self.intParameter(request, "grace_per_month", in: 0...31) ?? 0)
        if let list = query.get("skip_weekdays"), !list.isEmpty {
            settings.skipWeekdays = try list.split(separator: ",", omittingEmptySubsequences: false).map { part in
                guard let n = Int(String(part)), (0...6).contains(n) else {
                    throw ProblemError.malformed("skip_weekdays must be weekdays 0 (Monday) to 6, separated by commas")
                }
                return n
            }
        }
        if let list = query.get("skip_days"), !list.isEmpty {
            settings.skipDays = try list.split(separator: ",", omittingEmptySubsequences: false).map { part in
                guard let day = Day(iso: part) else {
                    throw ProblemError.malformed("skip_days must be dates (YYYY-MM-DD) separated by commas")
                }
                return day
            }
        }
        if let problem = settings.issues.first { throw ProblemError.malformed(problem) }
        let types = try await store.listEventTypes(userId: user).map {
            InsightType(id: $0.value.id.description, name: $0.value.name)
        }
        .sorted { ($0.name.lowercased(), $0.id) < ($1.name.lowercased(), $1.id) }
        let properties = try await store.listPropertyDefinitions(userId: user, typeId: nil).map(\.value)
            .filter { $0.propertyType == .number || $0.propertyType == .duration }
            .sorted {
                ($0.eventTypeId.description, $0.displayOrder, $0.key) < (
                    $1.eventTypeId.description, $1.displayOrder, $1.key
                )
            }
            .map {
                InsightProperty(
                    typeId: $0.eventTypeId.description, key: $0.key, label: $0.label, kind: $0.propertyType.rawValue)
            }
        var builder = InsightData.Builder(
            types: types, properties: properties, clock: settings.clock(cache: insightZones),
            now: InsightData.Builder.milliseconds(now), nowZone: zone)
        let decoder = TrendyJSON.decoder()
        var key: EventPageKey?
        repeat {
            let page = try await store.exportPage(
                userId: user, after: key, limit: Self.exportPage, range: nil, typeIds: [])
            for body in page.bodies {
                let event = try decoder.decode(Event.self, from: Data(body.utf8))
                var values: [String: Double] = [:]
                for (k, v) in event.properties {
                    switch v {
                    case .number(let x), .duration(let x): values[k] = x
                    default: break
                    }
                }
                builder.add(
                    typeId: event.eventTypeId.description,
                    milliseconds: InsightData.Builder.milliseconds(event.timestamp),
                    zone: event.timeZone, values: values)
            }
            key = page.next
        } while key != nil
        return (builder.data, settings)
    }

    static func intParameter(_ request: Request, _ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = request.uri.queryParameters.get(name) else { return nil }
        guard let n = Int(String(text)), range.contains(n) else {
            throw ProblemError.malformed(
                "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return n
    }
}

/// `GET /analytics/summary`.
struct AnalyticsSummary: Encodable {
    struct TypeTotal: Encodable {
        var typeId: String
        var name: String
        var count: Int
        var firstDay: Day?
        var lastDay: Day?
        enum CodingKeys: String, CodingKey {
            case typeId = "type_id"
            case name, count
            case firstDay = "first_day"
            case lastDay = "last_day"
        }
    }
    var today: Day
    var totalEvents: Int
    var types: [TypeTotal]
    var headline: Headline?
    enum CodingKeys: String, CodingKey {
        case today
        case totalEvents = "total_events"
        case types, headline
    }
}
