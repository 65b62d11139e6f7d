import ArgumentParser
import Foundation
import TrendyApp
import TrendyFiles
import TrendyLogging
import TrendyServer

/// The dev backend as a plugin: `trendy serve`, and the backend a command starts in-process when
/// no server URL is given. Only the `trendy` executable lists it (after ``AppPlugins/standard``),
/// so the app's own targets link no server code.
public struct DevBackendPlugin: TrendyPlugin {
    /// Creates the plugin.
    public init() {}

    /// The plugin's name.
    public var name: String { "dev-backend" }
    /// What the feature does.
    public var summary: String { "The Trendy dev backend (auth + API) in this process, or in the foreground." }
    /// The commands the feature owns.
    public var commands: [any ParsableCommand.Type] { [ServeCommand.self] }
    /// What the feature reads.
    public var settings: [PluginSetting] {
        [
            .init(.file, "server.sqlite", "the embedded backend's database (accounts, events, the change feed)"),
            .init(.environment, "TRENDY_JWT_SECRET", "the token signing secret (trendy serve)"),
            .init(.environment, "TRENDY_ADMIN_TOKEN", "enables the admin routes (trendy serve)"),
        ]
    }

    /// Builds nothing: the backend starts on the first request that needs it.
    public func install(into app: inout AppAssembly) {}

    /// The embedded backend for the install at `paths`.
    public func localBackend(paths: AppPaths) -> LocalBackendFactory? {
        { logs in
            EmbeddedBackend(
                database: paths.dataDirectory.appendingPathComponent("server.sqlite"),
                lock: ProcessLock(file: paths.serverLock), logs: logs)
        }
    }
}

/// The dev backend running inside this process, started on first use (so commands and launches
/// that never touch the network never pay for it) and stopped at exit. Its database lives in
/// the data directory, so accounts and tokens persist between runs.
actor EmbeddedBackend: LocalBackend {
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
                configuration.belowInteractive = true
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
