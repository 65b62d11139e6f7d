import Foundation
import Synchronization
import TrendySync

/// A ``SyncEngine`` double for the use cases and screens built on the engine: its status and
/// history are what the test sets, each pass answers the next scripted run (or an empty `ok`
/// run), and every call is counted. No store, no server.
public final class ScriptedSyncEngine: SyncEngine {
    struct State {
        var status: SyncStatus
        var history: [SyncRun]
        var runs: [SyncRun]
        var passes = 0
        var localWrites = 0
        var observers: [UUID: AsyncStream<SyncStatus>.Continuation] = [:]
    }

    let state: Mutex<State>

    /// An engine showing `status`, with `history` (newest first) and `runs` answered by the next
    /// passes in order.
    public init(status: SyncStatus = SyncStatus(), history: [SyncRun] = [], runs: [SyncRun] = []) {
        state = Mutex(State(status: status, history: history, runs: runs))
    }

    public var status: SyncStatus { state.withLock { $0.status } }

    /// How many passes ran (``sync(full:)`` and ``skipToLatest()``).
    public var passes: Int { state.withLock { $0.passes } }

    /// How many local writes were reported.
    public var localWrites: Int { state.withLock { $0.localWrites } }

    /// Changes the status and tells every observer.
    public func setStatus(_ status: SyncStatus) {
        let observers = state.withLock { s in
            s.status = status
            return s.observers
        }
        for observer in observers.values { observer.yield(status) }
    }

    public func statusUpdates() -> AsyncStream<SyncStatus> {
        let (stream, continuation) = AsyncStream.makeStream(of: SyncStatus.self)
        let id = UUID()
        let current = state.withLock { s in
            s.observers[id] = continuation
            return s.status
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
        }
        continuation.yield(current)
        return stream
    }

    /// Nothing to load.
    public func refreshCounts() async {}

    /// The next scripted run, recorded in the history.
    public func sync(full: Bool) async -> SyncRun { pass() }

    /// The next scripted run.
    public func skipToLatest() async -> SyncRun { pass() }

    /// Counted.
    public func localWriteHappened() async { state.withLock { $0.localWrites += 1 } }

    public func history() async throws -> [SyncRun] { state.withLock { $0.history } }

    func pass() -> SyncRun {
        state.withLock { s in
            s.passes += 1
            let run =
                s.runs.isEmpty
                ? SyncRun(startedAt: Date(), duration: 0, pushed: 0, pulled: 0, outcome: .ok, error: nil)
                : s.runs.removeFirst()
            s.history.insert(run, at: 0)
            return run
        }
    }
}

/// A ``ReachabilityProbe`` that always gives the same answer, at once.
public struct FixedReachability: ReachabilityProbe {
    /// The answer.
    public var answer: Reachability
    public var budget: Duration { .seconds(2) }

    /// A probe answering `answer`.
    public init(_ answer: Reachability) { self.answer = answer }

    public func check() async -> Reachability { answer }
}
