import Synchronization

/// Runs `work` and answers with its value, or with `late()` once `timeout` has passed: the work
/// is then cancelled and its result dropped. The caller never waits longer than `timeout`, even
/// for work that ignores cancellation (a stuck transport): that work is left to finish alone.
public func withDeadline<T: Sendable>(
    _ timeout: Duration, orElse late: @escaping @Sendable () -> T, _ work: @escaping @Sendable () async -> T
) async -> T {
    await withCheckedContinuation { continuation in
        let race = DeadlineRace(continuation)
        let worker = Task { race.finish(await work()) }
        race.timer = Task {
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            if race.finish(late()) { worker.cancel() }
        }
    }
}

/// Resumes a continuation once, for whichever of the work and the timer finishes first, and
/// cancels the timer when the work wins (also when the work won before the timer was set).
final class DeadlineRace<T: Sendable>: Sendable {
    struct State {
        /// Nil once someone finished.
        var continuation: CheckedContinuation<T, Never>?
        var timer: Task<Void, Never>?
    }
    let state: Mutex<State>

    init(_ continuation: CheckedContinuation<T, Never>) { state = Mutex(State(continuation: continuation)) }

    /// The timer; cancelled at once when the race is already over.
    var timer: Task<Void, Never>? {
        get { state.withLock { $0.timer } }
        set {
            let over = state.withLock { s -> Bool in
                s.timer = newValue
                return s.continuation == nil
            }
            if over { newValue?.cancel() }
        }
    }

    /// Resumes with `value` unless someone already did; returns whether this call won.
    @discardableResult
    func finish(_ value: T) -> Bool {
        let taken = state.withLock { s in s.continuation.take().map { ($0, s.timer) } }
        guard let (continuation, timer) = taken else { return false }
        timer?.cancel()
        continuation.resume(returning: value)
        return true
    }
}
