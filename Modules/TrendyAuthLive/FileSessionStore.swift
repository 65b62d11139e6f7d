import Foundation
import Logging
import TrendyAuth
import TrendyLogging
import TrendyModels

/// The session in one JSON file per install: directory 0700, file 0600, written atomically
/// (temporary file in the same directory, then rename). A missing file is "no session"; an
/// unreadable or corrupt one is too, with a logged warning — never a crash.
public final class FileSessionStore: SessionStore {
    /// The session file.
    public let file: URL
    let logger: Logger

    /// Creates a store for `file`.
    public init(file: URL, logger: Logger) {
        self.file = file
        self.logger = logger
    }

    /// Reads the file synchronously (a single `read`, then decoding).
    public func load() -> AuthSession? {
        let fd = open(file.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno != ENOENT {
                logger.warning(
                    "Cannot read the session file; treating as signed out",
                    metadata: ["reason": .string(String(cString: strerror(errno)))])
            }
            return nil
        }
        defer { close(fd) }
        var bytes = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fd, &chunk, chunk.count)
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count > 1 << 20 {
                logger.warning("The session file is implausibly large; treating as signed out")
                return nil
            }
        }
        return SessionFileFormat.decode(bytes, logger: logger)
    }

    /// Writes the session atomically with owner-only permissions.
    public func save(_ session: AuthSession) throws {
        let directory = file.deletingLastPathComponent()
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let data = try SessionFileFormat.encode(session)
        let temporary = directory.appendingPathComponent(
            ".\(file.lastPathComponent).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var ok = data.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
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

    /// Deletes the file (missing is fine).
    public func clear() throws {
        if unlink(file.path) != 0, errno != ENOENT {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
    }
}

/// The session file's format: `{"version":1,"session":{...}}`.
enum SessionFileFormat {
    struct Envelope: Codable {
        var version: Int
        var session: AuthSession
    }

    static func encode(_ session: AuthSession) throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return try encoder.encode(Envelope(version: 1, session: session))
    }

    /// Decodes with `WireJSONReader` and direct field reads: this runs on the launch path, where
    /// `JSONDecoder` or `JSONSerialization` cost several times the file read itself.
    static func decode(_ bytes: [UInt8], logger: Logger) -> AuthSession? {
        guard let object = WireJSONReader.parse(bytes), let version = object["version"]?.number else {
            logger.warning("The session file is corrupt; treating as signed out")
            return nil
        }
        guard version == 1 else {
            logger.warning(
                "Unknown session file version; treating as signed out", metadata: ["version": .double(version)])
            return nil
        }
        guard let s = object["session"], let access = s["access_token"]?.string,
            let refresh = s["refresh_token"]?.string, let expires = s["expires_at"]?.number,
            let id = s["user"]?["id"]?.string, let email = s["user"]?["email"]?.string,
            !access.isEmpty, !refresh.isEmpty, !id.isEmpty, expires.isFinite
        else {
            logger.warning("The session file is incomplete; treating as signed out")
            return nil
        }
        return AuthSession(
            accessToken: access, refreshToken: refresh, expiresAt: Date(timeIntervalSince1970: expires),
            user: AuthUser(id: id, email: email))
    }
}
