import Foundation
import Logging
import Synchronization
import TrendyAuth
import TrendyLogging
import TrendyModels
import TrendyOnboarding

/// The executor around ``RouteMachine``: decides the first route synchronously from the auth and
/// onboarding caches, then performs the machine's effects (session verification, onboarding
/// status fetches) in the background and turns auth events into route events.
///
/// ```swift
/// let routing = RouteCoordinator(auth: AuthRouting(auth), onboarding: onboarding, logger: logs.logger(.routing))
/// let routes = routing.routes()          // every route, in order, starting with the first
/// let first = routing.launch()           // synchronous: no network, no database
/// await routing.settle()                 // wait for background effects (tests, CLI)
/// ```
///
/// Threading: every member may be called from any task. Events are applied one at a time under a
/// lock and routes are published in the order they were decided.
public final class RouteCoordinator: Sendable {
    struct State {
        var machine = RouteMachine()
        var observers: [UUID: AsyncStream<AppRoute>.Continuation] = [:]
        var work: [UUID: Task<Void, Never>] = [:]
        var listener: Task<Void, Never>?
        var deepLinks: [String] = []
    }

    let auth: any RoutingAuth
    let onboarding: any RoutingOnboarding
    let logger: Logger
    let state = Mutex(State())

    /// Creates a coordinator; nothing happens until ``launch()``.
    public init(auth: any RoutingAuth, onboarding: any RoutingOnboarding, logger: Logger) {
        self.auth = auth
        self.onboarding = onboarding
        self.logger = logger
    }

    /// The current route.
    public var route: AppRoute { state.withLock { $0.machine.route } }

    /// Deep links handed over for opening (only ever while authenticated).
    public var openedDeepLinks: [String] { state.withLock { $0.deepLinks } }

    /// What is known locally right now, read synchronously from the caches.
    public func snapshot() -> LaunchSnapshot {
        let user = auth.currentUserId
        return LaunchSnapshot(
            userId: user, cachedOnboarding: user.flatMap { onboarding.cachedPosition(for: $0) },
            deviceSawCompletedUser: onboarding.deviceSawCompletedUser, signedOutStep: onboarding.signedOutStep)
    }

    /// A stream of routes: the current one first, then every change.
    public func routes() -> AsyncStream<AppRoute> {
        let (stream, continuation) = AsyncStream.makeStream(of: AppRoute.self, bufferingPolicy: .unbounded)
        let id = UUID()
        state.withLock { s in
            if s.machine.launched { continuation.yield(s.machine.route) }
            s.observers[id] = continuation
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.observers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Decides the first route synchronously and starts the background work (session
    /// verification, a status fetch on a cache miss, listening to auth events). Runs once.
    /// `snapshot` lets the caller pass the state it already decided from (the launch reads the
    /// files before the rest of the app is built); by default it is read now.
    @discardableResult
    public func launch(with snapshot: LaunchSnapshot? = nil) -> AppRoute {
        let snapshot = snapshot ?? self.snapshot()
        let events = auth.events()
        let started = state.withLock { s -> Bool in
            guard s.listener == nil else { return false }
            s.listener = Task { [weak self] in
                for await event in events {
                    guard let self else { return }
                    if let routeEvent = Self.routeEvent(for: event) { self.send(routeEvent) }
                }
            }
            return true
        }
        if started { send(.launched(snapshot)) }
        return route
    }

    /// Applies one event and performs its effects.
    public func send(_ event: RouteEvent) {
        let effects = state.withLock { s -> [RouteEffect] in
            let (before, wasLaunched) = (s.machine.route, s.machine.launched)
            let effects = s.machine.handle(event)
            // Publish every change, and the first route even when it is the machine's initial one.
            if s.machine.route != before || (!wasLaunched && s.machine.launched) {
                for observer in s.observers.values { observer.yield(s.machine.route) }
            }
            return effects
        }
        for effect in effects { perform(effect) }
    }

    /// Maps an auth event to a route event (the initial session is the launch's business).
    static func routeEvent(for event: AuthEvent) -> RouteEvent? {
        switch event {
        case .initialSession, .tokenRefreshed, .userUpdated: nil
        case .signedIn(let session): .signedIn(userId: session.user.id)
        case .signedOut(.sessionRevoked): .sessionRejected
        case .signedOut(.userInitiated): .signedOut
        }
    }

    func perform(_ effect: RouteEffect) {
        switch effect {
        case .logTransition(let from, let to):
            logger.info("Route changed", metadata: ["from": .string(from.description), "to": .string(to.description)])
        case .logRejected(let event, let route):
            logger.warning(
                "Route event rejected", metadata: ["event": .string("\(event)"), "route": .string(route.description)])
        case .openDeepLink(let link):
            logger.info("Opening deep link", metadata: ["link": .string(link)])
            state.withLock { $0.deepLinks.append(link) }
        case .verifySession:
            spawn { [auth] coordinator in
                // Waits for the real restore: only a server rejection ends the session (and that
                // arrives as an auth event); a slow or absent network keeps the user where they are.
                await auth.restore()
                if auth.currentUserId != nil { coordinator.send(.sessionVerified) }
            }
        case .repairOnboardingCache(let userId):
            spawn { [onboarding, logger] _ in
                if case .fresh = await onboarding.refresh(userId: userId) {
                    logger.notice("The onboarding cache was rebuilt from the server")
                }
            }
        case .fetchOnboardingStatus(let userId):
            spawn { [onboarding] coordinator in
                let fetched = await onboarding.signedIn(userId: userId)
                guard coordinator.auth.currentUserId == userId else { return }
                let status = fetched.status.map(CachedOnboarding.init) ?? .inProgress(.createEventType)
                coordinator.send(.onboardingStatusLoaded(status))
            }
        }
    }

    func spawn(_ body: @escaping @Sendable (RouteCoordinator) async -> Void) {
        let id = UUID()
        state.withLock { s in
            s.work[id] = Task { [weak self] in
                guard let self else { return }
                await body(self)
                _ = self.state.withLock { $0.work.removeValue(forKey: id) }
            }
        }
    }

    /// Waits until no background effect is running (new effects started meanwhile included).
    public func settle() async {
        while let next = state.withLock({ $0.work.values.first }) { await next.value }
    }

    /// Stops listening to auth events and cancels background effects.
    public func stop() {
        let (tasks, observers) = state.withLock { s in
            let all = Array(s.work.values) + [s.listener].compactMap { $0 }
            let observers = Array(s.observers.values)
            s.work = [:]
            s.listener = nil
            s.observers = [:]
            return (all, observers)
        }
        for task in tasks { task.cancel() }
        // Outside the lock: finishing runs the streams' termination handlers, which take it.
        for observer in observers { observer.finish() }
    }
}
