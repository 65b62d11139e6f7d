import Foundation

/// Small state files that only their owner may read: the directory is created 0700, files are
/// written 0600 and atomically (a temporary file in the same directory, `fsync`, then `rename`),
/// so a crash leaves either the old or the new contents, never a torn file.
public enum OwnerOnlyFile {
    /// Why a read failed (other than the file not existing).
    public enum ReadFailure: Error, Equatable, CustomStringConvertible {
        /// The system refused (permissions, I/O); the reason is `strerror`'s.
        case unreadable(String)
        /// The file is larger than the caller's limit.
        case tooLarge(limit: Int)

        /// A sentence for logs.
        public var description: String {
            switch self {
            case .unreadable(let reason): "unreadable: \(reason)"
            case .tooLarge(let limit): "larger than \(limit) bytes"
            }
        }
    }

    /// The file's bytes with one `open` and plain `read`s; nil when it does not exist.
    public static func read(_ file: URL, limit: Int) throws(ReadFailure) -> [UInt8]? {
        let fd = open(file.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw .unreadable(String(cString: strerror(errno)))
        }
        defer { close(fd) }
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = Foundation.read(fd, &chunk, chunk.count)
            if n < 0, errno == EINTR { continue }
            if n < 0 { throw .unreadable(String(cString: strerror(errno))) }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count > limit { throw .tooLarge(limit: limit) }
        }
        return bytes
    }

    /// Replaces the file's contents atomically with owner-only permissions.
    public static func write(_ data: Data, to file: URL) throws {
        let directory = file.deletingLastPathComponent()
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = directory.appendingPathComponent(
            ".\(file.lastPathComponent).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var ok = data.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let n = Foundation.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += n
            }
            return true
        }
        ok = ok && fsync(fd) == 0
        close(fd)
        guard ok, rename(temporary.path, file.path) == 0 else {
            let code = errno
            unlink(temporary.path)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
    }

    /// Deletes the file; a missing file is fine.
    public static func remove(_ file: URL) throws {
        if unlink(file.path) != 0, errno != ENOENT {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
    }

    /// Makes every regular file directly in `directory` owner-only: files an older version left
    /// readable by others (a session file with tokens, the onboarding cache) are tightened.
    /// Cheap: one directory read and a `stat` per entry.
    public static func tightenFiles(in directory: URL) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        for name in names {
            let path = directory.appendingPathComponent(name).path
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_mode & 0o077 != 0 else { continue }
            chmod(path, 0o600)
        }
    }

    /// Creates a SQLite database file empty with 0600 when it is missing, before SQLite opens it
    /// (SQLite gives its `-wal` and `-shm` files the mode of the database). Files an older version
    /// left readable are tightened by ``tightenFiles(in:)``.
    public static func prepareDatabase(_ file: URL) throws {
        let fd = open(file.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        close(fd)
    }
}
