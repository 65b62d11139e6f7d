import Testing
import TrendyOnboardingTesting
import TrendyServerTestSupport

/// The live HTTP client against the real server keeps each module's remote contract, the same
/// one the in-memory fakes keep in the modules' own tests (docs/porting.md).
@Suite(.timeLimit(.minutes(1)))
struct LiveClientContractTests {
    @Test func theLiveClientKeepsOnboardingsRemoteContract() async throws {
        try await RunningTestServer.with(.testing()) { server in
            let (api, _) = try await server.signedUpClient()
            try await OnboardingRemoteContract.verify(api)
        }
    }
}
