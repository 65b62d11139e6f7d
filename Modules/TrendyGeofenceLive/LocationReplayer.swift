import Foundation
import TrendyGeofence

/// What a replay did.
public struct ReplaySummary: Sendable, Hashable, Codable {
    /// Fixes fed to the monitor.
    public var fixes: Int
    /// Monitor events the fixes produced (enters, exits).
    public var events: Int
    /// Wall-clock seconds.
    public var seconds: Double

    enum CodingKeys: String, CodingKey {
        case fixes, events, seconds
    }
}

/// Feeds a track to the simulated monitor, in order. With a speed, waits between fixes for the
/// time between their timestamps divided by the speed (a one-hour track at `speed: 60` takes a
/// minute); without one, as fast as the monitor takes them. After a fix that produced events,
/// `afterEvents` runs with the last event's sequence number (the app waits there until the
/// manager has handled them, so a replay is deterministic).
public struct LocationReplayer: Sendable {
    /// Times faster than real time, or nil for no waiting.
    public var speed: Double?

    /// Creates a replayer.
    public init(speed: Double?) { self.speed = speed }

    /// Replays `fixes` into `monitor`.
    public func replay(
        _ fixes: [LocationFix], into monitor: any LocationSimulator,
        afterEvents: @Sendable (UInt64) async -> Void = { _ in }
    ) async throws -> ReplaySummary {
        let clock = ContinuousClock()
        let start = clock.now
        let first = await monitor.lastSequence
        var previous: Date?
        for fix in fixes {
            try Task.checkCancellation()
            if let speed, speed > 0, let t = fix.time, let p = previous, t > p {
                try await Task.sleep(for: .seconds(t.timeIntervalSince(p) / speed))
            }
            if let t = fix.time { previous = t }
            if let sequence = await monitor.update(fix) { await afterEvents(sequence) }
        }
        await monitor.flush()
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return ReplaySummary(fixes: fixes.count, events: Int(await monitor.lastSequence - first), seconds: seconds)
    }
}
