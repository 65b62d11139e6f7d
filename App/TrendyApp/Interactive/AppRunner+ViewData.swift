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
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        calendar.firstWeekday = 2
        let now = env.now()
        let midnight = calendar.startOfDay(for: now)
        data.today = try await store.eventCount(since: midnight)
        switch ui.tab {
        case .dashboard:
            data.recent = try await store.events(limit: 5, since: nil).map(\.value)
        case .events:
            // Newest first; a filtered page reads ahead until it has a page (or the store ends).
            let wanted = (ui.page + 1) * AppUI.pageSize + 1
            var limit = wanted
            var matching: [Event] = []
            while true {
                let batch = try await store.events(limit: limit, since: nil).map(\.value)
                matching = ui.filter.map { f in batch.filter { $0.eventTypeId == f } } ?? batch
                if matching.count >= wanted || batch.count < limit || limit >= 1_000_000 { break }
                limit *= 4
            }
            let first = ui.page * AppUI.pageSize
            data.page = Array(matching.dropFirst(first).prefix(AppUI.pageSize))
            data.hasMore = matching.count > first + AppUI.pageSize
        case .calendar:
            let thisMonth = calendar.dateInterval(of: .month, for: now)?.start ?? midnight
            let month = calendar.date(byAdding: .month, value: -ui.monthOffset, to: thisMonth) ?? thisMonth
            data.month = month
            // Per day: two index-range counts, however many events the account has.
            let range = calendar.range(of: .day, in: .month, for: month) ?? 1..<29
            var counts: [Int] = []
            for day in range.lowerBound...range.upperBound {
                let date = calendar.date(byAdding: .day, value: day - 1, to: month) ?? month
                counts.append(try await store.eventCount(since: date))
            }
            for (i, day) in range.enumerated() where counts[i] - counts[i + 1] > 0 {
                data.days[day] = counts[i] - counts[i + 1]
            }
        case .analytics:
            let thisWeek = calendar.dateInterval(of: .weekOfYear, for: now)?.start ?? midnight
            let weeks = (0..<8).reversed().compactMap { calendar.date(byAdding: .weekOfYear, value: -$0, to: thisWeek) }
            data.weeks = weeks
            let names = data.typeNames
            var perType: [String: [Int]] = [:]
            for event in try await store.events(limit: 1_000_000, since: weeks.first).map(\.value) {
                guard let week = weeks.lastIndex(where: { $0 <= event.timestamp }) else { continue }
                perType[names[event.eventTypeId] ?? "?", default: Array(repeating: 0, count: weeks.count)][week] += 1
            }
            data.perWeek = perType.sorted { a, b in
                let (x, y) = (a.value.reduce(0, +), b.value.reduce(0, +))
                return x != y ? x > y : a.key < b.key
            }.map { (name: $0.key, counts: $0.value) }
        }
    }
}
