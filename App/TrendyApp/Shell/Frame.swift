import Foundation

/// One rendered frame: what the app showed, and when.
public struct Frame: Codable, Sendable, Equatable {
    /// 1 for the first frame.
    public var index: Int
    /// The route (`authenticated`, `onboarding(welcome)`, `login`, `loading`).
    public var route: String
    /// The screen (`dashboard`, `events`, `onboarding.welcome`, `login`, `loading`).
    public var screen: String
    /// The sync banner, on the main tabs.
    public var banner: String?
    /// Milliseconds since the program's `main` started.
    public var elapsedMs: Double
    /// The screen as text.
    public var text: String

    enum CodingKeys: String, CodingKey {
        case index, route, screen, banner, text
        case elapsedMs = "elapsed_ms"
    }
}

/// The main tabs.
public enum MainTab: String, CaseIterable, Codable, Sendable {
    /// Today and recent events.
    case dashboard
    /// The event list.
    case events
    /// The month, with a count per day.
    case calendar
    /// Counts per type over the last 30 days.
    case analytics
    /// The event types: add, rename, delete.
    case types
    /// The places (geofences) and their visits.
    case places
    /// Who is signed in, conflicts, failed changes; sign out, switch account, change password.
    case account

    /// The tab's title.
    var title: String { rawValue.prefix(1).uppercased() + rawValue.dropFirst() }
}

/// When the program's `main` started, carried to the commands as a task-local value (set once by
/// the executable, read by `trendy launch`; not global state). Falls back to "now".
public enum LaunchClock {
    /// The instant `main` started.
    @TaskLocal public static var mainStarted: ContinuousClock.Instant?
    /// The route a launch decided before its arguments were parsed (``TrendyCommand/start(_:)``).
    @TaskLocal static var early: AppLaunch.EarlyDecision?

    /// Milliseconds since `start`.
    static func milliseconds(since start: ContinuousClock.Instant) -> Double {
        let d = ContinuousClock.now - start
        return Double(d.components.seconds) * 1_000 + Double(d.components.attoseconds) / 1e15
    }
}
