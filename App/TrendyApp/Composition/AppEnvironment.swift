import Foundation
import Logging
import TrendyAPI
import TrendyAPILive
import TrendyAuth
import TrendyGeofence
import TrendyInsights
import TrendyLogging
import TrendyModels
import TrendyOnboarding
import TrendyRouting
import TrendySync

/// Every dependency of the app, each protocol- or value-typed, built once by ``AppComposition``
/// from the plugin list (or by ``testing(paths:auth:store:sync:reachability:api:onboarding:modules:)``
/// in tests, with doubles).
///
/// A plain struct: no singletons, no registries. A feature left out of the plugin list is nil
/// here (``onboarding``, ``geofence``); the commands that need it belong to its plugin.
public struct AppEnvironment: Sendable {
    /// The install's files.
    public var paths: AppPaths
    /// Logging: one logger per category.
    public var logs: LogSystem
    /// Makes every new id.
    public var ids: UUIDv7Generator
    /// The current time.
    public var now: @Sendable () -> Date
    /// The plugins the environment was built from.
    public var plugins: [any TrendyPlugin]
    /// The live modules, in plugin order.
    public var modules: [any AppModule]
    /// Sessions: snapshot, sign in/out, tokens, events.
    public var auth: any AuthService
    /// The account's server-side summary (`trendy whoami`); every other server call goes
    /// through a module's own port.
    public var api: any AccountRemote
    /// Local-first reads and writes.
    public var store: any LocalStore
    /// The sync engine.
    public var sync: any SyncEngine
    /// Whether the server answers, within the network budget (the question every pass asks
    /// first; commands a person waits on ask it too, D38).
    public var reachability: any ReachabilityProbe
    /// Onboarding status: per-user cache, backend writes, analytics (nil without its plugin).
    public var onboarding: (any OnboardingStatusService)?
    /// Which screen the app shows; performs session verification and status fetches.
    public var routing: any RouteService
    /// Geofencing: planned regions, crossings to events, health (nil without its plugin).
    public var geofence: (any GeofenceService)?
    /// The simulated platform location and region monitor (what `trendy location` drives; nil
    /// without the geofence plugin).
    public var location: (any LocationSimulator)?
    /// Insights' settings and data (nil without its plugin).
    public var insights: (any InsightStore)?
    /// The zone the device is in now (`TRENDY_TIME_ZONE`, else the system's).
    public var timeZone: String = TimeZone.current.identifier
    /// Runs after every sync pass the app starts (geofences follow what the pass pulled).
    public var syncFinished: @Sendable (SyncRun) async -> Void
    /// Releases what the environment holds (HTTP connections, the embedded backend).
    public var close: @Sendable () async -> Void

    /// Creates an environment.
    public init(
        paths: AppPaths, logs: LogSystem, ids: UUIDv7Generator, now: @escaping @Sendable () -> Date,
        plugins: [any TrendyPlugin], modules: [any AppModule], auth: any AuthService, api: any AccountRemote,
        store: any LocalStore, sync: any SyncEngine, reachability: any ReachabilityProbe,
        onboarding: (any OnboardingStatusService)?, routing: any RouteService, geofence: (any GeofenceService)?,
        location: (any LocationSimulator)?, syncFinished: @escaping @Sendable (SyncRun) async -> Void,
        close: @escaping @Sendable () async -> Void
    ) {
        self.paths = paths
        self.logs = logs
        self.ids = ids
        self.now = now
        self.plugins = plugins
        self.modules = modules
        self.auth = auth
        self.api = api
        self.store = store
        self.sync = sync
        self.reachability = reachability
        self.onboarding = onboarding
        self.routing = routing
        self.geofence = geofence
        self.location = location
        self.syncFinished = syncFinished
        self.close = close
    }

    /// An environment for tests, from doubles: logs go nowhere, the given lifecycle modules, routing
    /// decided by a real ``RouteCoordinator`` over `auth` and `onboarding` (or ``NoOnboarding``),
    /// no geofencing, and closing does nothing.
    public static func testing(
        paths: AppPaths, auth: any AuthService, store: any LocalStore, sync: any SyncEngine,
        reachability: any ReachabilityProbe, api: any AccountRemote = NoAccountRemote(),
        onboarding: (any OnboardingStatusService & RoutingOnboarding)? = nil, modules: [any AppModule] = []
    ) -> AppEnvironment {
        let logs = LogSystem.disabled()
        return AppEnvironment(
            paths: paths, logs: logs, ids: UUIDv7Generator(), now: Date.init, plugins: [], modules: modules, auth: auth,
            api: api, store: store, sync: sync, reachability: reachability, onboarding: onboarding,
            routing: RouteCoordinator(
                auth: AuthRouting(auth), onboarding: onboarding ?? NoOnboarding(), logger: logs.logger(.routing)),
            geofence: nil, location: nil, syncFinished: { _ in }, close: {})
    }

    /// A logger for one category.
    public func logger(_ category: LogCategory) -> Logger { logs.logger(category) }
}

/// The one server call the app makes itself: the account's sync summary.
public protocol AccountRemote: Sendable {
    /// `GET /me/sync`.
    func syncSummary() async throws(TrendyAPIError) -> SyncSummary
}

extension LiveTrendyAPIClient: AccountRemote {}

/// No server: the summary is unavailable (a test environment's default).
public struct NoAccountRemote: AccountRemote {
    /// Creates the stand-in.
    public init() {}

    /// Always fails as "not responding".
    public func syncSummary() async throws(TrendyAPIError) -> SyncSummary {
        throw .transport(.notResponding(server: "", seconds: 0))
    }
}
