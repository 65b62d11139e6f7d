import Foundation
import Logging
import Synchronization
import TrendyAuth
import TrendyFiles
import TrendyGeofence
import TrendyGeofenceLive
import TrendyInsights
import TrendyLogging
import TrendyModels
import TrendyOnboarding
import TrendyRouting
import TrendySync

extension AppRunner {
    /// Reads what the current screen shows from the local store.
    func viewData(route: AppRoute, ui: AppUI, sink: AsyncStream<Input>.Continuation? = nil) async -> AppViewData {
        var data = AppViewData()
        let store = env.store
        do {
            data.types = try await store.eventTypes().map(\.value).sorted {
                $0.name.localizedCaseInsensitiveCompare($1.name) == .orderedAscending
            }
            data.definitions = try await store.propertyDefinitions(ofType: nil).map(\.value)
            switch route {
            case .onboarding:
                data.onboarding = try await AppShell.onboardingFacts(env)
            case .authenticated:
                try await mainData(&data, ui, sink: sink)
            case .loading, .login, .error: break
            }
        } catch {
            log.debug("Screen read failed", metadata: ["error": .string(String(describing: error))])
        }
        return data
    }

    /// How many events there are of each type, counted (one grouped count of the time index) only
    /// when something may have changed them: a local write moves the change mark, a pass its time.
    /// With a `sink`, counts not yet known are made in the background and the screen is read again
    /// when they are in (a million rows took 100 ms: the first key on the list waited for them);
    /// meanwhile the last counts (the list moved by a few events at most), nil before the first.
    func countsByType(sink: AsyncStream<Input>.Continuation?) async throws -> [UUIDv7: Int]? {
        let store = env.store
        let key = CountKey(mark: try await store.localChangeMark(), synced: env.sync.status.lastSuccessfulSync)
        let known = counts.withLock { $0 }
        if let known, known.key == key { return known.byType }
        let count: @Sendable () async throws -> [UUIDv7: Int] = {
            try await store.eventCountsByType(from: .distantPast, to: .distantFuture)
        }
        guard let sink else {
            let byType = try await count()
            counts.withLock { $0 = (key, byType) }
            return byType
        }
        Task {
            guard let byType = try? await count() else { return }
            counts.withLock { $0 = (key, byType) }
            sink.yield(.refresh)
        }
        return known?.byType
    }

    func mainData(_ data: inout AppViewData, _ ui: AppUI, sink: AsyncStream<Input>.Continuation?) async throws {
        let store = env.store
        let calendar = ScreenCounts.calendar
        let now = env.now()
        let midnight = calendar.startOfDay(for: now)
        data.today = try await ScreenCounts.today(store, now: now, calendar: calendar)
        try await manageData(&data, ui, sink: sink)
        switch ui.tab {
        case .dashboard:
            data.recent = try await ScreenCounts.recent(store, now: now, limit: 5)
            data.insights = try await insightReport(sink: sink)
        case .events:
            // Newest first, one page and one more row (is there a next page?), from the index.
            let offset = ui.page * AppUI.pageSize
            let records: [LocalRecord<Event>]
            if let query = ui.query {
                records = try await store.eventPage(
                    offset: offset, limit: AppUI.pageSize + 1, filter: EventFilter(text: query, typeId: ui.filter))
            } else {
                records = try await store.eventPage(offset: offset, limit: AppUI.pageSize + 1, typeId: ui.filter)
            }
            data.page = Array(records.prefix(AppUI.pageSize).map(\.value))
            data.pageSync = Dictionary(records.map { ($0.value.id, $0.syncStatus) }, uniquingKeysWith: { a, _ in a })
            data.hasMore = records.count > AppUI.pageSize
            // A search is not counted (it reads the notes of every event).
            if ui.query == nil, let byType = try await countsByType(sink: sink) {
                data.total = ui.filter.map { byType[$0] ?? 0 } ?? byType.values.reduce(0, +)
            }
        case .calendar:
            let thisMonth = calendar.dateInterval(of: .month, for: now)?.start ?? midnight
            let month = calendar.date(byAdding: .month, value: -ui.monthOffset, to: thisMonth) ?? thisMonth
            data.month = month
            data.days = try await ScreenCounts.days(store, month: month, calendar: calendar)
        case .types, .places, .account: break
        case .analytics:
            data.insights = try await insightReport(sink: sink)
            // With insights, the weeks are counted by the person's days, as every line under them
            // (an outside tester saw 4 in the table and "3 this week" below it); the calendar's
            // weeks only without them (no plugin, or before the first report is in).
            let rows: [(name: String, counts: [Int])]
            if let trends = data.insights?.trends {
                data.weeks = trends.weeks.compactMap { day in
                    let (y, m, d) = day.civil
                    return calendar.date(from: DateComponents(year: y, month: m, day: d, hour: 12))
                }
                rows = trends.types.map { (name: $0.name, counts: $0.counts) }
            } else {
                let thisWeek = calendar.dateInterval(of: .weekOfYear, for: now)?.start ?? midnight
                let weeks = (0..<8).reversed().compactMap {
                    calendar.date(byAdding: .weekOfYear, value: -$0, to: thisWeek)
                }
                data.weeks = weeks
                let names = data.typeNames
                var perType: [String: [Int]] = [:]
                // Per week: one grouped count of the time index, however many events the weeks hold.
                for (week, start) in weeks.enumerated() {
                    // This week ends with it: a future-dated event is not this week's.
                    let end =
                        week + 1 < weeks.count
                        ? weeks[week + 1] : calendar.date(byAdding: .weekOfYear, value: 1, to: start) ?? start
                    for (typeId, count) in try await store.eventCountsByType(from: start, to: end) {
                        perType[names[typeId] ?? "?", default: Array(repeating: 0, count: weeks.count)][week] += count
                    }
                }
                rows = perType.map { (name: $0.key, counts: $0.value) }
            }
            data.perWeek = rows.filter { $0.counts.contains { $0 > 0 } }.sorted { a, b in
                let (x, y) = (a.counts.reduce(0, +), b.counts.reduce(0, +))
                return x != y ? x > y : a.name < b.name
            }
        }
    }
}
