import Foundation
import Synchronization
import TrendyAPI
import TrendyLogging
import TrendyOnboarding
import TrendyOnboardingTesting

/// A signed-in user, the in-memory backend (which answers like the server, records every call
/// and can fail or hold calls) and a controller over an in-memory cache. No server starts.
struct OnboardingHarness: Sendable {
    let api: InMemoryOnboardingBackend
    let cache: InMemoryOnboardingCache
    let userId: String
    let signedIn: Flag
    let hasTypes: Flag

    /// The server's side, read and changed directly: not recorded, held or failed like the
    /// controller's calls.
    var direct: Direct { Direct(backend: api) }

    struct Direct {
        let backend: InMemoryOnboardingBackend
        func onboardingStatus() -> OnboardingStatus { backend.serverStatus }
        func updateOnboarding(_ update: OnboardingUpdate) { backend.applyOnServer(update) }
    }

    final class Flag: Sendable {
        let value: Mutex<Bool>
        init(_ v: Bool) { value = Mutex(v) }
        var on: Bool { value.withLock { $0 } }
        func set(_ v: Bool) { value.withLock { $0 = v } }
    }

    /// A controller over the harness's cache (a "process" on this device).
    func controller(timeout: Duration = .seconds(3)) -> OnboardingController {
        OnboardingController(
            cache: cache, api: api, currentUserId: { [signedIn, userId] in signedIn.on ? userId : nil },
            hasEventTypes: { [hasTypes] in hasTypes.on }, fetchTimeout: timeout,
            logger: LogSystem.disabled().logger(.onboarding))
    }

    static func with(_ body: (OnboardingHarness) async throws -> Void) async throws {
        try await body(
            OnboardingHarness(
                api: InMemoryOnboardingBackend(), cache: InMemoryOnboardingCache(), userId: "user-\(UUID().uuidString)",
                signedIn: Flag(true), hasTypes: Flag(false)))
    }
}
