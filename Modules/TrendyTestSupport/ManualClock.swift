import Foundation
import Synchronization

/// A clock a test moves by hand: hand `{ clock.now }` to the code under test where it would take
/// `Date.init`. One shared type for every module's tests.
///
/// ```swift
/// let clock = ManualClock()
/// let controller = AuthController(..., now: { clock.now })
/// clock.advance(3_600)
/// ```
public final class ManualClock: Sendable {
    let current: Mutex<Date>

    /// A clock at `start` (by default a fixed instant, so runs are reproducible).
    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = Mutex(start)
    }

    /// The clock's time.
    public var now: Date { current.withLock { $0 } }

    /// Moves the clock forward (or back, with a negative interval).
    public func advance(_ seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }

    /// Sets the clock.
    public func set(_ date: Date) { current.withLock { $0 = date } }
}

/// Waits until `condition` holds, checking every millisecond (and yielding in between), for at
/// most `attempts` checks; returns whether it held. For conditions that another task makes true.
@discardableResult
public func until(attempts: Int = 10_000, _ condition: () -> Bool) async -> Bool {
    for _ in 0..<attempts {
        if condition() { return true }
        await Task.yield()
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}
