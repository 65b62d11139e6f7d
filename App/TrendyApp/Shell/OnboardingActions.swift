import Foundation
import TrendyAPI
import TrendyGeofence
import TrendyGeofenceLive
import TrendyModels
import TrendyOnboarding

/// What the onboarding commands (and the tour) do, on top of ``OnboardingStatusService``: each
/// step's work (create a type, log an event, ask for permissions), then the move to the next step.
struct OnboardingActions {
    let env: AppEnvironment

    /// Where someone stands: signed out (welcome/auth), a step, or completed.
    enum Position: Equatable {
        case signedOut(OnboardingStep)
        case step(userId: String, OnboardingStep)
        case completed(userId: String)

        var label: String {
            switch self {
            case .signedOut(let s), .step(_, let s): s.rawValue
            case .completed: "completed"
            }
        }
    }

    /// The position from the cache (fetching once when nothing is cached).
    func position() async -> Position {
        guard let user = env.auth.currentUserId else { return .signedOut(env.onboarding.signedOutStep) }
        var status = env.onboarding.cachedStatus(for: user)
        if status == nil { status = await env.onboarding.signedIn(userId: user).status }
        guard let status else {
            // Unknown (offline, cache lost): a device with the account's data is past onboarding.
            let hasData = ((try? await env.store.eventTypes()) ?? []).isEmpty == false
            return hasData ? .completed(userId: user) : .step(userId: user, .createEventType)
        }
        if status.completed { return .completed(userId: user) }
        return .step(userId: user, max(status.currentStep, .createEventType))
    }

    /// Does the current step's work and moves on. Returns the new position.
    func next(typeName: String?, logType: String?, prompter: any PermissionPrompter) async throws -> Position {
        switch await position() {
        case .signedOut(.welcome):
            env.onboarding.setSignedOutStep(.auth)
            return .signedOut(.auth)
        case .signedOut:
            throw CLIError(
                code: "not_signed_in",
                message: "create an account or sign in first: `trendy signup --email …` or `trendy login --email …`",
                exitCode: .noPermission)
        case .completed(let user):
            // Nothing to do, and nothing to write: the position may be inferred (a lost cache on
            // a device with the account's data), and a write would invent a status (D38/case 4).
            return .completed(userId: user)
        case .step(let user, let step):
            let platform = PlatformPermissionPrompter(person: prompter, geofence: env.geofence, location: env.location)
            return try await perform(step, user: user, typeName: typeName, logType: logType, prompter: platform)
        }
    }

    func perform(
        _ step: OnboardingStep, user: String, typeName: String?, logType: String?, prompter: any PermissionPrompter
    ) async throws -> Position {
        switch step {
        case .welcome, .auth, .createEventType:
            if let typeName {
                let name = typeName.trimmingWhiteSpace
                if try await env.store.eventType(named: name) == nil {
                    let type = EventType(id: env.ids.next(), name: name, color: "#3B82F6", icon: "circle")
                    try await storeCall { try await env.store.createEventType(type) }
                }
            }
            guard try await !env.store.eventTypes().isEmpty else {
                throw CLIError(
                    code: "step_incomplete",
                    message: "create your first event type: `trendy onboarding next --type Coffee`",
                    exitCode: .usage)
            }
            return .step(userId: user, await env.onboarding.advance(userId: user, to: .logFirstEvent).currentStep)
        case .logFirstEvent:
            if let logType {
                let type = try await resolveType(env, logType)
                let event = Event(id: env.ids.next(), eventTypeId: type.id, timestamp: env.now())
                try await storeCall { try await env.store.createEvent(event) }
            }
            guard try await !env.store.events(limit: 1, since: nil).isEmpty else {
                throw CLIError(
                    code: "step_incomplete", message: "log your first event: `trendy onboarding next --log <type>`",
                    exitCode: .usage)
            }
            return .step(userId: user, await env.onboarding.advance(userId: user, to: .permissions).currentStep)
        case .permissions:
            for kind in PermissionKind.allCases {
                let outcome = await PermissionPriming.ask(kind, using: prompter)
                await env.onboarding.recordPermission(userId: user, kind, outcome)
            }
            return .step(userId: user, await env.onboarding.advance(userId: user, to: .finish).currentStep)
        case .finish:
            await env.onboarding.complete(userId: user)
            return .completed(userId: user)
        }
    }

    /// Whether ``back()`` would move.
    static func canGoBack(_ position: Position) -> Bool {
        switch position {
        case .completed: false
        case .signedOut(let step): OnboardingFlow.previous(before: step) != nil
        case .step(_, let step): (OnboardingFlow.previous(before: step).map { $0 > .auth }) ?? false
        }
    }

    /// Goes back one step where the rules allow it (never back past sign-in).
    func back() async throws -> Position {
        func refused(_ step: String) -> CLIError {
            CLIError(code: "cannot_go_back", message: "you cannot go back from \(step)", exitCode: .failure)
        }
        switch await position() {
        case .completed: throw refused("a completed onboarding")
        case .signedOut(let step):
            guard let previous = OnboardingFlow.previous(before: step) else { throw refused(step.rawValue) }
            env.onboarding.setSignedOutStep(previous)
            return .signedOut(previous)
        case .step(let user, let step):
            guard let previous = OnboardingFlow.previous(before: step), previous > .auth else {
                throw refused(step.rawValue)
            }
            return .step(userId: user, await env.onboarding.advance(userId: user, to: previous).currentStep)
        }
    }

    /// Skips the permissions step: every permission not asked yet is recorded as skipped.
    func skip() async throws -> Position {
        guard case .step(let user, let step) = await position(), OnboardingFlow.isSkippable(step) else {
            throw CLIError(
                code: "not_skippable", message: "only the permissions step can be skipped", exitCode: .failure)
        }
        let status = env.onboarding.cachedStatus(for: user)
        let current: [PermissionKind: PermissionOutcome] = [
            .notifications: status?.notificationsStatus ?? .notRequested,
            .location: status?.locationStatus ?? .notRequested, .health: status?.healthStatus ?? .notRequested,
        ]
        for kind in PermissionKind.allCases where current[kind] == .notRequested {
            await env.onboarding.recordPermission(userId: user, kind, .skipped)
        }
        return .step(userId: user, await env.onboarding.advance(userId: user, to: .finish).currentStep)
    }
}

/// The onboarding's location prompt goes to the platform: allowing runs the geofence manager's
/// two-step request ("while using", then "always"), refusing leaves the platform at "denied".
/// Other permissions are the person's answer alone. A permission already decided on the platform
/// is not asked again.
struct PlatformPermissionPrompter: PermissionPrompter {
    let person: any PermissionPrompter
    let geofence: any GeofenceService
    let location: SimulatedRegionMonitor

    func prime(_ kind: PermissionKind, explanation: String) async -> Bool {
        await person.prime(kind, explanation: explanation)
    }

    func requestSystemPermission(_ kind: PermissionKind) async -> Bool {
        guard kind == .location else { return await person.requestSystemPermission(kind) }
        let current = await location.authorization()
        guard current == .notDetermined else { return current.allowsMonitoring }
        guard await person.requestSystemPermission(kind) else {
            await location.setAuthorization(.denied)
            return false
        }
        return await geofence.requestAuthorization().allowsMonitoring
    }
}
