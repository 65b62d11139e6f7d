import Foundation
import Logging
import TrendyAuth
import TrendyFiles
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
        let bytes: [UInt8]
        do {
            guard let read = try OwnerOnlyFile.read(file, limit: 1 << 20) else { return nil }
            bytes = read
        } catch {
            logger.warning(
                "Cannot read the session file; treating as signed out", metadata: ["reason": .string(error.description)]
            )
            return nil
        }
        return SessionFileFormat.decode(bytes, logger: logger)
    }

    /// Writes the session atomically with owner-only permissions.
    public func save(_ session: AuthSession) throws {
        try OwnerOnlyFile.write(try SessionFileFormat.encode(session), to: file)
    }

    /// Deletes the file (missing is fine).
    public func clear() throws { try OwnerOnlyFile.remove(file) }
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
