import Foundation

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
        let fd = open(file.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure.unusable(String(cString: strerror(errno))) }
        defer { close(fd) }  // closing releases the lock
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw Failure.unusable(String(cString: strerror(errno)))
            }
            guard ContinuousClock.now < deadline else { throw Failure.busy }
            try await Task.sleep(for: .milliseconds(20))
        }
        return try await body()
    }
}
