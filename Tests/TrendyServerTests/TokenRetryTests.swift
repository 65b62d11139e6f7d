import Foundation
import Synchronization
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyLogging
import TrendyServerTestSupport

/// A provider that hands out a stale token until told it was rejected.
final class RotatingTokens: AccessTokenProvider {
    let state: Mutex<(token: String, rejections: [String])>
    let fresh: String?

    init(stale: String, fresh: String?) {
        state = Mutex((stale, []))
        self.fresh = fresh
    }

    func accessToken() async throws -> String? { state.withLock { $0.token } }

    func accessTokenRejected(_ token: String) async {
        state.withLock { s in
            s.rejections.append(token)
            if let fresh { s.token = fresh }
        }
    }

    var rejections: [String] { state.withLock { $0.rejections } }
}

/// The live client's answer to a 401: tell the provider, retry once, never loop.
@Suite(.timeLimit(.minutes(5)))
struct TokenRetryTests {
    func client(_ h: ServerHarness, _ tokens: RotatingTokens) -> LiveTrendyAPIClient {
        LiveTrendyAPIClient(
            configuration: .init(baseURL: h.baseURL, budget: .forTests()), http: h.http,
            tokens: tokens,
            logger: LogSystem.disabled().logger(.api))
    }

    @Test func aRejectedTokenIsReplacedAndTheRequestRetriedOnce() async throws {
        try await ServerHarness.with { h in
            let session = try await h.signUp()
            let tokens = RotatingTokens(stale: "stale.token.value", fresh: session.accessToken)
            let types = try await client(h, tokens).listEventTypes()
            #expect(types.isEmpty)
            #expect(tokens.rejections == ["stale.token.value"])
        }
    }

    @Test func aTokenThatStaysRejectedEndsAsUnauthorizedAfterOneRetry() async throws {
        try await ServerHarness.with { h in
            let tokens = RotatingTokens(stale: "stale.token.value", fresh: nil)
            let error = await apiError { () throws(TrendyAPIError) in
                _ = try await client(h, tokens).listEventTypes()
            }
            guard case .unauthorized = error else {
                Issue.record("expected unauthorized, got \(String(describing: error))")
                return
            }
            #expect(tokens.rejections == ["stale.token.value"])
        }
    }
}
