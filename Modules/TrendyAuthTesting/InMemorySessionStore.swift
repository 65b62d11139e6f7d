import Foundation
import Synchronization
import TrendyAuth

/// A ``SessionStore`` in memory. Counts saves; can be told to fail writes. Does not simulate
/// file permissions or corruption (the live store's tests cover those).
public final class InMemorySessionStore: SessionStore {
    let state: Mutex<(session: AuthSession?, saves: Int, failWrites: Bool)>

    /// Creates a store holding `session`.
    public init(_ session: AuthSession? = nil) { state = Mutex((session, 0, false)) }

    /// The stored session.
    public func load() -> AuthSession? { state.withLock { $0.session } }

    /// Stores the session (or throws when told to fail).
    public func save(_ session: AuthSession) throws {
        try state.withLock { s in
            if s.failWrites { throw CocoaError(.fileWriteNoPermission) }
            s.session = session
            s.saves += 1
        }
    }

    /// Removes the session.
    public func clear() throws { state.withLock { $0.session = nil } }

    /// How many saves succeeded.
    public var saveCount: Int { state.withLock { $0.saves } }

    /// Makes later writes fail.
    public func failWrites(_ fail: Bool) { state.withLock { $0.failWrites = fail } }
}
