import TrendyAPI
import TrendyAuth
import TrendyModels
import TrendyOnboarding

/// What routing needs from auth: who is signed in now, the session's events, and the background
/// check of a cached session — three of ``AuthService``'s twelve calls. ``AuthRouting`` serves it
/// from any auth service.
public protocol RoutingAuth: Sendable {
    /// The signed-in user's id right now (a lock read: the first route is decided from it).
    var currentUserId: String? { get }
    /// Validates the cached session with the server.
    func restore() async
    /// A stream of auth events; the first is the current state.
    func events() -> AsyncStream<AuthEvent>
}

extension AuthController: RoutingAuth {}

/// ``RoutingAuth`` over any ``AuthService`` (an app holding the protocol, not the controller).
public struct AuthRouting: RoutingAuth {
    let auth: any AuthService

    /// Routes from `auth`.
    public init(_ auth: any AuthService) { self.auth = auth }

    /// The signed-in user's id right now.
    public var currentUserId: String? { auth.currentUserId }
    /// Validates the cached session with the server.
    public func restore() async { await auth.restore() }
    /// The auth events.
    public func events() -> AsyncStream<AuthEvent> { auth.events() }
}

/// What routing needs from onboarding: the cached positions the first route is decided from and
/// the two fetches its effects make. Narrower than ``OnboardingStatusService`` (which the
/// onboarding screens use); ``OnboardingController`` serves both, and an app without the
/// onboarding feature passes ``NoOnboarding``.
public protocol RoutingOnboarding: Sendable {
    /// The cached position for `userId`, synchronously (nil on a cache miss).
    func cachedPosition(for userId: String) -> CachedOnboarding?
    /// Whether any user completed onboarding on this device (a signed-out launch shows login).
    var deviceSawCompletedUser: Bool { get }
    /// Where a signed-out person left the flow.
    var signedOutStep: OnboardingStep { get }
    /// Rebuilds the cache for `userId` from the server.
    func refresh(userId: String) async -> OnboardingFetch
    /// The status after `userId` signed in (fresh, cached or unavailable).
    func signedIn(userId: String) async -> OnboardingFetch
}

extension OnboardingController: RoutingOnboarding {}

/// Onboarding for an app built without the onboarding feature: every account counts as
/// onboarded, and a signed-out launch shows the sign-in screen.
public struct NoOnboarding: RoutingOnboarding {
    /// The status every account has.
    public static var completedStatus: OnboardingStatus {
        var status = OnboardingStatus.initial
        status.completed = true
        status.currentStep = .finish
        return status
    }

    /// Creates the stand-in.
    public init() {}

    /// Always completed.
    public func cachedPosition(for userId: String) -> CachedOnboarding? { .completed }
    /// Always true: sign-in is the first screen for anyone signed out.
    public var deviceSawCompletedUser: Bool { true }
    /// The sign-in step.
    public var signedOutStep: OnboardingStep { .auth }
    /// Always fresh and completed.
    public func refresh(userId: String) async -> OnboardingFetch { .fresh(Self.completedStatus) }
    /// Always fresh and completed.
    public func signedIn(userId: String) async -> OnboardingFetch { .fresh(Self.completedStatus) }

    /// What the launch reads for `userId` from an app without onboarding.
    public func launchFacts(for userId: String?) -> OnboardingLaunchFacts {
        OnboardingLaunchFacts(
            position: userId.flatMap(cachedPosition(for:)), deviceSawCompletedUser: deviceSawCompletedUser,
            signedOutStep: signedOutStep)
    }
}

/// Which screen the app shows: the first route decided synchronously, then every change as a
/// stream. ``RouteCoordinator`` is the implementation; the app holds this protocol.
public protocol RouteService: Sendable {
    /// The current route.
    var route: AppRoute { get }
    /// Deep links handed over for opening (only ever while authenticated).
    var openedDeepLinks: [String] { get }
    /// Every route, in order, starting with the current one.
    func routes() -> AsyncStream<AppRoute>
    /// Decides the first route (from `snapshot`, or the caches when nil) and starts the effects.
    @discardableResult func launch(with snapshot: LaunchSnapshot?) -> AppRoute
    /// Feeds an event to the route machine.
    func send(_ event: RouteEvent)
    /// Waits until no background effect is running.
    func settle() async
    /// Stops listening and cancels background effects.
    func stop()
}

extension RouteCoordinator: RouteService {}
