import AsyncHTTPClient
import Foundation
import NIOCore
import Synchronization
import TrendyAPI
import TrendyAPILive
import TrendyAPITesting
import TrendyLogging
import TrendyModels
import TrendyOnboarding
import TrendyOnboardingTesting
import TrendyServer
import TrendyServerTestSupport

/// A real server, a signed-up user, an ``InterceptingAPIClient`` and a controller over an
/// in-memory cache.
struct OnboardingHarness: Sendable {
    let api: InterceptingAPIClient
    let direct: LiveTrendyAPIClient
    let cache: InMemoryOnboardingCache
    let userId: String
    let signedIn: Flag
    let hasTypes: Flag
    let server: TrendyServer

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
        try await RunningTestServer.with(.testing()) { server in
            let (direct, session) = try await server.signedUpClient()
            let h = OnboardingHarness(
                api: InterceptingAPIClient(direct), direct: direct, cache: InMemoryOnboardingCache(),
                userId: session.user.id, signedIn: Flag(true), hasTypes: Flag(false), server: server.server)
            try await body(h)
        }
    }
}

/// The recording wrapper serves onboarding's port like the live client it wraps.
