import Foundation
import Synchronization

/// An exclusive lock shared by every process of one install (`flock` on a file), for work that
/// must not run twice at once across processes — a background launch and a foreground command
/// syncing the same database. The kernel drops the lock when its holder dies, so a killed
/// process never leaves it stuck.
public final class ProcessLock: Sendable {
    /// The lock file (created 0600 when missing).
    public let file: URL

    /// Uses `file` as the lock.
    public init(file: URL) { self.file = file }

    /// Why the lock was not taken.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// The lock file cannot be opened.
        case unusable(String)
        /// Another process held it for longer than the wait allowed.
        case busy

        /// A sentence for logs.
        public var description: String {
            switch self {
            case .unusable(let reason): "the lock file cannot be used: \(reason)"
            case .busy: "another trendy process is busy with the same data"
            }
        }
    }

    /// Runs `body` holding the lock, waiting up to `timeout` for another holder (polling, so no
    /// thread blocks).
    @discardableResult
    public func withLock<T: Sendable>(
        isolation: isolated (any Actor)? = #isolation, timeout: Duration = .seconds(300),
        _ body: () async throws -> T
    ) async throws -> T {
        let fd = try openFile()
        defer { close(fd) }  // closing releases the lock
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while try !attempt(fd, LOCK_EX, deadline: deadline) { try await Task.sleep(for: .milliseconds(20)) }
        return try await body()
    }

    func openFile() throws(Failure) -> Int32 {
        let fd = open(file.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure.unusable(String(cString: strerror(errno))) }
        return fd
    }

    /// One non-blocking try: true when taken, false to wait and try again; past `deadline`, busy.
    func attempt(_ fd: Int32, _ operation: Int32, deadline: ContinuousClock.Instant) throws(Failure) -> Bool {
        if flock(fd, operation | LOCK_NB) == 0 { return true }
        guard errno == EWOULDBLOCK || errno == EINTR else { throw Failure.unusable(String(cString: strerror(errno))) }
        guard ContinuousClock.now < deadline else { throw Failure.busy }
        return false
    }
}

extension ProcessLock {
    /// How a lock is held: many processes may share it; one may hold it exclusively.
    public enum Mode: Sendable {
        /// Held by any number of processes at once (excludes an exclusive holder).
        case shared
        /// Held by one process (excludes every other holder).
        case exclusive
    }

    /// A held lock; released by ``release()`` or when the value is freed (and by the kernel when
    /// the process dies).
    public final class Hold: Sendable {
        let descriptor: Mutex<Int32>

        init(descriptor: Int32) { self.descriptor = Mutex(descriptor) }

        /// Releases the lock (once; later calls do nothing).
        public func release() {
            descriptor.withLock { fd in
                guard fd >= 0 else { return }
                close(fd)
                fd = -1
            }
        }

        deinit { release() }
    }

    /// Takes the lock in `mode`, waiting up to `timeout` for holders in the way (polling every
    /// 10 ms; the calling thread sleeps). For start-up work that runs before any task exists.
    public func acquire(_ mode: Mode, timeout: Duration) throws -> Hold {
        let fd = try openFile()
        let deadline = ContinuousClock.now.advanced(by: timeout)
        do {
            while try !attempt(fd, mode == .shared ? LOCK_SH : LOCK_EX, deadline: deadline) { usleep(10_000) }
        } catch {
            close(fd)
            throw error
        }
        return Hold(descriptor: fd)
    }

    /// Runs `body` holding the lock in `mode` (see ``acquire(_:timeout:)``).
    public func holding<T>(_ mode: Mode, timeout: Duration, _ body: () throws -> T) throws -> T {
        let hold = try acquire(mode, timeout: timeout)
        defer { hold.release() }
        return try body()
    }
}
