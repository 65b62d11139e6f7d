import TrendyAPI
import TrendyModels

/// The local data the onboarding steps look at and create: the first event type and the first
/// event. Sync's local store serves it in the app; tests pass an in-memory one.
public protocol OnboardingLocalData: Sendable {
    /// Whether the device has any event type.
    func hasEventTypes() async throws -> Bool
    /// Whether the device has any event.
    func hasEvents() async throws -> Bool
    /// Creates an event type named `name` unless one with that name exists.
    func ensureEventType(named name: String) async throws
    /// Logs an event of the type named (or with the id) `type`, now; throws when there is none.
    func logEvent(ofType type: String) async throws
}

/// Where someone stands in onboarding.
public enum OnboardingPosition: Sendable, Equatable {
    /// Signed out, at the welcome or account step.
    case signedOut(OnboardingStep)
    /// Signed in, at a step.
    case step(userId: String, OnboardingStep)
    /// Finished.
    case completed(userId: String)

    /// The step's name, or `completed`.
    public var label: String {
        switch self {
        case .signedOut(let s), .step(_, let s): s.rawValue
        case .completed: "completed"
        }
    }

    /// Whether ``OnboardingSteps/back()`` would move (never back past sign-in).
    public var canGoBack: Bool {
        switch self {
        case .completed: false
        case .signedOut(let step): OnboardingFlow.previous(before: step) != nil
        case .step(_, let step): (OnboardingFlow.previous(before: step).map { $0 > .auth }) ?? false
        }
    }
}

/// Why a step could not be done.
public enum OnboardingStepError: Error, Sendable, Equatable {
    /// The next step needs an account.
    case notSignedIn
    /// The event-type step needs a type (none exists and none was named).
    case eventTypeNeeded
    /// The first-event step needs an event (none exists and no type was named to log one).
    case eventNeeded
    /// There is no going back from this position (its label).
    case cannotGoBack(from: String)
    /// Only the permissions step can be skipped.
    case notSkippable
}

/// The onboarding flow's use cases: where someone stands, and each step's work (create a type,
/// log an event, ask for permissions) followed by the move to the next step, on top of
/// ``OnboardingStatusService`` and the local data.
public struct OnboardingSteps: Sendable {
    let status: any OnboardingStatusService
    let local: any OnboardingLocalData
    let currentUserId: @Sendable () -> String?

    /// Creates the use cases.
    public init(
        status: any OnboardingStatusService, local: any OnboardingLocalData,
        currentUserId: @escaping @Sendable () -> String?
    ) {
        self.status = status
        self.local = local
        self.currentUserId = currentUserId
    }

    /// The position from the cache (fetching once when nothing is cached).
    public func position() async -> OnboardingPosition {
        guard let user = currentUserId() else { return .signedOut(status.signedOutStep) }
        var known = status.cachedStatus(for: user)
        if known == nil { known = await status.signedIn(userId: user).status }
        guard let known else {
            // Unknown (offline, cache lost): a device with the account's data is past onboarding.
            let hasData = (try? await local.hasEventTypes()) ?? false
            return hasData ? .completed(userId: user) : .step(userId: user, .createEventType)
        }
        if known.completed { return .completed(userId: user) }
        return .step(userId: user, max(known.currentStep, .createEventType))
    }

    /// Does the current step's work and moves on; returns the new position. `typeName` creates
    /// the first type, `logType` logs the first event, `prompter` answers the permission prompts.
    public func next(typeName: String?, logType: String?, prompter: any PermissionPrompter) async throws
        -> OnboardingPosition
    {
        switch await position() {
        case .signedOut(.welcome):
            status.setSignedOutStep(.auth)
            return .signedOut(.auth)
        case .signedOut:
            throw OnboardingStepError.notSignedIn
        case .completed(let user):
            // Nothing to do, and nothing to write: the position may be inferred (a lost cache on
            // a device with the account's data), and a write would invent a status (D38/case 4).
            return .completed(userId: user)
        case .step(let user, let step):
            return try await perform(step, user: user, typeName: typeName, logType: logType, prompter: prompter)
        }
    }

    func perform(
        _ step: OnboardingStep, user: String, typeName: String?, logType: String?, prompter: any PermissionPrompter
    ) async throws -> OnboardingPosition {
        switch step {
        case .welcome, .auth, .createEventType:
            if let typeName { try await local.ensureEventType(named: typeName) }
            guard try await local.hasEventTypes() else { throw OnboardingStepError.eventTypeNeeded }
            return .step(userId: user, await status.advance(userId: user, to: .logFirstEvent).currentStep)
        case .logFirstEvent:
            if let logType { try await local.logEvent(ofType: logType) }
            guard try await local.hasEvents() else { throw OnboardingStepError.eventNeeded }
            return .step(userId: user, await status.advance(userId: user, to: .permissions).currentStep)
        case .permissions:
            for kind in PermissionKind.allCases {
                let outcome = await PermissionPriming.ask(kind, using: prompter)
                await status.recordPermission(userId: user, kind, outcome)
            }
            return .step(userId: user, await status.advance(userId: user, to: .finish).currentStep)
        case .finish:
            await status.complete(userId: user)
            return .completed(userId: user)
        }
    }

    /// Goes back one step where the rules allow it (never back past sign-in).
    public func back() async throws(OnboardingStepError) -> OnboardingPosition {
        let position = await position()
        switch position {
        case .completed: throw .cannotGoBack(from: "a completed onboarding")
        case .signedOut(let step):
            guard let previous = OnboardingFlow.previous(before: step) else { throw .cannotGoBack(from: step.rawValue) }
            status.setSignedOutStep(previous)
            return .signedOut(previous)
        case .step(let user, let step):
            guard let previous = OnboardingFlow.previous(before: step), previous > .auth else {
                throw .cannotGoBack(from: step.rawValue)
            }
            return .step(userId: user, await status.advance(userId: user, to: previous).currentStep)
        }
    }

    /// Skips the permissions step: every permission not asked yet is recorded as skipped.
    public func skip() async throws(OnboardingStepError) -> OnboardingPosition {
        guard case .step(let user, let step) = await position(), OnboardingFlow.isSkippable(step) else {
            throw .notSkippable
        }
        let known = status.cachedStatus(for: user)
        let current: [PermissionKind: PermissionOutcome] = [
            .notifications: known?.notificationsStatus ?? .notRequested,
            .location: known?.locationStatus ?? .notRequested, .health: known?.healthStatus ?? .notRequested,
        ]
        for kind in PermissionKind.allCases where current[kind] == .notRequested {
            await status.recordPermission(userId: user, kind, .skipped)
        }
        return .step(userId: user, await status.advance(userId: user, to: .finish).currentStep)
    }
}
