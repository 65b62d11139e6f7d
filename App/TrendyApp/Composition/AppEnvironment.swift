import Foundation
import Logging
import TrendyAPI
import TrendyAuth
import TrendyGeofence
import TrendyGeofenceLive
import TrendyLogging
import TrendyModels
import TrendyOnboarding
import TrendyRouting
import TrendySync

/// Every dependency of the app, protocol- or value-typed, built once by ``AppComposition``.
///
/// A plain struct: no singletons, no registries. Tests build their own with doubles.
public struct AppEnvironment: Sendable {
    /// The install's files.
    public var paths: AppPaths
    /// Logging: one logger per category.
    public var logs: LogSystem
    /// Makes every new id.
    public var ids: UUIDv7Generator
    /// The current time.
    public var now: @Sendable () -> Date
    /// The live modules, in registration order.
    public var modules: [any AppModule]
    /// Sessions: snapshot, sign in/out, tokens, events.
    public var auth: any AuthService
    /// The Trendy API.
    public var api: any TrendyAPIClient
    /// Local-first reads and writes.
    public var store: any LocalStore
    /// The sync engine.
    public var sync: any SyncEngine
    /// Whether the server answers, within the network budget (the question every pass asks
    /// first; commands a person waits on ask it too, D38).
    public var reachability: any ReachabilityProbe
    /// Onboarding status: per-user cache, backend writes, analytics.
    public var onboarding: any OnboardingStatusService
    /// Which screen the app shows; performs session verification and status fetches.
    public var routing: RouteCoordinator
    /// Geofencing: planned regions, crossings to events, health.
    public var geofence: any GeofenceService
    /// The simulated platform location and region monitor (what `trendy location` drives).
    public var location: SimulatedRegionMonitor
    /// Runs after every sync pass the app starts (geofences follow what the pass pulled).
    public var syncFinished: @Sendable (SyncRun) async -> Void
    /// Releases what the environment holds (HTTP connections, the embedded backend).
    public var close: @Sendable () async -> Void

    /// Creates an environment.
    public init(
        paths: AppPaths, logs: LogSystem, ids: UUIDv7Generator, now: @escaping @Sendable () -> Date,
        modules: [any AppModule], auth: any AuthService, api: any TrendyAPIClient, store: any LocalStore,
        sync: any SyncEngine, onboarding: any OnboardingStatusService, routing: RouteCoordinator,
        geofence: any GeofenceService, location: SimulatedRegionMonitor,
        syncFinished: @escaping @Sendable (SyncRun) async -> Void, reachability: any ReachabilityProbe,
        close: @escaping @Sendable () async -> Void
    ) {
        self.reachability = reachability
        self.syncFinished = syncFinished
        self.geofence = geofence
        self.location = location
        self.onboarding = onboarding
        self.routing = routing
        self.store = store
        self.sync = sync
        self.paths = paths
        self.logs = logs
        self.ids = ids
        self.now = now
        self.modules = modules
        self.auth = auth
        self.api = api
        self.close = close
    }

    /// A logger for one category.
    public func logger(_ category: LogCategory) -> Logger { logs.logger(category) }
}
