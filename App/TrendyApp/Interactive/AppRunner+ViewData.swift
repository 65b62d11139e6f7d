import Foundation
import Logging
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
    func viewData(route: AppRoute, ui: AppUI) async -> AppViewData {
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
                try await mainData(&data, ui)
            case .loading, .login, .error: break
            }
        } catch {
            log.debug("Screen read failed", metadata: ["error": .string(String(describing: error))])
        }
        return data
    }

    func mainData(_ data: inout AppViewData, _ ui: AppUI) async throws {
        let store = env.store
        let calendar = ScreenCounts.calendar
        let now = env.now()
        let midnight = calendar.startOfDay(for: now)
        data.today = try await ScreenCounts.today(store, now: now, calendar: calendar)
        switch ui.tab {
        case .dashboard:
            data.recent = try await store.events(limit: 5, since: nil).map(\.value)
        case .events:
            // Newest first, one page and one more row (is there a next page?), from the index.
            let rows = try await store.eventPage(
                offset: ui.page * AppUI.pageSize, limit: AppUI.pageSize + 1, typeId: ui.filter
            ).map(\.value)
            data.page = Array(rows.prefix(AppUI.pageSize))
            data.hasMore = rows.count > AppUI.pageSize
        case .calendar:
            let thisMonth = calendar.dateInterval(of: .month, for: now)?.start ?? midnight
            let month = calendar.date(byAdding: .month, value: -ui.monthOffset, to: thisMonth) ?? thisMonth
            data.month = month
            data.days = try await ScreenCounts.days(store, month: month, calendar: calendar)
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
