import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A child process the tests start with `posix_spawn` (not Foundation's `Process`).
///
/// Foundation's `Process.run()` on Linux lists `/proc/self/fd` and adds one close action per
/// descriptor it finds; in this suite thousands of descriptors open and close on other threads
/// while it does (servers, SQLite, pipes of other children), and it crashed the test process
/// inside its own launch code (a bad `memcpy` over descriptor names) in 2 of 7 full runs, a lock
/// around every launch notwithstanding. Here the child closes every descriptor from 3 up in one
/// action (`closefrom`), gets the default disposition of every signal (as from a shell) and its
/// own process group (as `Process` gave it), and is reaped with `waitpid`.
final class ChildProcess: Sendable {
    /// Where one of the child's standard streams goes.
    enum Stream {
        /// `/dev/null`.
        case null
        /// The child's end of a pipe (the read end for input, the write end for output); the
        /// parent's copy of that end is closed once the child has started.
        case pipe(Pipe)
        /// An open descriptor the caller keeps (and closes) itself.
        case handle(FileHandle)
    }

    let processIdentifier: pid_t
    /// The raw wait status, once the child has been reaped.
    private let status = Mutex<Int32?>(nil)

    /// Starts `executable` with `arguments` and exactly `environment`.
    init(
        _ executable: URL, _ arguments: [String], environment: [String: String],
        stdin: Stream = .null, stdout: Stream = .null, stderr: Stream = .null
    ) throws {
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        guard null >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(null) }
        func descriptor(_ stream: Stream, input: Bool) -> Int32 {
            switch stream {
            case .null: null
            case .pipe(let pipe): (input ? pipe.fileHandleForReading : pipe.fileHandleForWriting).fileDescriptor
            case .handle(let handle): handle.fileDescriptor
            }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (stream, target, input) in [
            (stdin, STDIN_FILENO, true), (stdout, STDOUT_FILENO, false), (stderr, STDERR_FILENO, false),
        ] {
            try Self.check(posix_spawn_file_actions_adddup2(&actions, descriptor(stream, input: input), target))
        }
        try Self.closeFrom3(&actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t()
        sigfillset(&all)
        var none = sigset_t()
        sigemptyset(&none)
        try Self.check(posix_spawnattr_setsigdefault(&attributes, &all))
        try Self.check(posix_spawnattr_setsigmask(&attributes, &none))
        try Self.check(posix_spawnattr_setpgroup(&attributes, 0))
        try Self.check(
            posix_spawnattr_setflags(
                &attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP)))

        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        try Self.check(posix_spawn(&pid, executable.path, &actions, &attributes, argv, envp))
        processIdentifier = pid
        // The child has its own copies now; the parent's copies of the child's pipe ends would
        // keep a reader from ever seeing the end of the output.
        if case .pipe(let pipe) = stdin { try? pipe.fileHandleForReading.close() }
        if case .pipe(let pipe) = stdout { try? pipe.fileHandleForWriting.close() }
        if case .pipe(let pipe) = stderr {
            if case .pipe(let same) = stdout, same === pipe {} else { try? pipe.fileHandleForWriting.close() }
        }
    }

    deinit {
        if status.withLock({ $0 }) == nil {
            kill(processIdentifier, SIGKILL)
            _ = reap(blocking: true)
        }
    }

    /// Whether the child has not exited yet.
    var isRunning: Bool { reap(blocking: false) == nil }

    /// Blocks the calling thread until the child exits (never call it on the cooperative pool).
    func waitUntilExit() { _ = reap(blocking: true) }

    /// The exit code, or the number of the signal that ended it (what `Process` answered); only
    /// after the child has exited.
    var terminationStatus: Int32 {
        guard let raw = reap(blocking: false) else { preconditionFailure("the child is still running") }
        let signal = raw & 0x7f
        return signal == 0 ? (raw >> 8) & 0xff : signal
    }

    /// Sends `signal` to the child, unless it has already been reaped (its pid may be another's).
    func send(_ signal: Int32) {
        status.withLock { if $0 == nil { kill(processIdentifier, signal) } }
    }

    /// SIGTERM.
    func terminate() { send(SIGTERM) }

    /// The raw wait status once the child has exited; nil while it runs (when not `blocking`).
    private func reap(blocking: Bool) -> Int32? {
        if let done = status.withLock({ $0 }) { return done }
        var raw: Int32 = 0
        while true {
            let result = waitpid(processIdentifier, &raw, blocking ? 0 : WNOHANG)
            if result == processIdentifier {
                status.withLock { $0 = raw }
                return raw
            }
            if result == 0 { return nil }
            if errno == EINTR { continue }
            // ECHILD: another thread reaped it a moment ago and is storing its status.
            while true {
                if let done = status.withLock({ $0 }) { return done }
                usleep(1_000)
            }
        }
    }

    private static func check(_ code: Int32) throws {
        guard code == 0 else { throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO) }
    }

    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// glibc ≥ 2.34's `posix_spawn_file_actions_addclosefrom_np` (not in Swift's Glibc module,
    /// hence the lookup); without it, one close action per possible descriptor.
    private static func closeFrom3(_ actions: inout posix_spawn_file_actions_t) throws {
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            try check(unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3))
            return
        }
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        for fd in 3..<Int32(clamping: min(limit.rlim_cur, 65_536)) {
            try check(posix_spawn_file_actions_addclose(&actions, fd))
        }
    }
}
