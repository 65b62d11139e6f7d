import Foundation
import Testing
import TrendyAPI
import TrendyLogging
import TrendyModels
import TrendyOnboarding
import TrendyOnboardingTesting

/// The controller over its own port (issue 21): the in-memory backend answers like the server,
/// the unimplemented one fails any call, and no server starts.
@Suite(.timeLimit(.minutes(5)))
struct OnboardingWithoutServerTests {
    static let offline = TrendyAPIError.transport(.cannotConnect("offline"))

    func controller(
        _ remote: any OnboardingRemote, cache: InMemoryOnboardingCache = InMemoryOnboardingCache(),
        signedIn: Bool = true
    ) -> OnboardingController {
        OnboardingController(
            cache: cache, api: remote, currentUserId: { signedIn ? "user-1" : nil }, hasEventTypes: { false },
            fetchTimeout: .seconds(3), logger: LogSystem.disabled().logger(.onboarding))
    }

    @Test func aNewUserPassesAuthAndCompletesOnce() async throws {
        let backend = InMemoryOnboardingBackend()
        let c = controller(backend)
        let fetched = await c.signedIn(userId: "user-1")
        #expect(fetched.status?.currentStep == .createEventType)
        await c.advance(userId: "user-1", to: .permissions)
        await c.recordPermission(userId: "user-1", .location, .denied)
        let done = await c.complete(userId: "user-1")
        #expect(done.completed)
        #expect(await c.complete(userId: "user-1").completedAt == done.completedAt)
        #expect(c.analyticsEvents().map(\.name) == [.onboardingStarted, .onboardingCompleted])
        #expect(backend.stored?.completed == true)
        #expect(backend.stored?.locationStatus == .denied)
        #expect(c.pendingWrite(for: "user-1") == nil)
    }

    @Test func offlineWritesWaitInTheCacheAndGoOutLater() async throws {
        let backend = InMemoryOnboardingBackend()
        backend.failNext(Self.offline, Self.offline)  // the status fetch and the first write
        let c = controller(backend)
        let fetched = await c.signedIn(userId: "user-1")
        #expect(fetched.status?.currentStep == .createEventType)
        #expect(c.pendingWrite(for: "user-1") != nil)
        #expect(await c.flushPending())
        #expect(c.pendingWrite(for: "user-1") == nil)
        #expect(backend.stored?.currentStep == .createEventType)
    }

    @Test func aFailedResetChangesNothingLocally() async throws {
        let backend = InMemoryOnboardingBackend()
        let c = controller(backend)
        _ = await c.signedIn(userId: "user-1")
        await c.complete(userId: "user-1")
        backend.failNext(Self.offline)
        await #expect(throws: TrendyAPIError.self) { try await c.reset(userId: "user-1") }
        #expect(c.cachedPosition(for: "user-1") == .completed)
        #expect(!(try await c.reset(userId: "user-1")).completed)
        #expect(backend.calls("resetOnboarding") == 2)
    }

    @Test func aSignedOutPersonNeverReachesTheServer() async throws {
        let c = controller(UnimplementedOnboardingRemote { Issue.record(Comment(rawValue: $0)) }, signedIn: false)
        c.setSignedOutStep(.auth)
        #expect(c.signedOutStep == .auth)
        c.setSignedOutStep(.permissions)
        #expect(c.signedOutStep == .auth)
        #expect(await c.flushPending())
    }
}
