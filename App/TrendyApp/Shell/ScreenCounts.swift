import Foundation
import TrendyModels
import TrendySync

/// The counts the screens show, from bounded ranges of the store's time index: a day's count
/// costs that day's events, never the account's (a launch on the calendar tab of a 290,000-event
/// install read every event after the first of the month, 3.4 s, and the running app did it again
/// on every sync progress update).
enum ScreenCounts {
    /// The calendar's days (Monday first), in the device's time zone.
    static var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        calendar.firstWeekday = 2
        return calendar
    }

    /// Events today: from midnight to the next (a future event is not today's).
    static func today(_ store: any LocalStore, now: Date, calendar: Calendar = calendar) async throws -> Int {
        let midnight = calendar.startOfDay(for: now)
        let tomorrow = calendar.date(byAdding: .day, value: 1, to: midnight) ?? midnight.addingTimeInterval(86_400)
        return try await store.eventCount(from: midnight, to: tomorrow)
    }

    /// The newest `limit` events up to `now`: an event dated tomorrow is not "recent" (it sat on
    /// top of the dashboard, above the one just logged). Two reads of the time index.
    static func recent(_ store: any LocalStore, now: Date, limit: Int) async throws -> [Event] {
        let future = try await store.eventCount(from: now.addingTimeInterval(0.001), to: .distantFuture)
        return try await store.eventPage(offset: future, limit: limit, typeId: nil).map(\.value)
    }

    /// Events per day of the month that starts at `month`, the days without events left out.
    static func days(_ store: any LocalStore, month: Date, calendar: Calendar = calendar) async throws -> [Int: Int] {
        let range = calendar.range(of: .day, in: .month, for: month) ?? 1..<29
        var days: [Int: Int] = [:]
        for day in range {
            guard let start = calendar.date(byAdding: .day, value: day - 1, to: month),
                let end = calendar.date(byAdding: .day, value: day, to: month)
            else { continue }
            let count = try await store.eventCount(from: start, to: end)
            if count > 0 { days[day] = count }
        }
        return days
    }
}
