import Foundation
import Logging
import Synchronization
import TrendyAuth
import TrendyFiles
import TrendyGeofence
import TrendyGeofenceLive
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

    /// How many events the list holds ("page 2 of 14"), counted in the time index only when
    /// something may have changed it: a local write moves the change mark, a pass its time. With a
    /// `sink`, a count not yet known is made in the background and the screen is read again when
    /// it is in (a million rows took 100 ms: the first key on the list waited for it); nil meanwhile.
    func total(of filter: UUIDv7?, sink: AsyncStream<Input>.Continuation?) async throws -> Int? {
        let store = env.store
        let key = TotalKey(
            filter: filter, mark: try await store.localChangeMark(), synced: env.sync.status.lastSuccessfulSync)
        let known = totals.withLock { $0 }
        if let known, known.key == key { return known.total }
        let count: @Sendable () async throws -> Int = {
            if let filter {
                return try await store.eventCountsByType(from: .distantPast, to: .distantFuture)[filter] ?? 0
            }
            return try await store.eventCount(from: .distantPast, to: .distantFuture)
        }
        guard let sink else {
            let total = try await count()
            totals.withLock { $0 = (key, total) }
            return total
        }
        Task {
            guard let total = try? await count() else { return }
            totals.withLock { $0 = (key, total) }
            sink.yield(.refresh)
        }
        // The last count while the new one is made (the list moved by a few events at most).
        return known?.key.filter == filter ? known?.total : nil
    }

    func mainData(_ data: inout AppViewData, _ ui: AppUI, sink: AsyncStream<Input>.Continuation?) async throws {
        let store = env.store
        let calendar = ScreenCounts.calendar
        let now = env.now()
        let midnight = calendar.startOfDay(for: now)
        data.today = try await ScreenCounts.today(store, now: now, calendar: calendar)
        try await manageData(&data, ui)
        switch ui.tab {
        case .dashboard:
            data.recent = try await ScreenCounts.recent(store, now: now, limit: 5)
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
            data.total = ui.query == nil ? try await total(of: ui.filter, sink: sink) : nil
        case .calendar:
            let thisMonth = calendar.dateInterval(of: .month, for: now)?.start ?? midnight
            let month = calendar.date(byAdding: .month, value: -ui.monthOffset, to: thisMonth) ?? thisMonth
            data.month = month
            data.days = try await ScreenCounts.days(store, month: month, calendar: calendar)
        case .types, .places, .account: break
        case .analytics:
            let thisWeek = calendar.dateInterval(of: .weekOfYear, for: now)?.start ?? midnight
            let weeks = (0..<8).reversed().compactMap { calendar.date(byAdding: .weekOfYear, value: -$0, to: thisWeek) }
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
            data.perWeek = perType.sorted { a, b in
                let (x, y) = (a.value.reduce(0, +), b.value.reduce(0, +))
                return x != y ? x > y : a.key < b.key
            }.map { (name: $0.key, counts: $0.value) }
        }
    }
}
