import TrendyAPI
import TrendyModels

/// Persists ``OnboardingCacheState`` on the device. Reads are synchronous: the launch decision
/// needs them before anything renders.
public protocol OnboardingCache: Sendable {
    /// The stored state, or ``OnboardingCacheState/empty`` when there is none (or it is unreadable).
    func load() -> OnboardingCacheState
    /// Replaces the stored state durably.
    func save(_ state: OnboardingCacheState) throws
}

/// The permissions onboarding primes and asks for.
public enum PermissionKind: String, Codable, Sendable, CaseIterable {
    /// Reminders and sync notices.
    case notifications
    /// Geofences ("always" location).
    case location
    /// Health data import.
    case health
}

/// The system's permission prompt. On a phone this is the OS dialog; on Linux the CLI answers it
/// (interactively or by flag).
public protocol PermissionPrompter: Sendable {
    /// Shows the priming explanation; true when the person chose to continue, false for "not now".
    func prime(_ kind: PermissionKind, explanation: String) async -> Bool
    /// Shows the system prompt; true when the person allowed it.
    func requestSystemPermission(_ kind: PermissionKind) async -> Bool
}

/// What a fetch of the onboarding status produced.
public enum OnboardingFetch: Sendable, Equatable {
    /// The server answered (local changes not yet sent are applied on top).
    case fresh(OnboardingStatus)
    /// The server did not answer in time or at all; this is the cached status.
    case cached(OnboardingStatus, reason: String)
    /// No server answer and nothing cached.
    case unavailable(reason: String)

    /// The status, if any.
    public var status: OnboardingStatus? {
        switch self {
        case .fresh(let s), .cached(let s, _): s
        case .unavailable: nil
        }
    }
}

/// Onboarding's status: the cache is the fast path, the backend is the truth.
///
/// ```swift
/// let onboarding: any OnboardingStatusService = ...   // built by the composition root
/// onboarding.cachedPosition(for: user)                 // synchronous, at launch
/// let status = await onboarding.signedIn(userId: user) // fresh status after sign-in
/// _ = await onboarding.advance(userId: user, to: .logFirstEvent)
/// ```
///
/// Threading: every member may be called from any task; synchronous reads take a lock only.
/// Writes go to the cache first, then to the backend; a failed backend write stays pending and
/// is retried by ``flushPending()`` (never dropped).
public protocol OnboardingStatusService: Sendable {
    /// The cached status for a user, if any (synchronous).
    func cachedStatus(for userId: String) -> OnboardingStatus?
    /// The cached position for a user, if any (synchronous).
    func cachedPosition(for userId: String) -> CachedOnboarding?
    /// Whether any user completed onboarding on this device (synchronous).
    var deviceSawCompletedUser: Bool { get }
    /// The step a signed-out person is on (welcome or auth).
    var signedOutStep: OnboardingStep { get }
    /// Moves a signed-out person between welcome and auth.
    func setSignedOutStep(_ step: OnboardingStep)
    /// Fetches the status from the server (with a timeout), falling back to the cache.
    func refresh(userId: String) async -> OnboardingFetch
    /// After a sign-in: always fetches fresh status, then moves a new user past the auth step
    /// (past creating a type when they already have one). Returns where the user stands.
    func signedIn(userId: String) async -> OnboardingFetch
    /// Moves to `step`, recording that the current step was completed.
    @discardableResult func advance(userId: String, to step: OnboardingStep) async -> OnboardingStatus
    /// Stores a permission outcome.
    @discardableResult func recordPermission(
        userId: String, _ kind: PermissionKind, _ outcome: PermissionOutcome
    ) async -> OnboardingStatus
    /// Finishes onboarding (idempotent).
    @discardableResult func complete(userId: String) async -> OnboardingStatus
    /// Starts onboarding over for a user (server first; throws when it cannot be reached).
    func reset(userId: String) async throws(TrendyAPIError) -> OnboardingStatus
    /// Sends the signed-in user's pending write, if any. Returns whether nothing is left pending.
    @discardableResult func flushPending() async -> Bool
    /// The pending write for a user, if any.
    func pendingWrite(for userId: String) -> PendingOnboardingWrite?
    /// The local analytics log.
    func analyticsEvents() -> [AnalyticsEvent]
}
