import Foundation
import Testing
import TrendyAuth
import TrendyAuthTesting
import TrendyLogging
import TrendyTestSupport

/// The in-memory GoTrue keeps the gateway contract (the GoTrue gateway keeps it against the real
/// server in TrendyServerTests), so Auth's own tests can run on it.
@Suite(.timeLimit(.minutes(5)))
struct AuthGatewayContractTests {
    @Test func theInMemoryServerKeepsTheContract() async throws {
        let clock = ManualClock(Date())
        try await AuthGatewayContract.verify(InMemoryAuthServer(now: { clock.now }), advance: clock.advance)
    }

    @Test func theControllerSignsUpAndRefreshesOnTheInMemoryServer() async throws {
        let clock = ManualClock(Date())
        let server = InMemoryAuthServer(now: { clock.now })
        let auth = AuthController(
            store: InMemorySessionStore(), gateway: server, now: { clock.now },
            logger: LogSystem.disabled().logger(.auth))
        let session = try await auth.signUp(email: "c@example.com", password: "password-1")
        #expect(try await auth.validAccessToken() == session.accessToken)
        // Past the access token's lifetime, the controller refreshes on its own.
        clock.advance(InMemoryAuthServer.accessTokenLifetime + 1)
        let next = try await auth.validAccessToken()
        #expect(next != nil && next != session.accessToken)
        #expect(try await auth.fetchUser().email == "c@example.com")
    }
}
