import Foundation
import Testing
import TrendyLogging
import TrendyOnboarding
import TrendyOnboardingLive
import TrendyOnboardingTesting
import TrendyTestSupport

/// Each implementation of onboarding's ports keeps its contract (docs/porting.md); the
/// in-memory backend keeps the same one as the live client on the real server.
@Suite(.timeLimit(.minutes(5)))
struct OnboardingContractTests {
    @Test func bothCachesKeepTheContract() throws {
        try OnboardingCacheContract.verify(fresh: { InMemoryOnboardingCache() })
        let directory = TemporaryDirectory("cache", create: false)
        let file = directory.url.appendingPathComponent("onboarding.json")
        let logger = LogSystem.disabled().logger(.onboarding)
        try OnboardingCacheContract.verify(
            fresh: { FileOnboardingCache(file: file, logger: logger) },
            reopen: { _ in FileOnboardingCache(file: file, logger: logger) })
    }

    @Test func theInMemoryBackendKeepsTheRemoteContract() async throws {
        try await OnboardingRemoteContract.verify(InMemoryOnboardingBackend())
    }
}

/// The scripted prompter keeps the permission-prompter contract (the CLI's keeps it in
/// TrendyAppTests).
@Suite struct PermissionPrompterContractTests {
    @Test func theScriptedPrompterKeepsTheContract() async {
        await PermissionPrompterContract.verify(make: { ScriptedPermissionPrompter($0) })
    }
}
