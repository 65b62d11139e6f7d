import Foundation
import Synchronization
import TrendySync

/// The engine's status: a lock-protected snapshot plus a broadcast to every listener.
final class StatusBroadcaster: Sendable {
    struct State {
        var status = SyncStatus()
        var listeners: [UUID: AsyncStream<SyncStatus>.Continuation] = [:]
    }

    let state = Mutex(State())

    var current: SyncStatus { state.withLock { $0.status } }

    func update(_ change: (inout SyncStatus) -> Void) {
        state.withLock { s in
            var next = s.status
            change(&next)
            guard next != s.status else { return }
            s.status = next
            for c in s.listeners.values { c.yield(next) }
        }
    }

    func stream() -> AsyncStream<SyncStatus> {
        let (stream, continuation) = AsyncStream.makeStream(of: SyncStatus.self, bufferingPolicy: .bufferingNewest(64))
        let id = UUID()
        state.withLock { s in
            continuation.yield(s.status)
            s.listeners[id] = continuation
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.listeners.removeValue(forKey: id) }
        }
        return stream
    }
}
