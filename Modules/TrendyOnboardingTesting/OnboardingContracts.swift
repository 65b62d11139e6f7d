import Foundation
import Testing
import TrendyAPI
import TrendyModels
import TrendyOnboarding

/// What every ``OnboardingCache`` must do (the in-memory double and the file cache here, an
/// app's own store elsewhere). See docs/porting.md.
public enum OnboardingCacheContract {
    /// Runs the contract. `fresh` makes an empty cache over storage of its own; `reopen`, when it
    /// persists, makes a second cache over the same storage.
    public static func verify(
        fresh: () throws -> any OnboardingCache, reopen: ((any OnboardingCache) throws -> any OnboardingCache)? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let cache = try fresh()
        #expect(cache.load() == .empty, "a new cache is empty", sourceLocation: sourceLocation)
        var state = OnboardingCacheState.empty
        state.deviceSawCompletedUser = true
        var status = OnboardingStatus.initial
        status.currentStep = .permissions
        status.updatedAt = Date(timeIntervalSince1970: 1_900_000_000)
        state.users["user-1"] = OnboardingUserRecord(status: status)
        try cache.save(state)
        #expect(cache.load() == state, "a saved state loads back whole", sourceLocation: sourceLocation)
        if let reopen {
            #expect(try reopen(cache).load() == state, "another process sees it", sourceLocation: sourceLocation)
        }
        try cache.save(.empty)
        #expect(cache.load() == .empty, "saving replaces", sourceLocation: sourceLocation)
    }
}

/// What every ``OnboardingRemote`` must do: the server's behaviour for the three calls, run
/// against the live client on a real server and against ``InMemoryOnboardingBackend`` — which
/// is how the fake is known to behave like the server.
public enum OnboardingRemoteContract {
    /// Runs the contract against `remote`, which must be a new user's (nothing stored yet).
    public static func verify(_ remote: any OnboardingRemote, sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        let first = try await remote.onboardingStatus()
        #expect(!first.completed, "a new user starts not completed", sourceLocation: sourceLocation)
        #expect(first.currentStep == .welcome, "at the first step", sourceLocation: sourceLocation)
        #expect(try await remote.onboardingStatus() == first, "reading changes nothing", sourceLocation: sourceLocation)

        let moved = try await remote.updateOnboarding(
            OnboardingUpdate(currentStep: .permissions, locationStatus: .denied), idempotencyKey: nil)
        #expect(moved.currentStep == .permissions, "an update moves the step", sourceLocation: sourceLocation)
        #expect(moved.locationStatus == .denied, "and sets what it names", sourceLocation: sourceLocation)
        #expect(
            moved.notificationsStatus == first.notificationsStatus, "and nothing else", sourceLocation: sourceLocation)
        #expect(try await remote.onboardingStatus() == moved, "the update is stored", sourceLocation: sourceLocation)

        let key = "contract-\(UUID().uuidString)"
        let finish = OnboardingUpdate(currentStep: .finish, stepCompletedAt: ["permissions": Date()])
        let stepped = try await remote.updateOnboarding(finish, idempotencyKey: key)
        #expect(
            try await remote.updateOnboarding(finish, idempotencyKey: key) == stepped,
            "the same key and update again answers the same", sourceLocation: sourceLocation)
        do {
            _ = try await remote.updateOnboarding(OnboardingUpdate(currentStep: .welcome), idempotencyKey: key)
            Issue.record("a key reused for another update is refused", sourceLocation: sourceLocation)
        } catch {
            #expect(
                error.problem?.code == "idempotency_key_reused", "refused as a reused key, got \(error)",
                sourceLocation: sourceLocation)
        }
        #expect(try await remote.onboardingStatus() == stepped, "and changes nothing", sourceLocation: sourceLocation)

        let done = try await remote.updateOnboarding(OnboardingUpdate(completed: true), idempotencyKey: nil)
        #expect(done.completed && done.completedAt != nil, "completing stamps the time", sourceLocation: sourceLocation)

        let reset = try await remote.resetOnboarding()
        #expect(
            !reset.completed && reset.currentStep == .welcome, "a reset starts over", sourceLocation: sourceLocation)
        #expect(
            reset.locationStatus == first.locationStatus && reset.completedAt == nil, "with nothing recorded",
            sourceLocation: sourceLocation)
        #expect(try await remote.onboardingStatus() == reset, "and is stored", sourceLocation: sourceLocation)
    }
}

/// What every ``PermissionPrompter`` must do: the explanation first, the system's prompt only for
/// people who chose to continue, the person's answer reported as it was given, and a decided
/// permission answered the same way when asked again. `make` builds a prompter whose person
/// answers `answers` (the scripted double, the CLI's prompter with its flags; a notification
/// prompter in an app's UI tests). See docs/porting.md.
public enum PermissionPrompterContract {
    /// Runs the contract.
    public static func verify(
        make: ([PermissionKind: ScriptedPermissionPrompter.Answer]) -> any PermissionPrompter,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let answers: [PermissionKind: ScriptedPermissionPrompter.Answer] = [
            .notifications: .allow, .location: .deny, .health: .notNow,
        ]
        let expected: [PermissionKind: PermissionOutcome] = [
            .notifications: .granted, .location: .denied, .health: .skipped,
        ]
        let prompter = make(answers)
        for kind in PermissionKind.allCases {
            #expect(
                await PermissionPriming.ask(kind, using: prompter) == expected[kind],
                "\(kind.rawValue): the person's answer", sourceLocation: sourceLocation)
            #expect(
                await PermissionPriming.ask(kind, using: prompter) == expected[kind],
                "\(kind.rawValue): the same answer when asked again", sourceLocation: sourceLocation)
        }
        let everything = make([.notifications: .allow, .location: .allow, .health: .allow])
        for kind in PermissionKind.allCases {
            #expect(
                await PermissionPriming.ask(kind, using: everything) == .granted, "\(kind.rawValue): allowed",
                sourceLocation: sourceLocation)
        }
    }
}
