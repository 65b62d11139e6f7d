import Foundation

/// Where one install keeps its state: the data directory and what lives in it.
public struct AppPaths: Sendable, Equatable {
    /// The environment variable that overrides the data directory.
    public static let dataDirectoryVariable = "TRENDY_DATA_DIR"

    /// The install's data directory (owner-only).
    public let dataDirectory: URL

    /// Uses `dataDirectory` as given.
    public init(dataDirectory: URL) {
        self.dataDirectory = dataDirectory.standardizedFileURL
    }

    /// Resolves the data directory: the flag, else `$TRENDY_DATA_DIR`, else
    /// `$XDG_DATA_HOME/trendy`, else `~/.local/share/trendy`.
    public static func resolve(flag: String?, environment: [String: String]) -> AppPaths {
        if let flag, !flag.isEmpty { return AppPaths(dataDirectory: URL(fileURLWithPath: expand(flag, environment))) }
        if let env = environment[dataDirectoryVariable], !env.isEmpty {
            return AppPaths(dataDirectory: URL(fileURLWithPath: expand(env, environment)))
        }
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return AppPaths(dataDirectory: URL(fileURLWithPath: xdg).appendingPathComponent("trendy"))
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return AppPaths(dataDirectory: URL(fileURLWithPath: home).appendingPathComponent(".local/share/trendy"))
    }

    static func expand(_ path: String, _ environment: [String: String]) -> String {
        guard path == "~" || path.hasPrefix("~/") else { return path }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + path.dropFirst()
    }

    /// The log files' folder.
    public var logDirectory: URL { dataDirectory.appendingPathComponent("logs") }
    /// The install's SQLite database.
    public var database: URL { dataDirectory.appendingPathComponent("trendy.sqlite") }
    /// The stored session (owner-only).
    public var sessionFile: URL { dataDirectory.appendingPathComponent("session.json") }

    /// The onboarding cache: per-user status, device flag, analytics (owner-only).
    public var onboardingFile: URL { dataDirectory.appendingPathComponent("onboarding.json") }

    /// Crossings captured by background launches, waiting for the geofence manager.
    public var regionInbox: URL { dataDirectory.appendingPathComponent("region-inbox") }
    /// The simulated platform's location state: permission, last location, monitored regions.
    public var locationFile: URL { dataDirectory.appendingPathComponent("location.json") }
    /// The running app's control socket (`trendy open`, `trendy location` while `trendy app` runs).
    public var controlSocket: URL { dataDirectory.appendingPathComponent("app.sock") }

    /// Held shared by every command for its whole run and exclusively by `trendy repair`, which
    /// replaces the database file under everyone else.
    public var installLock: URL { dataDirectory.appendingPathComponent("install.lock") }
    /// Held exclusively while a process opens the database and runs migrations (first-use
    /// setup happens once, whichever process comes first).
    public var setupLock: URL { dataDirectory.appendingPathComponent("setup.lock") }
    /// Held while the embedded backend opens (and migrates) its database.
    public var serverLock: URL { dataDirectory.appendingPathComponent("server.lock") }

    /// Creates the data directory with owner-only permissions if it is missing, and tightens it
    /// and its log folder when an older version left them readable by others.
    public func prepare() throws {
        try FileManager.default.createDirectory(
            at: dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for directory in [dataDirectory, logDirectory] {
            var info = stat()
            if stat(directory.path, &info) == 0, info.st_mode & 0o077 != 0 { chmod(directory.path, 0o700) }
        }
    }
}
