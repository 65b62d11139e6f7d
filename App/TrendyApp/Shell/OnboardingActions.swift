import Foundation
import TrendyAuth
import TrendyGeofence
import TrendyGeofenceLive
import TrendyModels
import TrendyOnboarding
import TrendySync

extension AppEnvironment {
    /// Onboarding's use cases on this environment: the local store as their data, the platform's
    /// location permission behind the location prompt when geofencing is built in. Without the
    /// onboarding plugin, a clear error (its commands are not in the program then).
    func onboardingSteps() throws(CLIError) -> OnboardingSteps {
        let onboarding = try requireOnboarding()
        let auth = auth
        return OnboardingSteps(
            status: onboarding, local: StoreOnboardingData(env: self), currentUserId: { auth.currentUserId })
    }

    /// The prompter the permission step asks: `person`, with the location prompt going to the
    /// platform when geofencing is built in.
    func permissionPrompter(_ person: any PermissionPrompter) -> any PermissionPrompter {
        guard let geofence, let location else { return person }
        return PlatformPermissionPrompter(person: person, geofence: geofence, location: location)
    }
}

extension CLIError {
    /// What a person reads when an onboarding step cannot be done.
    init(_ error: OnboardingStepError) {
        switch error {
        case .notSignedIn:
            self.init(
                code: .notSignedIn,
                message: "create an account or sign in first: `trendy signup --email …` or `trendy login --email …`",
                exitCode: .noPermission)
        case .eventTypeNeeded:
            self.init(
                code: .stepIncomplete,
                message: "create your first event type: `trendy onboarding next --type Coffee`",
                exitCode: .usage)
        case .eventNeeded:
            self.init(
                code: .stepIncomplete, message: "log your first event: `trendy onboarding next --log <type>`",
                exitCode: .usage)
        case .cannotGoBack(let from):
            self.init(code: .cannotGoBack, message: "you cannot go back from \(from)", exitCode: .failure)
        case .notSkippable:
            self.init(code: .notSkippable, message: "only the permissions step can be skipped", exitCode: .failure)
        }
    }
}

extension AppEnvironment {
    /// Onboarding's status service, or a clear error when this program is built without it.
    func requireOnboarding() throws(CLIError) -> any OnboardingStatusService {
        guard let onboarding else {
            throw .featureUnavailable("this program is built without onboarding")
        }
        return onboarding
    }

    /// Geofencing and the simulated location, or a clear error when this program is built
    /// without them.
    func requireGeofence() throws(CLIError) -> (service: any GeofenceService, location: any LocationSimulator) {
        guard let geofence, let location else {
            throw .featureUnavailable("this program is built without geofencing")
        }
        return (geofence, location)
    }
}

extension OnboardingSteps {
    /// ``next(typeName:logType:prompter:)`` with step errors as ``CLIError``s.
    func nextStep(typeName: String?, logType: String?, prompter: any PermissionPrompter) async throws
        -> OnboardingPosition
    {
        do {
            return try await next(typeName: typeName, logType: logType, prompter: prompter)
        } catch let error as OnboardingStepError {
            throw CLIError(error)
        }
    }

    /// ``back()`` with its error as a ``CLIError``.
    func backStep() async throws(CLIError) -> OnboardingPosition {
        do { return try await back() } catch { throw CLIError(error) }
    }

    /// ``skip()`` with its error as a ``CLIError``.
    func skipStep() async throws(CLIError) -> OnboardingPosition {
        do { return try await skip() } catch { throw CLIError(error) }
    }
}

/// The local store as onboarding's data: types by name, events logged now.
struct StoreOnboardingData: OnboardingLocalData {
    let env: AppEnvironment

    func hasEventTypes() async throws -> Bool { try await !env.store.eventTypes().isEmpty }

    func hasEvents() async throws -> Bool { try await !env.store.events(limit: 1, since: nil).isEmpty }

    func ensureEventType(named name: String) async throws {
        let name = name.trimmingWhiteSpace
        guard try await env.store.eventType(named: name) == nil else { return }
        try await storeCall { try await env.store.createEventType(EventType(id: env.ids.next(), name: name)) }
    }

    func logEvent(ofType type: String) async throws {
        let type = try await resolveType(env, type)
        let event = Event(id: env.ids.next(), eventTypeId: type.id, timestamp: env.now())
        try await storeCall { try await env.store.createEvent(event) }
    }
}

/// The onboarding's location prompt goes to the platform: allowing runs the geofence manager's
/// two-step request ("while using", then "always"), refusing leaves the platform at "denied".
/// Other permissions are the person's answer alone. A permission already decided on the platform
/// is not asked again.
struct PlatformPermissionPrompter: PermissionPrompter {
    let person: any PermissionPrompter
    let geofence: any GeofenceService
    let location: any LocationSimulator

    func prime(_ kind: PermissionKind, explanation: String) async -> Bool {
        await person.prime(kind, explanation: explanation)
    }

    func requestSystemPermission(_ kind: PermissionKind) async -> Bool {
        guard kind == .location else { return await person.requestSystemPermission(kind) }
        let current = await location.authorization()
        guard current == .notDetermined else { return current.allowsMonitoring }
        // Saved at once: another process (`trendy location show`) reads the device's permission
        // while the app runs (it said "not_determined" after "Allow all").
        guard await person.requestSystemPermission(kind) else {
            await location.setAuthorization(.denied)
            await location.flush()
            return false
        }
        let allowed = await geofence.requestAuthorization().allowsMonitoring
        await location.flush()
        return allowed
    }
}
