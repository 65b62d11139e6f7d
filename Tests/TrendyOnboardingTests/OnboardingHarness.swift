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
        var c = ServerConfiguration()
        c.port = 0
        c.databasePath = nil
        c.bcryptCost = 4
        c.jwtSecret = String(repeating: "o", count: 40)
        let server = try await TrendyServer(configuration: c, logs: LogSystem.disabled())
        let running = try await server.start()
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            var request = HTTPClientRequest(url: running.baseURL.absoluteString + "/auth/v1/signup")
            request.method = .POST
            request.body = .bytes(
                ByteBuffer(
                    string: #"{"email":"ob-\#(UUID().uuidString.prefix(8))@example.com","password":"password-1"}"#))
            let response = try await http.execute(request, timeout: .seconds(10))
            let data = try await response.body.collect(upTo: 1 << 20)
            let session = try TrendyJSON.decoder().decode(GoTrueSession.self, from: Data(data.readableBytesView))
            let direct = LiveTrendyAPIClient(
                configuration: .init(baseURL: running.baseURL, budget: NetworkBudget(request: .seconds(10))),
                http: http,
                tokens: StaticTokenProvider(session.accessToken), logger: LogSystem.disabled().logger(.api))
            let h = OnboardingHarness(
                api: InterceptingAPIClient(direct), direct: direct, cache: InMemoryOnboardingCache(),
                userId: session.user.id, signedIn: Flag(true), hasTypes: Flag(false), server: server)
            try await body(h)
        } catch {
            try? await http.shutdown()
            await running.stop()
            throw error
        }
        try await http.shutdown()
        await running.stop()
    }
}
