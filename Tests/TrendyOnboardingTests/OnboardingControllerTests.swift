import Foundation
import Logging
import Testing
import TrendyAPI
import TrendyLogging
import TrendyModels
import TrendyOnboarding
import TrendyOnboardingTesting
import TrendyTestSupport

@testable import TrendyOnboardingLive

@Suite(.timeLimit(.minutes(5)))
struct OnboardingControllerTests {
    static let offline = TrendyAPIError.transport(.cannotConnect("offline"))

    @Test func aNewUserPassesAuthAndStartsOnceThenCompletesOnce() async throws {
        try await OnboardingHarness.with { h in
            let c = h.controller()
            let fetched = await c.signedIn(userId: h.userId)
            #expect(fetched.status?.currentStep == .createEventType)
            #expect(Set(fetched.status?.stepCompletedAt.keys ?? [:].keys) == ["welcome", "auth"])
            await c.advance(userId: h.userId, to: .logFirstEvent)
            await c.advance(userId: h.userId, to: .permissions)
            await c.recordPermission(userId: h.userId, .location, .denied)
            let done = await c.complete(userId: h.userId)
            #expect(done.completed)
            let again = await c.complete(userId: h.userId)
            #expect(again.completed && again.completedAt == done.completedAt)
            #expect(c.analyticsEvents().map(\.name) == [.onboardingStarted, .onboardingCompleted])
            #expect(c.deviceSawCompletedUser)
            #expect(c.pendingWrite(for: h.userId) == nil)
            let server = h.direct.onboardingStatus()
            #expect(server.completed && server.locationStatus == .denied)
        }
    }

    @Test func aUserWithTypesSkipsCreatingOne() async throws {
        try await OnboardingHarness.with { h in
            h.hasTypes.set(true)
            let fetched = await h.controller().signedIn(userId: h.userId)
            #expect(fetched.status?.currentStep == .logFirstEvent)
        }
    }

    @Test func aReturningUserRecordsNothingAndSignInFetchesFreshStatus() async throws {
        try await OnboardingHarness.with { h in
            h.direct.updateOnboarding(OnboardingUpdate(completed: true))
            // A stale cache says the user is mid-way; sign-in fetches the truth.
            var stale = OnboardingCacheState.empty
            var status = OnboardingStatus.initial
            status.currentStep = .logFirstEvent
            stale.users[h.userId] = OnboardingUserRecord(status: status)
            try h.cache.save(stale)
            let c = h.controller()
            #expect(c.cachedPosition(for: h.userId) == .inProgress(.logFirstEvent))
            let fetched = await c.signedIn(userId: h.userId)
            #expect(fetched == .fresh(try #require(fetched.status)))
            #expect(c.cachedPosition(for: h.userId) == .completed)
            #expect(c.analyticsEvents().isEmpty)
            #expect(c.deviceSawCompletedUser)
        }
    }

    @Test func offlineWritesGoToTheCacheFirstAndAreRetriedNotLost() async throws {
        try await OnboardingHarness.with { h in
            let c = h.controller()
            _ = await c.signedIn(userId: h.userId)
            h.api.fail("updateOnboarding", with: Self.offline, times: 3)
            await c.advance(userId: h.userId, to: .logFirstEvent)
            await c.advance(userId: h.userId, to: .permissions)
            #expect(c.cachedStatus(for: h.userId)?.currentStep == .permissions)
            let pending = try #require(c.pendingWrite(for: h.userId))
            #expect(pending.attempts >= 1 && pending.update.currentStep == .permissions)
            // Survives a restart: a new controller over the same cache still holds it.
            let restarted = h.controller()
            #expect(restarted.pendingWrite(for: h.userId) == c.pendingWrite(for: h.userId))
            #expect(h.direct.onboardingStatus().currentStep == .createEventType)
            var flushed = await restarted.flushPending()
            if !flushed { flushed = await restarted.flushPending() }
            #expect(flushed)
            #expect(restarted.pendingWrite(for: h.userId) == nil)
            let server = h.direct.onboardingStatus()
            #expect(server.currentStep == .permissions)
            #expect(server.stepCompletedAt["log_first_event"] != nil)
        }
    }

    @Test func aRetriedWriteKeepsItsIdempotencyKey() async throws {
        try await OnboardingHarness.with { h in
            let c = h.controller()
            _ = await c.signedIn(userId: h.userId)
            h.api.fail("updateOnboarding", with: Self.offline, times: 1)
            await c.advance(userId: h.userId, to: .logFirstEvent)
            let key = try #require(c.pendingWrite(for: h.userId)?.idempotencyKey)
            #expect(await c.flushPending())
            let keys = h.api.calls.filter { $0.name == "updateOnboarding" }.suffix(2).map(\.idempotencyKey)
            #expect(keys == [key, key])
        }
    }

    @Test func aLostAnswerIsSentAgainWithTheSameKeyAndAppliedOnce() async throws {
        try await OnboardingHarness.with { h in
            let c = h.controller()
            _ = await c.signedIn(userId: h.userId)
            h.api.loseAnswer("updateOnboarding", with: Self.offline)
            await c.advance(userId: h.userId, to: .logFirstEvent)
            #expect(c.pendingWrite(for: h.userId) != nil, "the controller did not hear the answer")
            #expect(h.direct.onboardingStatus().currentStep == .logFirstEvent, "but the server did the work")
            #expect(await c.flushPending())
            let keys = h.api.calls.filter { $0.name == "updateOnboarding" }.suffix(2).map(\.idempotencyKey)
            #expect(keys.count == 2 && keys[0] != nil && keys[0] == keys[1])
            #expect(h.api.updates.filter { $0.currentStep == .logFirstEvent }.count == 1, "applied once")
            #expect(c.pendingWrite(for: h.userId) == nil)
        }
    }

    @Test func aChangeMadeWhileAWriteIsInFlightGoesOutInTheSameFlush() async throws {
        try await OnboardingHarness.with { h in
            let c = h.controller()
            _ = await c.signedIn(userId: h.userId)
            h.api.hold("updateOnboarding")
            let first = Task { await c.advance(userId: h.userId, to: .logFirstEvent) }
            #expect(await until { h.api.heldCount > 0 })
            // The second write finds a flush in flight and leaves its change to it.
            await c.advance(userId: h.userId, to: .permissions)
            #expect(c.pendingWrite(for: h.userId)?.update.currentStep == .permissions)
            h.api.releaseHeld()
            _ = await first.value
            #expect(c.pendingWrite(for: h.userId) == nil)
            #expect(h.direct.onboardingStatus().currentStep == .permissions)
        }
    }

    @Test func aSlowServerFallsBackToTheCacheAfterTheTimeout() async throws {
        try await OnboardingHarness.with { h in
            let c = h.controller(timeout: .milliseconds(200))
            _ = await c.signedIn(userId: h.userId)
            h.api.hold("onboardingStatus")
            let fetched = await c.refresh(userId: h.userId)
            guard case .cached(let status, let reason) = fetched else {
                Issue.record("expected the cache, got \(fetched)")
                return
            }
            #expect(status.currentStep == .createEventType)
            #expect(reason.contains("timed out"))
            h.api.releaseHeld()
        }
    }

    @Test func offlineWithNothingCachedIsUnavailableAndSignInContinuesLocally() async throws {
        try await OnboardingHarness.with { h in
            h.api.fail(nil, with: Self.offline, times: 100)
            let c = h.controller()
            #expect(await c.refresh(userId: h.userId) == .unavailable(reason: Self.offline.description))
            let fetched = await c.signedIn(userId: h.userId)
            guard case .cached(let status, _) = fetched else {
                Issue.record("expected a local status, got \(fetched)")
                return
            }
            #expect(status.currentStep == .createEventType)
            #expect(c.pendingWrite(for: h.userId) != nil)
        }
    }

    @Test func aFailedResetChangesNothingLocally() async throws {
        try await OnboardingHarness.with { h in
            let c = h.controller()
            _ = await c.signedIn(userId: h.userId)
            await c.complete(userId: h.userId)
            h.api.fail("resetOnboarding", with: Self.offline)
            await #expect(throws: TrendyAPIError.self) { try await c.reset(userId: h.userId) }
            #expect(c.cachedPosition(for: h.userId) == .completed)
            let reset = try await c.reset(userId: h.userId)
            #expect(!reset.completed)
            #expect(c.cachedPosition(for: h.userId) == .inProgress(.welcome))
            // Completing again does not record a second completion.
            await c.complete(userId: h.userId)
            #expect(c.analyticsEvents().filter { $0.name == .onboardingCompleted }.count == 1)
        }
    }

    @Test func aSignedOutPersonMovesOnlyBetweenWelcomeAndAuth() async throws {
        try await OnboardingHarness.with { h in
            h.signedIn.set(false)
            let c = h.controller()
            c.setSignedOutStep(.auth)
            #expect(c.signedOutStep == .auth)
            c.setSignedOutStep(.permissions)
            #expect(c.signedOutStep == .auth)
            #expect(await c.flushPending())
            #expect(h.api.calls.isEmpty)
        }
    }

    @Test func aCacheThatCannotBeSavedKeepsWorkingInMemory() async throws {
        try await OnboardingHarness.with { h in
            h.cache.failSaves(true)
            let c = h.controller()
            let status = await c.signedIn(userId: h.userId).status
            #expect(status?.currentStep == .createEventType)
            #expect(c.cachedStatus(for: h.userId)?.currentStep == .createEventType)
            #expect(h.cache.state == .empty)
        }
    }

    @Test func permissionPrimingAsksTheSystemOnlyAfterTheExplanation() async {
        let prompter = ScriptedPermissionPrompter([.notifications: .allow, .location: .deny])
        #expect(await PermissionPriming.ask(.notifications, using: prompter) == .granted)
        #expect(await PermissionPriming.ask(.location, using: prompter) == .denied)
        #expect(await PermissionPriming.ask(.health, using: prompter) == .skipped)
        #expect(
            prompter.asked == [
                "prime:notifications", "system:notifications", "prime:location", "system:location", "prime:health",
            ])
    }

    @Test func pendingUpdatesMergeLaterValuesAndKeepFirstStepTimes() {
        let t1 = Date(timeIntervalSince1970: 1)
        let t2 = Date(timeIntervalSince1970: 2)
        let a = OnboardingUpdate(currentStep: .logFirstEvent, stepCompletedAt: ["auth": t1], locationStatus: .denied)
        let b = OnboardingUpdate(
            completed: true, stepCompletedAt: ["auth": t2, "finish": t2], locationStatus: .granted)
        let m = a.merged(with: b)
        #expect(m.completed == true && m.currentStep == .logFirstEvent && m.locationStatus == .granted)
        #expect(m.stepCompletedAt == ["auth": t1, "finish": t2])
    }
}

struct FileOnboardingCacheTests {
    func temporaryFile() -> URL {
        URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("ob-\(UUID().uuidString)/onboarding.json")
    }

    @Test func roundTripsWithOwnerOnlyPermissions() throws {
        let file = temporaryFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let cache = FileOnboardingCache(file: file, logger: LogSystem.disabled().logger(.onboarding))
        #expect(cache.load() == .empty)
        var state = OnboardingCacheState.empty
        state.deviceSawCompletedUser = true
        state.users["u"] = OnboardingUserRecord(
            status: .initial,
            pending: PendingOnboardingWrite(update: OnboardingUpdate(completed: true), idempotencyKey: "k"))
        state.analytics = [AnalyticsEvent(name: .onboardingStarted, userId: "u", at: Date(timeIntervalSince1970: 5))]
        try cache.save(state)
        #expect(cache.load() == state)
        #expect(try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int == 0o600)
        // The launch's fast read agrees with the full decode.
        #expect(
            cache.launchFacts(for: "u")
                == .init(position: .inProgress(.welcome), deviceSawCompletedUser: true, signedOutStep: .welcome))
        #expect(cache.launchFacts(for: "other").position == nil)
        #expect(cache.launchFacts(for: nil) == cache.slowLaunchFacts(nil))
    }

    @Test(arguments: ["{not json", #"{"version":9,"state":{}}"#, ""])
    func aCorruptFileIsAFreshStartNotACrash(_ contents: String) throws {
        let file = temporaryFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(contents.utf8).write(to: file)
        let sink = InMemoryLogSink()
        let logs = LogSystem(sinks: [sink])
        let cache = FileOnboardingCache(file: file, logger: logs.logger(.onboarding))
        #expect(cache.load() == .empty)
        #expect(
            cache.launchFacts(for: "u") == .init(position: nil, deviceSawCompletedUser: false, signedOutStep: .welcome))
        #expect(sink.records.contains { $0.level == .warning })
    }
}
