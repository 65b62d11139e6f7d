import ArgumentParser
import GRDB
import Synchronization
import TrendyAPI
import TrendyAPILive
import TrendyAuth
import TrendyGeofence
import TrendyGeofenceLive
import TrendyInsights
import TrendyLogging
import TrendyModels
import TrendyOnboarding
import TrendyOnboardingLive
import TrendyRouting
import TrendySync
import TrendySyncLive

/// One feature's contribution to the app, from its own file in `App/TrendyApp/Plugins/`: its
/// local-database migrations, the `trendy` subcommands it owns, the settings it reads, its
/// lifecycle hooks and health (an ``AppModule``), and whatever services it adds to the
/// environment. The composition root is the list of plugins (``AppPlugins/standard``): adding a
/// feature is its module targets plus one plugin in that list, and an app without a feature
/// leaves its plugin out (`AppPluginTests` composes one without Geofence and one without
/// Onboarding).
public protocol TrendyPlugin: Sendable {
    /// A short name (`geofence`), for `trendy plugins`, logs and health.
    var name: String { get }
    /// One line on what the feature does.
    var summary: String { get }
    /// The `trendy` subcommands the feature owns.
    var commands: [any ParsableCommand.Type] { get }
    /// The files, variables and options the feature reads.
    var settings: [PluginSetting] { get }
    /// Adds the feature's migrations of the local database (after those of earlier plugins).
    func registerMigrations(in migrator: inout DatabaseMigrator)
    /// The feature's tables that its triggers derive from other tables' rows: `trendy repair`
    /// leaves them to be rebuilt rather than copying them (a copy beside the rows they are derived
    /// from would count each row twice).
    var derivedTables: Set<String> { get }
    /// How a bulk load into an empty store treats those tables: their triggers down for the load,
    /// the tables built once at the end (D63); nil when the feature keeps none.
    var bulkLoad: DerivedFromEvents? { get }
    /// The onboarding position the first route is decided from, read synchronously before
    /// anything is built; nil when the feature has no say (only onboarding has).
    func launchFacts(paths: AppPaths, userId: String?) -> OnboardingLaunchFacts?
    /// How to make the backend this process runs itself when no server URL is given (once the
    /// logs exist); nil when the feature has none (only the dev backend has).
    func localBackend(paths: AppPaths) -> LocalBackendFactory?
    /// Builds the feature's live parts on the platform and adds them to `app`.
    /// Cannot fail: anything that can fail happens when the feature is first used.
    func install(into app: inout AppAssembly)
}

extension TrendyPlugin {
    /// No commands by default.
    public var commands: [any ParsableCommand.Type] { [] }
    /// No settings by default.
    public var settings: [PluginSetting] { [] }
    /// No migrations by default.
    public func registerMigrations(in migrator: inout DatabaseMigrator) {}
    /// No derived tables by default.
    public var derivedTables: Set<String> { [] }
    /// Nothing for a bulk load by default.
    public var bulkLoad: DerivedFromEvents? { nil }
    /// No local backend by default.
    public func localBackend(paths: AppPaths) -> LocalBackendFactory? { nil }
    /// No say in the launch by default.
    public func launchFacts(paths: AppPaths, userId: String?) -> OnboardingLaunchFacts? { nil }
}

/// Something a feature reads: a file in the data directory, an environment variable or an option.
public struct PluginSetting: Sendable, Equatable, Codable {
    /// What kind of setting.
    public enum Kind: String, Sendable, Codable {
        /// A file or folder in the data directory.
        case file
        /// An environment variable.
        case environment
        /// A command-line option every command takes.
        case option
    }

    /// Its kind.
    public var kind: Kind
    /// Its name (`location.json`, `TRENDY_LOG_LEVEL`, `--log-format`).
    public var name: String
    /// What it does.
    public var summary: String

    /// Creates a setting.
    public init(_ kind: Kind, _ name: String, _ summary: String) {
        self.kind = kind
        self.name = name
        self.summary = summary
    }
}

/// What every plugin builds on, made by the composition root before any plugin installs: the
/// install's files and logs, the local database and store, the session, the API client and the
/// sync engine.
public struct AppPlatform: Sendable {
    /// The install's files.
    public var paths: AppPaths
    /// Logging: one logger per category.
    public var logs: LogSystem
    /// Makes every new id.
    public var ids: UUIDv7Generator
    /// Sessions.
    public var auth: any AuthService
    /// The live HTTP client: it serves every remote port (``TrendyAPIClient``, ``OnboardingRemote``).
    public var remote: LiveTrendyAPIClient
    /// The install database (features that keep tables of their own read them through it).
    public var database: any DatabaseWriter
    /// The local store; also the unit of work features write through.
    public var store: SQLiteLocalStore
    /// The sync engine.
    public var engine: OutboxSyncEngine
    /// Whether the server answers.
    public var reachability: any ReachabilityProbe
    /// How long to wait for the server.
    public var budget: NetworkBudget
    /// Work to run after every sync pass the app starts; features add to it.
    public var afterSync: SyncHooks
    /// The zone the device is in now.
    public var timeZone: String
}

/// What the plugins built, assembled into an ``AppEnvironment`` once the last one installed.
public struct AppAssembly: Sendable {
    /// The shared platform.
    public let platform: AppPlatform
    /// Lifecycle modules, in plugin order.
    public var modules: [any AppModule] = []
    /// Onboarding (nil without its plugin).
    public var onboarding: (any OnboardingStatusService & RoutingOnboarding)?
    /// Geofencing (nil without its plugin).
    public var geofence: (any GeofenceService)?
    /// The simulated device location (nil without the geofence plugin).
    public var location: (any LocationSimulator)?
    /// Insights (nil without its plugin).
    public var insights: (any InsightStore)?
    /// Releases what plugins hold, in reverse order, before the platform closes.
    public var onClose: [@Sendable () async -> Void] = []

    /// Starts an assembly on `platform`.
    public init(platform: AppPlatform) { self.platform = platform }
}

/// Hooks that run after each sync pass the app starts, in the order they were added.
public final class SyncHooks: Sendable {
    let hooks = Mutex<[@Sendable (SyncRun) async -> Void]>([])

    /// An empty list.
    public init() {}

    /// Adds a hook.
    public func add(_ hook: @escaping @Sendable (SyncRun) async -> Void) { hooks.withLock { $0.append(hook) } }

    /// Runs every hook with `run`.
    public func run(_ run: SyncRun) async {
        for hook in hooks.withLock({ $0 }) { await hook(run) }
    }
}
