import Foundation
import Testing
import TrendyAuth
import TrendyAuthTesting
import TrendyLogging
import TrendyModels
import TrendyOnboarding
import TrendyRouting
import TrendySync
import TrendySyncLive
import TrendySyncTesting

@testable import TrendyApp

/// The app's launch on an environment made of doubles (``AppEnvironment/testing``): no files
/// but the store's, no server, no plugin list.
@Suite(.timeLimit(.minutes(5)))
struct AppEnvironmentTests {
    static let alice = AuthUser(id: "user-a", email: "alice@example.com")

    struct Rig {
        let gateway = ScriptedAuthGateway()
        let engine: ScriptedSyncEngine
        let env: AppEnvironment

        init(engine: ScriptedSyncEngine = ScriptedSyncEngine()) async throws {
            self.engine = engine
            let session = AuthSession(
                accessToken: "a", refreshToken: "r", expiresAt: Date().addingTimeInterval(3_600), user: alice)
            let auth = AuthController(
                store: InMemorySessionStore(session), gateway: gateway, logger: LogSystem.disabled().logger(.auth))
            let store = try MemoryLocalStore.make()
            try await store.claim(for: alice.id)
            let type = EventType(id: UUIDv7Generator().next(), name: "Coffee")
            try await store.createEventType(type)
            try await store.createEvent(Event(id: UUIDv7Generator().next(), eventTypeId: type.id, timestamp: Date()))
            env = AppEnvironment.testing(
                paths: AppPaths(dataDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("unused")),
                auth: auth, store: store, sync: engine, reachability: FixedReachability(.reachable),
                modules: [SyncModule(sync: engine, afterPass: SyncHooks())])
        }

        func launch() async -> AppLaunch.Report {
            let snapshot = LaunchSnapshot(
                userId: alice.id, cachedOnboarding: .completed, deviceSawCompletedUser: true)
            let decision = AppLaunch.Decision(
                snapshot: snapshot, route: InitialRoute.decide(snapshot), commandStartedMs: 0, elapsedMs: 0)
            return await AppLaunch(wait: true, plain: true).run(env, decision: decision, start: .now)
        }
    }

    @Test func aReturningUserSeesTheDashboardFirstAndTheLaunchSyncsOnce() async throws {
        let rig = try await Rig(engine: ScriptedSyncEngine(status: SyncStatus(pendingCount: 2)))
        rig.gateway.onUser(.success(Self.alice))
        let report = await rig.launch()
        #expect(report.route == "authenticated" && report.finalRoute == "authenticated")
        #expect(report.frames.first?.screen == "dashboard")
        #expect(report.frames.first?.text.contains("Coffee") == true)
        #expect(report.frames.first?.banner == "2 pending", "the banner shows the engine's pending count")
        #expect(rig.engine.passes == 1, "the sync module's launch hook ran one pass")
        #expect(rig.gateway.calls("user") == 1, "the session was verified after the first frame")
    }

    @Test func aSessionTheServerRevokedEndsOnTheLoginScreen() async throws {
        let rig = try await Rig()
        rig.gateway.onUser(.failure(.sessionRevoked(code: "session_not_found")))
        let report = await rig.launch()
        #expect(report.route == "authenticated", "the first frame comes from the caches")
        #expect(report.finalRoute == "login")
        #expect(rig.env.auth.currentUserId == nil)
    }
}
