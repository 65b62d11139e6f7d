import Foundation
import Logging
import Synchronization
import TrendyAuth
import TrendyAuthTesting
import TrendyLogging
import TrendyTestSupport

enum Fixtures {
    static let alice = AuthUser(id: "user-a", email: "alice@example.com")
    static let bob = AuthUser(id: "user-b", email: "bob@example.com")

    static func session(_ user: AuthUser = alice, n: Int, expiresAt: Date) -> AuthSession {
        AuthSession(
            accessToken: "access-\(user.id)-\(n)", refreshToken: "refresh-\(user.id)-\(n)", expiresAt: expiresAt,
            user: user)
    }
}

struct AuthRig {
    let clock = ManualClock()
    let store: InMemorySessionStore
    let gateway = ScriptedAuthGateway()
    let logs = InMemoryLogSink()
    let auth: AuthController

    init(stored: AuthSession?) {
        store = InMemorySessionStore(stored)
        let clock = self.clock
        auth = AuthController(
            store: store, gateway: gateway, refreshMargin: 60, now: { clock.now },
            logger: LogSystem(configuration: .init(defaultLevel: .trace), sinks: [logs]).logger(.auth))
    }

    /// Another controller over the same store, gateway and clock (a fresh launch).
    func controller() -> AuthController {
        let clock = self.clock
        return AuthController(
            store: store, gateway: gateway, refreshMargin: 60, now: { clock.now },
            logger: LogSystem.disabled().logger(.auth))
    }

    /// A session whose token expires `seconds` from now.
    func session(_ user: AuthUser = Fixtures.alice, n: Int, in seconds: TimeInterval) -> AuthSession {
        Fixtures.session(user, n: n, expiresAt: clock.now.addingTimeInterval(seconds))
    }

    /// Waits (without sleeping on the wall clock for long) until `condition` holds.
    func until(_ condition: () -> Bool) async { await TrendyTestSupport.until(condition) }
}

/// Collects events from a stream in the background.
final class EventRecorder: Sendable {
    final class Box: Sendable {
        let events = Mutex<[AuthEvent]>([])
    }
    let box = Box()
    let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(_ stream: AsyncStream<AuthEvent>) {
        let box = self.box
        let t = Task {
            for await e in stream { box.events.withLock { $0.append(e) } }
        }
        task.withLock { $0 = t }
    }

    var all: [AuthEvent] { box.events.withLock { $0 } }
    func cancel() { task.withLock { $0?.cancel() } }
}
