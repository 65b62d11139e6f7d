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

/// Waits until an asynchronous `condition` holds, checking it every `interval` for at most
/// `attempts` checks; returns whether it held. For what another process or server makes true
/// (a file written, a row stored): a bound on attempts, never a guess at how long it takes.
@discardableResult
public func eventually(
    attempts: Int = 200, every interval: Duration = .milliseconds(100), _ condition: () async throws -> Bool
) async rethrows -> Bool {
    for _ in 0..<attempts {
        if try await condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try await condition()
}

/// A folder of its own under the system's temporary directory, removed with everything in it
/// when the value goes away. `create: false` leaves the folder to be made by the code under test
/// (a data directory a command must create).
public final class TemporaryDirectory: Sendable {
    /// The folder.
    public let url: URL

    /// Its path.
    public var path: String { url.path }

    /// A new, unique folder (`prefix-UUID`), created unless `create` is false.
    public init(_ prefix: String = "trendy-test", create: Bool = true) {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        if create { try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
    }

    /// Writes `text` to the file `name` in this folder (creating the folder) and returns its URL.
    public func file(_ name: String, _ text: String) throws -> URL {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let file = url.appendingPathComponent(name)
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Holds calls of one name until the test lets them go: how a fake or a recording wrapper creates
/// a race on purpose ("this request is in flight while that happens"). One copy for every
/// Testing product.
public final class CallGate: Sendable {
    struct State {
        var name: String?
        var held: [CheckedContinuation<Void, Never>] = []
    }

    let state = Mutex(State())

    /// A gate holding nothing.
    public init() {}

    /// Holds every call named `name` from now on, until ``releaseHeld()``.
    public func hold(_ name: String) { state.withLock { $0.name = name } }

    /// How many calls are waiting.
    public var heldCount: Int { state.withLock { $0.held.count } }

    /// Lets held calls go and stops holding.
    public func releaseHeld() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.name = nil
            defer { s.held = [] }
            return s.held
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns at once unless calls named `name` are held; then when they are released.
    public func pass(_ name: String) async {
        guard state.withLock({ $0.name == name }) else { return }
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let parked = state.withLock { s -> Bool in
                guard s.name == name else { return false }
                s.held.append(waiter)
                return true
            }
            if !parked { waiter.resume() }
        }
    }
}
