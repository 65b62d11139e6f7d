import AsyncHTTPClient
import Foundation
import Logging
import TrendyAPI
import TrendyAPILive
import TrendyAuth
import TrendyAuthGoTrue
import TrendyAuthLive
import TrendyFiles
import TrendyGeofence
import TrendyGeofenceLive
import TrendyHTTP
import TrendyLogging
import TrendyModels
import TrendyOnboarding
import TrendyOnboardingLive
import TrendyRouting
import TrendySync
import TrendySyncLive

/// The composition root: the one place that constructs live implementations.
public enum AppComposition {
    /// How the app's logging should be set up.
    public struct LoggingOptions: Sendable {
        /// Levels per category (for the file and, when `consoleLevel` is nil, warnings on the console).
        public var configuration: LogConfiguration
        /// Console format.
        public var consoleFormat: LogFormat
        /// Lowest level shown on the console; by default warnings and errors only.
        public var consoleLevel: Logger.Level
        /// Whether console lines may be coloured (nil: only on a terminal).
        public var consoleColour: Bool?

        /// Creates options.
        public init(
            configuration: LogConfiguration, consoleFormat: LogFormat, consoleLevel: Logger.Level,
            consoleColour: Bool? = nil
        ) {
            self.configuration = configuration
            self.consoleFormat = consoleFormat
            self.consoleLevel = consoleLevel
            self.consoleColour = consoleColour
        }
    }

    /// A plugin list without a feature every other one builds on.
    public struct MissingPlugin: Error, CustomStringConvertible {
        /// The missing plugin's name.
        public var name: String
        /// What a person reads.
        public var description: String { "the app cannot be built without the \(name) plugin" }
    }

    /// Builds the live environment for the install at `paths` from `plugins`: the platform
    /// (logs, database, session, API client, store, sync engine), then each plugin in order.
    /// Nothing here touches the network: the embedded backend starts on the first request that
    /// needs it.
    public static func live(
        paths: AppPaths, logging: LoggingOptions, backend: BackendOptions,
        plugins: [any TrendyPlugin] = AppPlugins.active
    ) throws -> AppEnvironment {
        if let missing = AppPlugins.required.first(where: { !AppPlugins.has($0, in: plugins) }) {
            throw MissingPlugin(name: missing)
        }
        let settled = InstallServer.settle(backend, paths: paths)
        let backend = settled.backend
        let server = try Server(backend: backend, paths: paths, plugins: plugins)
        try paths.prepare()
        InstallServer.remember(settled, paths: paths)
        OwnerOnlyFile.tightenFiles(in: paths.dataDirectory)
        OwnerOnlyFile.tightenFiles(in: paths.logDirectory)
        let logs = LogSystem(
            configuration: logging.configuration,
            sinks: [
                RotatingFileSink(directory: paths.logDirectory, format: .json),
                ConsoleSink(
                    format: logging.consoleFormat, minimumLevel: logging.consoleLevel, colour: logging.consoleColour),
            ])
        let (embedded, apiEndpoint, authEndpoint) = server.endpoints(backend: backend, logs: logs)

        // Everything that can throw comes before the HTTP client, which must be shut down
        // once created (a damaged database used to crash the program here).
        // Every command holds the install lock shared (only `repair` takes it exclusively), and
        // opening + migrating is done by one process at a time (D39).
        let install = try InstallBusy.map {
            try ProcessLock(file: paths.installLock).acquire(.shared, timeout: InstallBusy.wait)
        }
        let derived = plugins.compactMap(\.bulkLoad)
        let database = try InstallBusy.map {
            try ProcessLock(file: paths.setupLock).holding(.exclusive, timeout: InstallBusy.wait) {
                try AppDatabase.open(
                    at: paths.database, migrator: AppPlugins.migrator(plugins), derived: derived,
                    derivedNotMended: { error in
                        logs.logger(.data).error(
                            "could not rebuild tables derived from the events; they stay stale until a later open",
                            metadata: ["error": .string(String(describing: error))])
                    })
            }
        }
        let http = HTTPTransport.makeClient(budget: backend.budget)
        let gateway = GoTrueAuthGateway(
            configuration: .init(endpoint: authEndpoint, apiKey: backend.apiKey, budget: backend.budget), http: http,
            logger: logs.logger(.auth)
        )
        let auth = AuthController(
            store: sessionStore(paths, logs), gateway: gateway,
            logger: logs.logger(.auth), keepsStoredSessionOnRejection: settled.foreign)
        let api = LiveTrendyAPIClient(
            configuration: .init(endpoint: apiEndpoint, budget: backend.budget, apiKey: backend.apiKey), http: http,
            tokens: AuthTokenProvider(auth: auth), logger: logs.logger(.api))
        let zone = deviceZone()
        if let named = ProcessInfo.processInfo.environment["TRENDY_TIME_ZONE"], named != zone {
            // A name this device does not know is not used silently: new events would be stamped
            // with another zone (outside tester).
            logs.logger(.app).warning(
                "TRENDY_TIME_ZONE names no time zone this device knows; new events are stamped with \(zone)",
                metadata: ["value": .string(String(named.prefix(64)))])
        }
        let store = SQLiteLocalStore(
            database: database, zone: { zone }, derived: derived, logger: logs.logger(.data))
        var syncConfiguration = OutboxSyncEngine.Configuration()
        syncConfiguration.passLock = ProcessLock(file: paths.dataDirectory.appendingPathComponent("sync.lock"))
        let reachability = HealthCheckProbe(
            api: api, budget: backend.budget.respond,
            server: backend.apiURL.map { HTTPTransport.serverName($0.absoluteString) } ?? "")
        let ids = UUIDv7Generator()
        let engine = OutboxSyncEngine(
            store: store, api: api, reachability: reachability,
            identity: { [auth] in auth.currentUserId }, configuration: syncConfiguration, ids: ids,
            logger: logs.logger(.sync))
        let platform = AppPlatform(
            paths: paths, logs: logs, ids: ids, auth: auth, remote: api, database: database, store: store,
            engine: engine, reachability: reachability, budget: backend.budget, afterSync: SyncHooks(), timeZone: zone)
        var app = AppAssembly(platform: platform)
        for plugin in plugins { plugin.install(into: &app) }
        let onClose = app.onClose
        var environment = AppEnvironment(
            paths: paths, logs: logs, ids: platform.ids, now: Date.init, plugins: plugins, modules: app.modules,
            auth: auth, api: api, store: store, sync: engine, reachability: reachability, onboarding: app.onboarding,
            routing: RouteCoordinator(
                auth: AuthRouting(auth), onboarding: app.onboarding ?? NoOnboarding(), logger: logs.logger(.routing)),
            geofence: app.geofence, location: app.location, syncFinished: { await platform.afterSync.run($0) },
            close: {
                for close in onClose.reversed() { await close() }
                try? await http.shutdown()
                await embedded?.stop()
                install.release()
            })
        environment.insights = app.insights
        environment.timeZone = zone
        return environment
    }

    /// The zone the device is in: `TRENDY_TIME_ZONE` when it names one, else the system's.
    static func deviceZone(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let named = environment["TRENDY_TIME_ZONE"], Event.isZoneName(named), TimeZone(identifier: named) != nil {
            return named
        }
        return TimeZone.current.identifier
    }

    /// The server the install talks to: the one at the given URL, or without one a backend a
    /// plugin runs in this process (started on first use). Nothing is created for a program that
    /// could not reach any server.
    enum Server {
        case remote(URL)
        case local(LocalBackendFactory)

        init(backend: BackendOptions, paths: AppPaths, plugins: [any TrendyPlugin]) throws {
            if let url = backend.apiURL {
                self = .remote(url)
            } else if let make = plugins.lazy.compactMap({ $0.localBackend(paths: paths) }).first {
                self = .local(make)
            } else {
                throw NoServerConfigured()
            }
        }

        /// The embedded backend (nil for a remote server), and where the API and auth answer.
        func endpoints(backend: BackendOptions, logs: LogSystem) -> (
            embedded: (any LocalBackend)?, api: ServiceEndpoint, auth: ServiceEndpoint
        ) {
            switch self {
            case .remote(let apiURL):
                return (nil, .fixed(apiURL), .fixed(backend.authURL ?? apiURL.appendingPathComponent("auth/v1")))
            case .local(let make):
                let local = make(logs)
                return (
                    local, ServiceEndpoint { try await local.baseURL() },
                    ServiceEndpoint { try await local.baseURL().appendingPathComponent("auth/v1") }
                )
            }
        }
    }

    /// The stored session, as the launch and ``AuthController`` read it.
    static func sessionStore(_ paths: AppPaths, _ logs: LogSystem) -> FileSessionStore {
        FileSessionStore(file: paths.sessionFile, logger: logs.logger(.auth))
    }

    /// The durable buffer for crossings that arrive before the app is up.
    static func regionInbox(_ paths: AppPaths, _ logs: LogSystem) -> FileRegionEventInbox {
        FileRegionEventInbox(directory: paths.regionInbox, logger: logs.logger(.geofence))
    }

    /// Stores a crossing the system woke the app for, before any other start-up work: only the
    /// data directory and one `fsync`ed file, so it is on disk even if the launch dies next.
    public static func captureRegionEvent(_ crossing: RegionCrossing, paths: AppPaths) throws {
        try paths.prepare()
        try regionInbox(paths, .disabled()).append(crossing)
    }

    /// What the first route is decided from, read synchronously from the session file and the
    /// onboarding cache: no network, and no database unless the cache has no status for the
    /// signed-in user (then one indexed read says whether the device holds the account's data).
    /// Without an onboarding plugin every account counts as onboarded.
    public static func launchSnapshot(
        paths: AppPaths, logs: LogSystem, plugins: [any TrendyPlugin] = AppPlugins.active
    ) -> LaunchSnapshot {
        let user = sessionStore(paths, logs).load()?.user.id
        let facts =
            plugins.lazy.compactMap { $0.launchFacts(paths: paths, userId: user) }.first
            ?? NoOnboarding().launchFacts(for: user)
        // Only on a cache miss for a signed-in user: does the device hold this account's data?
        let hasData = user.map { facts.position == nil && AppDatabase.holdsData(of: $0, at: paths.database) } ?? false
        return LaunchSnapshot(
            userId: user, cachedOnboarding: facts.position, deviceSawCompletedUser: facts.deviceSawCompletedUser,
            signedOutStep: facts.signedOutStep, hasAccountData: hasData)
    }
}
