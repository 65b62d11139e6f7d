import Foundation
import Logging
import TrendyAPI
import TrendyFiles
import TrendyLogging
import TrendyServer

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

/// The dev backend running inside this process, started on first use (so commands and launches
/// that never touch the network never pay for it) and stopped at exit. Its database lives in
/// the data directory, so accounts and tokens persist between runs.
actor EmbeddedBackend {
    let database: URL
    /// Held while the server opens its database: two processes of one install starting their
    /// embedded backends at once must not both migrate it.
    let lock: ProcessLock
    let logs: LogSystem
    var starting: Task<RunningServer, any Error>?

    init(database: URL, lock: ProcessLock, logs: LogSystem) {
        self.database = database
        self.lock = lock
        self.logs = logs
    }

    func baseURL() async throws -> URL {
        if starting == nil {
            let database = self.database
            let logs = self.logs
            let lock = self.lock
            starting = Task {
                var configuration = ServerConfiguration()
                configuration.port = 0
                configuration.databasePath = database.path
                let server = try await lock.withLock(timeout: InstallBusy.wait) {
                    try OwnerOnlyFile.prepareDatabase(database)
                    return try await TrendyServer(configuration: configuration, logs: logs)
                }
                return try await server.start()
            }
        }
        do {
            return try await starting!.value.baseURL
        } catch {
            starting = nil  // a failed start is retried by the next request
            throw error
        }
    }

    func stop() async {
        guard let starting else { return }
        if let running = try? await starting.value { await running.stop() }
        self.starting = nil
    }
}

/// Another process holds the install (a repair) or its first-use setup for longer than
/// ``wait``: the command exits 75, "try again".
public struct InstallBusy: Error, CustomStringConvertible {
    /// How long a command waits for the install lock or the setup lock.
    static let wait: Duration = .seconds(30)

    /// What a person reads.
    public var description: String {
        "another trendy command (a repair or a first start) is busy with this data directory; try again in a moment"
    }

    /// Runs `body`, turning a busy ``ProcessLock`` and a busy or locked database into `InstallBusy`.
    static func map<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch ProcessLock.Failure.busy { throw InstallBusy() }
    }
}
