import Foundation
import Logging
import TrendyAPI
import TrendyFiles
import TrendyLogging

/// Which backend the app talks to: a server given by URL, or the embedded dev backend.
public struct BackendOptions: Sendable, Equatable {
    /// The Trendy API root (`http://host:port`); nil means the embedded backend.
    public var apiURL: URL?
    /// The auth root (`…/auth/v1`); defaults to `<api-url>/auth/v1`.
    public var authURL: URL?
    /// The anon key sent as `apikey` (Supabase projects).
    public var apiKey: String?
    /// How long to wait for the server (D38).
    public var budget: NetworkBudget

    /// Creates options.
    public init(apiURL: URL? = nil, authURL: URL? = nil, apiKey: String? = nil, budget: NetworkBudget = .standard) {
        self.apiURL = apiURL
        self.authURL = authURL
        self.apiKey = apiKey
        self.budget = budget
    }

    /// The embedded backend.
    public static let embedded = BackendOptions()
}

/// A backend this process runs itself when no server URL is given (the dev backend, started on
/// first use). A plugin provides it (``TrendyPlugin/localBackend(paths:)``); the `trendy`
/// executable links the dev server only through that plugin, so an app without it links no
/// server code and needs `--api-url`.
public protocol LocalBackend: Sendable {
    /// The backend's root URL, starting it on first use.
    func baseURL() async throws -> URL
    /// Stops it if it was started.
    func stop() async
}

/// Makes a ``LocalBackend`` that logs to the given system.
public typealias LocalBackendFactory = @Sendable (LogSystem) -> any LocalBackend

/// No server URL was given and no plugin runs a local backend.
public struct NoServerConfigured: Error, CustomStringConvertible {
    /// What a person reads.
    public var description: String {
        "this program has no embedded backend: pass --api-url (or set TRENDY_API_URL) to use a server"
    }
}

/// Another process holds the install (a repair) or its first-use setup for longer than
/// ``wait``: the command exits 75, "try again".
public struct InstallBusy: Error, CustomStringConvertible {
    /// How long a command waits for the install lock or the setup lock.
    public static let wait: Duration = .seconds(30)

    /// Creates the error.
    public init() {}

    /// What a person reads.
    public var description: String {
        "another trendy command (a repair or a first start) is busy with this data directory; try again in a moment"
    }

    /// Runs `body`, turning a busy ``ProcessLock`` and a busy or locked database into `InstallBusy`.
    static func map<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch ProcessLock.Failure.busy { throw InstallBusy() }
    }
}
