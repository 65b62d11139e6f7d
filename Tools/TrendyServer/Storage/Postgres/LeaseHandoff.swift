import PostgresNIO
import Synchronization

/// Hands a connection from the task that holds its lease to the request that uses it, so the
/// request can stop waiting for a connection after a deadline. PostgresNIO's pool keeps a lease
/// request waiting while it retries connecting (about a minute, until its circuit breaker
/// trips); a request should rather fail at once with "unavailable" and let the client retry.
///
/// The holder task runs `client.withConnection { connection in … }`: it delivers the connection
/// and waits, inside the closure, until the user releases it — so the lease stays the pool's
/// and ends the normal way.
final class LeaseHandoff: Sendable {
    private enum Phase {
        /// Nothing yet; the user may be waiting.
        case waiting(CheckedContinuation<PostgresConnection, any Error>?)
        /// The connection is the user's until `release()`.
        case handedOver
        /// The user gave up (deadline) or is done: a late connection goes straight back.
        case finished
    }

    private struct State {
        var phase = Phase.waiting(nil)
        var early: Result<PostgresConnection, any Error>?
        var holder: CheckedContinuation<Void, Never>?
        var released = false
        /// The deadline's timer, cancelled once the wait is over (no sleeping task per request).
        var timer: Task<Void, Never>?
    }

    private let state = Mutex(State())

    /// The holder: the lease's connection is here. False when the user already gave up (the
    /// holder then returns at once, ending the lease).
    func deliver(_ connection: PostgresConnection) -> Bool {
        let waiter: CheckedContinuation<PostgresConnection, any Error>?? = state.withLock { s in
            switch s.phase {
            case .waiting(let waiter):
                s.phase = .handedOver
                if waiter == nil { s.early = .success(connection) }
                s.timer?.cancel()
                return .some(waiter)
            case .handedOver, .finished:
                return .none
            }
        }
        guard let waiter else { return false }
        waiter?.resume(returning: connection)
        return true
    }

    /// The holder: no connection came (the pool failed the lease).
    func fail(_ error: any Error) {
        let waiter: CheckedContinuation<PostgresConnection, any Error>? = state.withLock { s in
            guard case .waiting(let waiter) = s.phase else { return nil }
            s.phase = .finished
            if waiter == nil { s.early = .failure(error) }
            s.timer?.cancel()
            return waiter
        }
        waiter?.resume(throwing: error)
    }

    /// The holder: waits until the user releases the connection.
    func heldUntilReleased() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s in
                if s.released { return true }
                s.holder = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// The user: the connection, or `StoreError.unavailable` when none came by the deadline
    /// (`onTimeout` then runs, to cancel the holder's lease request).
    func connection(within limit: Duration, onTimeout: @escaping @Sendable () -> Void) async throws
        -> PostgresConnection
    {
        try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<PostgresConnection, any Error>) in
            let early: Result<PostgresConnection, any Error>? = state.withLock { s in
                if let early = s.early { return early }
                s.phase = .waiting(continuation)
                return nil
            }
            if let early {
                continuation.resume(with: early)
                return
            }
            let timer = Task { [self] in
                do { try await Task.sleep(for: limit) } catch { return }
                let waiter: CheckedContinuation<PostgresConnection, any Error>? = state.withLock { s in
                    guard case .waiting(let waiter) = s.phase else { return nil }
                    s.phase = .finished
                    return waiter
                }
                guard let waiter else { return }
                onTimeout()
                waiter.resume(
                    throwing: StoreError.unavailable("no database connection within \(limit.components.seconds) s"))
            }
            // Kept so that a connection arriving first cancels it; if the wait already ended
            // (a race with `deliver`), cancelled at once.
            let over = state.withLock { s in
                guard case .waiting = s.phase else { return true }
                s.timer = timer
                return false
            }
            if over { timer.cancel() }
        }
    }

    /// The user is done with the connection: the holder ends the lease.
    func release() {
        let holder = state.withLock { s in
            s.released = true
            defer { s.holder = nil }
            return s.holder
        }
        holder?.resume()
    }
}
