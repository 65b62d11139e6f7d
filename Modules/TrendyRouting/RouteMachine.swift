import TrendyModels
import TrendyOnboarding

/// What happens to the app, as routing sees it.
public enum RouteEvent: Sendable, Hashable {
    /// The app launched with this local state (handled once).
    case launched(LaunchSnapshot)
    /// The server accepted the session (background verification).
    case sessionVerified
    /// The server rejected the session (not a network failure).
    case sessionRejected
    /// Someone signed in (or up).
    case signedIn(userId: String)
    /// The onboarding status arrived (after a cache miss or a sign-in).
    case onboardingStatusLoaded(CachedOnboarding)
    /// The user moved to an onboarding step.
    case onboardingStepChanged(OnboardingStep)
    /// Onboarding finished.
    case onboardingCompleted
    /// The session ended.
    case signedOut
    /// A deep link was opened.
    case deepLink(String)
    /// Something failed that the user must see.
    case failed(String)
}

/// What the executor must do after a transition.
public enum RouteEffect: Sendable, Hashable {
    /// Verify the session with the server in the background (waits for the real restore).
    case verifySession
    /// Fetch the onboarding status for this user.
    case fetchOnboardingStatus(userId: String)
    /// Fetch the status only to rebuild a lost cache (the route does not wait for it, and
    /// nothing is written to the server).
    case repairOnboardingCache(userId: String)
    /// Open this deep link.
    case openDeepLink(String)
    /// Log the transition.
    case logTransition(from: AppRoute, to: AppRoute)
    /// Log an event that is not valid in the current route (the route stays).
    case logRejected(event: RouteEvent, route: AppRoute)
}

/// The route state machine: one `handle(_:)` returns the effects; invalid events change nothing.
public struct RouteMachine: Sendable, Hashable {
    /// The current route.
    public private(set) var route: AppRoute = .loading
    /// Whether the launch was handled (initialisation runs once).
    public private(set) var launched = false
    /// The signed-in user, as routing knows it.
    public private(set) var userId: String?

    /// A machine before launch.
    public init() {}

    /// Applies one event and returns what to do.
    public mutating func handle(_ event: RouteEvent) -> [RouteEffect] {
        let from = route
        switch (event, route) {
        case (.launched(let snapshot), _) where !launched:
            launched = true
            userId = snapshot.userId
            route = InitialRoute.decide(snapshot)
            var effects = transition(from)
            if let user = snapshot.userId {
                effects.append(.verifySession)
                if snapshot.cachedOnboarding == nil {
                    effects.append(
                        snapshot.hasAccountData
                            ? .repairOnboardingCache(userId: user) : .fetchOnboardingStatus(userId: user))
                }
            }
            return effects

        case (.launched, _):
            // Initialisation runs once.
            return [.logRejected(event: event, route: route)]

        case (_, _) where !launched:
            return [.logRejected(event: event, route: route)]

        case (.sessionVerified, _):
            return []

        case (.sessionRejected, .authenticated), (.sessionRejected, .onboarding), (.sessionRejected, .loading):
            guard userId != nil else { return [.logRejected(event: event, route: route)] }
            userId = nil
            route = .login
            return transition(from)

        case (.signedIn(let user), .login), (.signedIn(let user), .onboarding(.auth)),
            (.signedIn(let user), .onboarding(.welcome)):
            userId = user
            route = .loading
            return transition(from) + [.fetchOnboardingStatus(userId: user)]

        case (.onboardingStatusLoaded(let status), .loading) where userId != nil:
            switch status {
            case .completed: route = .authenticated
            case .inProgress(let step): route = .onboarding(step < .createEventType ? .createEventType : step)
            }
            return transition(from)

        case (.onboardingStepChanged(let step), .onboarding(let current)):
            let allowed =
                step == OnboardingFlow.next(after: current) || step == OnboardingFlow.previous(before: current)
                || (current == .welcome && step == .auth)
            guard allowed, !OnboardingFlow.requiresAuth(step) || userId != nil else {
                return [.logRejected(event: event, route: route)]
            }
            route = .onboarding(step)
            return transition(from)

        case (.onboardingCompleted, .onboarding) where userId != nil:
            route = .authenticated
            return transition(from)

        case (.signedOut, .authenticated), (.signedOut, .onboarding), (.signedOut, .loading), (.signedOut, .error):
            guard userId != nil else { return [.logRejected(event: event, route: route)] }
            userId = nil
            route = .login
            return transition(from)

        case (.deepLink(let link), .authenticated):
            return [.openDeepLink(link)]

        case (.failed(let message), _):
            route = .error(message)
            return transition(from)

        default:
            return [.logRejected(event: event, route: route)]
        }
    }

    func transition(_ from: AppRoute) -> [RouteEffect] {
        from == route ? [] : [.logTransition(from: from, to: route)]
    }
}
