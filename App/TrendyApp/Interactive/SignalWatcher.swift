import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Signals delivered as events instead of their default actions, while the app runs: a
/// `sigaction` handler writes the signal's number to a pipe (all it may do), a thread reads the
/// pipe and calls `handler`. The pipe's write end is the one process-wide value here — a signal
/// handler has nowhere else to find it — and only one watcher runs at a time.
final class SignalWatcher: Sendable {
    let signals: [Int32]
    let pipeFDs: (read: Int32, write: Int32)

    nonisolated(unsafe) static var writeFD: Int32 = -1

    init(_ signals: [Int32], _ handler: @escaping @Sendable (Int32) -> Void) {
        var fds: [Int32] = [-1, -1]
        _ = pipe(&fds)
        pipeFDs = (fds[0], fds[1])
        self.signals = signals
        Self.writeFD = fds[1]
        for sig in signals { Self.install(sig) }
        let readFD = fds[0]
        Thread.detachNewThread {
            var byte: UInt8 = 0
            while true {
                let n = read(readFD, &byte, 1)
                if n < 0, errno == EINTR { continue }
                guard n == 1 else { break }
                handler(Int32(byte))
            }
            close(readFD)
        }
    }

    /// Routes `sig` to the pipe.
    static func install(_ sig: Int32) {
        var action = sigaction()
        let toPipe: @convention(c) (Int32) -> Void = { sig in
            var byte = UInt8(truncatingIfNeeded: sig)
            _ = write(SignalWatcher.writeFD, &byte, 1)
        }
        #if os(Linux)
            action.__sigaction_handler.sa_handler = toPipe
        #else
            action.__sigaction_u.__sa_handler = toPipe
        #endif
        action.sa_flags = SA_RESTART
        sigemptyset(&action.sa_mask)
        sigaction(sig, &action, nil)
    }

    /// Suspends the process as SIGTSTP's default action would; returns when it is continued,
    /// with SIGTSTP routed to the pipe again.
    ///
    /// The signal is raised at this thread, unblocked here: a thread-directed signal is taken
    /// before `raise` returns, so the process has stopped and been continued before the handler
    /// is back. Raised at the process (`kill`), it could be delivered to another thread after the
    /// handler was put back, which caught it as a new ^Z — one ^Z suspended dozens of times, each
    /// queueing foreground hooks, and the app stopped itself again after `fg` (an outsider's
    /// attack; `eachCtrlZIsOneSuspendWhileTheForegroundHooksRun`).
    func suspend() {
        signal(SIGTSTP, SIG_DFL)
        var stop = sigset_t()
        var mask = sigset_t()
        sigemptyset(&stop)
        sigaddset(&stop, SIGTSTP)
        pthread_sigmask(SIG_UNBLOCK, &stop, &mask)
        raise(SIGTSTP)
        pthread_sigmask(SIG_SETMASK, &mask, nil)
        Self.install(SIGTSTP)
    }

    /// Stops watching and gives the signals their default actions back.
    func stop() {
        for sig in signals { signal(sig, SIG_DFL) }
        close(pipeFDs.write)
    }
}
