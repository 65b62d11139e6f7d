import AsyncHTTPClient
import Foundation
import Logging
import NIOHTTP1
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyAuth
import TrendyAuthGoTrue
import TrendyAuthLive
import TrendyLogging
import TrendyModels
import TrendyServer
import TrendyServerTestSupport
import TrendyTestSupport

/// The live auth stack (GoTrue gateway, file store, controller) against the real dev server.
@Suite(.timeLimit(.minutes(5)))
struct GoTrueGatewayTests {
    func gateway(_ h: ServerHarness, logs: LogSystem = .disabled()) -> GoTrueAuthGateway {
        GoTrueAuthGateway(
            configuration: .init(
                baseURL: h.baseURL.appendingPathComponent("auth/v1"), budget: .forTests()),
            http: h.http, logger: logs.logger(.auth))
    }

    @Test func gatewayCoversEveryCallAndMapsErrors() async throws {
        try await ServerHarness.with { h in
            let g = gateway(h)
            let session = try await g.signUp(email: "gw@example.com", password: "password-1")
            #expect(session.user.email == "gw@example.com")
            #expect(session.expiresAt > h.clock.now)
            await #expect(throws: AuthError.userAlreadyExists) {
                try await g.signUp(email: "gw@example.com", password: "password-1")
            }
            await #expect(throws: AuthError.invalidCredentials) {
                try await g.signIn(email: "gw@example.com", password: "wrong-one")
            }
            await #expect(throws: AuthError.invalidCredentials) {
                try await g.signIn(email: "nobody@example.com", password: "wrong-one")
            }
            let signedIn = try await g.signIn(email: "gw@example.com", password: "password-1")
            #expect(try await g.user(accessToken: signedIn.accessToken).id == session.user.id)
            let refreshed = try await g.refresh(refreshToken: signedIn.refreshToken)
            #expect(refreshed.refreshToken != signedIn.refreshToken)
            h.clock.advance(60)
            await #expect(throws: AuthError.sessionRevoked(code: "refresh_token_already_used")) {
                try await g.refresh(refreshToken: signedIn.refreshToken)
            }
            await #expect(throws: AuthError.sessionRevoked(code: "session_not_found")) {
                try await g.user(accessToken: refreshed.accessToken)
            }
            try await g.signOut(accessToken: session.accessToken, scope: .global)
            try await g.signOut(accessToken: session.accessToken, scope: .global)
        }
    }

    @Test func unreachableServerIsANetworkError() async throws {
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let g = GoTrueAuthGateway(
            configuration: .init(
                baseURL: URL(string: "http://127.0.0.1:1/auth/v1")!, budget: NetworkBudget(request: .seconds(5))),
            http: http,
            logger: LogSystem.disabled().logger(.auth))
        do {
            _ = try await g.signIn(email: "a@example.com", password: "password-1")
            Issue.record("expected a network error")
        } catch {
            guard case .network = error else {
                Issue.record("expected network, got \(error)")
                try await http.shutdown()
                return
            }
        }
        try await http.shutdown()
    }

    /// signup → API calls → token expiry with a short lifetime → transparent refresh → logout,
    /// with the API client taking its tokens from the controller.
    @Test func controllerRefreshesTransparentlyDuringAPICalls() async throws {
        try await ServerHarness.with(.testing { $0.accessTokenLifetime = .seconds(120) }) { h in
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("trendy-auth-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: dir) }
            let sink = InMemoryLogSink()
            let logs = LogSystem(configuration: .init(defaultLevel: .trace), sinks: [sink])
            let store = FileSessionStore(file: dir.appendingPathComponent("session.json"), logger: logs.logger(.auth))
            let auth = AuthController(
                store: store, gateway: gateway(h, logs: logs), refreshMargin: 30, now: { h.clock.now },
                logger: logs.logger(.auth))
            let api = LiveTrendyAPIClient(
                configuration: .init(baseURL: h.baseURL), http: h.http, tokens: ControllerTokens(auth: auth),
                logger: logs.logger(.api))
            let session = try await auth.signUp(email: "flow@example.com", password: "password-flow-1")
            _ = try await api.createEventType(EventTypeCreate(name: "Tea"), idempotencyKey: nil)
            h.clock.advance(100)  // inside the refresh margin
            #expect(try await api.listEventTypes().count == 1)
            let afterRefresh = try #require(auth.currentSession)
            #expect(afterRefresh.refreshToken != session.refreshToken)
            #expect(store.load() == afterRefresh)
            // Long past expiry: the controller refreshes before sending (the 401 path is in TokenRetryTests).
            h.clock.advance(500)
            #expect(try await api.syncSummary().eventTypeCount == 1)
            // Reusing the first, rotated refresh token now is theft: the server revokes the session.
            let stolen = try await h.raw(
                .POST, "/auth/v1/token?grant_type=refresh_token", body: #"{"refresh_token":"\#(session.refreshToken)"}"#
            )
            #expect(stolen.status == 400)
            await #expect(throws: AuthError.self) { try await auth.fetchUser() }
            #expect(auth.currentSession == nil)
            #expect(store.load() == nil)
            let text = sink.rendered(.json)
            for secret in ["password-flow-1", session.accessToken, session.refreshToken, afterRefresh.refreshToken] {
                #expect(!text.contains(secret))
            }
        }
    }
}

/// Adapts the controller to the API client's token provider (as the composition root does).
struct ControllerTokens: AccessTokenProvider {
    let auth: AuthController
    func accessToken() async throws -> String? { try await auth.validAccessToken() }
    func accessTokenRejected(_ token: String) async { await auth.accessTokenRejected(token) }
}
