import Foundation
import TrendyAuth
import TrendyInsights
import TrendySync

/// Insights as the CLI and the app ask for them: one copy of "the report now" and "explain one".
enum InsightActions {
    /// The report at `now` for a person in the device's zone; `zone` (another IANA zone) counts
    /// every day in it instead, from the events (the aggregates are kept in the saved settings').
    static func report(_ env: AppEnvironment, zone: String? = nil, now: Date? = nil) async throws -> InsightReport {
        let store = try env.requireInsights()
        var settings = try await store.settings()
        let at = now ?? env.now()
        let data: InsightData
        if let zone, zone != settings.timeZone {
            settings.timeZone = zone
            data = try await store.scan(now: at, zone: zone, settings: settings)
        } else {
            data = try await store.data(now: at, zone: env.timeZone, typeId: nil)
        }
        var report = Insights.report(data, settings: settings, cache: store.zones)
        report.incomplete = try await incompleteness(env, store)
        return report
    }

    /// Why a report now counts only part of the person's history, if it does: this device has
    /// not finished its first download (an outsider saw a 183-day streak that was really 401,
    /// with no word), or is still counting what it downloaded (D67).
    static func incompleteness(_ env: AppEnvironment, _ store: any InsightStore) async throws -> String? {
        if env.auth.currentSession != nil, try await !env.store.historyDownloaded() {
            return "This device has not finished downloading your history (`trendy sync`): "
                + "these figures count only the events it holds so far."
        }
        if try await !store.countsEveryEvent() {
            return "This device is still counting the history it downloaded: these figures count part of it."
        }
        return nil
    }

    /// The insight `id` recomputed twice, from the aggregates and from the events one by one.
    static func explain(_ env: AppEnvironment, id: String, now: Date? = nil) async throws -> Explained? {
        let store = try env.requireInsights()
        let settings = try await store.settings()
        let at = now ?? env.now()
        let fast = Insights.report(
            try await store.data(now: at, zone: env.timeZone, typeId: nil), settings: settings, cache: store.zones)
        let slow = Insights.report(
            try await store.scan(now: at, zone: env.timeZone, settings: settings), settings: settings,
            cache: store.zones)
        guard let a = fast.explanation(of: id) else { return nil }
        let b = slow.explanation(of: id)
        return Explained(
            id: id, sentence: a.sentence, explanation: a.explanation,
            agrees: b?.explanation == a.explanation && b?.sentence == a.sentence,
            incomplete: try await incompleteness(env, store))
    }

    /// One insight's working.
    struct Explained: Encodable {
        /// Its id.
        var id: String
        /// What it says.
        var sentence: String
        /// How it was computed.
        var explanation: Explanation
        /// Whether recomputing it from the events one by one gave the same.
        var agrees: Bool
        /// Why the aggregates count part of the history now, if they do (``incompleteness(_:_:)``):
        /// then a difference is the counting under way, not damage.
        var incomplete: String?
    }
}

extension AppEnvironment {
    /// Insights, or a clear error when this program is built without them.
    func requireInsights() throws(CLIError) -> any InsightStore {
        guard let insights else { throw .featureUnavailable("this program is built without insights") }
        return insights
    }
}
