import FoundationEssentials
import Testing
import TrendyAPI
import TrendyAuthGoTrue
import TrendyAuthTesting
import TrendyLogging
import TrendyOnboardingTesting
import TrendyServer
import TrendyServerTestSupport
import TrendyTestSupport

/// The live HTTP client against the real server keeps each module's remote contract, the same
/// one the in-memory fakes keep in the modules' own tests (docs/porting.md).
@Suite(.timeLimit(.minutes(5)))
struct LiveClientContractTests {
    @Test func theLiveClientKeepsOnboardingsRemoteContract() async throws {
        try await RunningTestServer.with(.testing()) { server in
            let (api, _) = try await server.signedUpClient()
            try await OnboardingRemoteContract.verify(api)
        }
    }
}

/// The GoTrue gateway against the real server keeps the same gateway contract as
/// `InMemoryAuthServer` (docs/porting.md).
@Suite(.timeLimit(.minutes(5)))
struct GoTrueGatewayContractTests {
    @Test func theGoTrueGatewayKeepsTheAuthGatewayContract() async throws {
        try await ServerHarness.with { h in
            let gateway = GoTrueAuthGateway(
                configuration: .init(
                    baseURL: h.baseURL.appendingPathComponent("auth/v1"), budget: .forTests()),
                http: h.http, logger: LogSystem.disabled().logger(.auth))
            try await AuthGatewayContract.verify(gateway, advance: h.clock.advance)
        }
    }
}
