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

/// Resumes a continuation once, for whichever of the work and the timer finishes first.
final class DeadlineRace<T: Sendable>: Sendable {
    let continuation: Mutex<CheckedContinuation<T, Never>?>
    let timerTask = Mutex<Task<Void, Never>?>(nil)
    let finished = Mutex(false)

    init(_ continuation: CheckedContinuation<T, Never>) { self.continuation = Mutex(continuation) }

    /// The timer, cancelled when the work wins (also when it won before the timer was set).
    var timer: Task<Void, Never>? {
        get { timerTask.withLock { $0 } }
        set {
            timerTask.withLock { $0 = newValue }
            if finished.withLock({ $0 }) { newValue?.cancel() }
        }
    }

    /// Resumes with `value` unless someone already did; returns whether this call won.
    @discardableResult
    func finish(_ value: T) -> Bool {
        guard let c = continuation.withLock({ $0.take() }) else { return false }
        finished.withLock { $0 = true }
        timer?.cancel()
        c.resume(returning: value)
        return true
    }
}
