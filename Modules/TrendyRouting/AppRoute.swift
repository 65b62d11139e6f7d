import TrendyModels
import TrendyOnboarding

/// Which screen the app shows.
public enum AppRoute: Sendable, Hashable, CustomStringConvertible {
    /// A true cache miss: waiting for the onboarding status (the only loading screen).
    case loading
    /// An onboarding step.
    case onboarding(OnboardingStep)
    /// The sign-in screen.
    case login
    /// The main tabs.
    case authenticated
    /// Something is broken; the message says what.
    case error(String)

    /// `onboarding(welcome)`, `authenticated`, ...
    public var description: String {
        switch self {
        case .loading: "loading"
        case .onboarding(let step): "onboarding(\(step.rawValue))"
        case .login: "login"
        case .authenticated: "authenticated"
        case .error(let m): "error(\(m))"
        }
    }
}

/// What is known locally at launch, read synchronously before anything renders.
public struct LaunchSnapshot: Sendable, Hashable {
    /// The cached session's user, if any (even with an expired token).
    public var userId: String?
    /// That user's cached onboarding status, if any: completed, or the step they were on.
    public var cachedOnboarding: CachedOnboarding?
    /// Whether any user completed onboarding on this device.
    public var deviceSawCompletedUser: Bool
    /// The onboarding step a signed-out person was on (welcome or auth).
    public var signedOutStep: OnboardingStep
    /// Whether this device holds the signed-in account's data (its event types). Read only when
    /// the cache has no status for the user (a damaged or lost cache): such a returning user goes
    /// to the main screen, not to the loading screen and then back into onboarding.
    public var hasAccountData: Bool

    /// Creates a snapshot.
    public init(
        userId: String?, cachedOnboarding: CachedOnboarding?, deviceSawCompletedUser: Bool,
        signedOutStep: OnboardingStep = .welcome, hasAccountData: Bool = false
    ) {
        self.userId = userId
        self.cachedOnboarding = cachedOnboarding
        self.deviceSawCompletedUser = deviceSawCompletedUser
        self.signedOutStep = signedOutStep
        self.hasAccountData = hasAccountData
    }
}

/// The first route, decided synchronously from local state.
public enum InitialRoute {
    /// Completed user → main screen; user mid-way → their step; signed out on a device that saw
    /// a completed user → login; otherwise the signed-out step (welcome, or auth when the person
    /// had got that far). A session with no cached status goes to the main screen when the device
    /// holds the account's data (the cache was damaged or lost), else to loading (a true miss).
    public static func decide(_ s: LaunchSnapshot) -> AppRoute {
        if s.userId != nil {
            switch s.cachedOnboarding {
            case .completed?: return .authenticated
            case .inProgress(let step)?: return .onboarding(step < .createEventType ? .createEventType : step)
            case nil: return s.hasAccountData ? .authenticated : .loading
            }
        }
        return s.deviceSawCompletedUser ? .login : .onboarding(min(s.signedOutStep, .auth))
    }
}
