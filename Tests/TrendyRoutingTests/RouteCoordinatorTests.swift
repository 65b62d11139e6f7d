import Foundation
import Logging
import Synchronization
import Testing
import TrendyAPI
import TrendyAuth
import TrendyAuthTesting
import TrendyLogging
import TrendyModels
import TrendyOnboarding
import TrendyRouting
import TrendyTestSupport

/// An onboarding service with a fixed cache and a scripted sign-in answer. Does not simulate:
/// writes (they only move the cached step), analytics, the backend.
final class StubOnboardingService: RoutingOnboarding {
    let statuses: Mutex<[String: OnboardingStatus]>
    let signInAnswer: OnboardingFetch
    let device: Bool
    let signInCalls = Mutex(0)

    init(cached: [String: OnboardingStatus] = [:], signIn: OnboardingFetch, deviceSawCompletedUser: Bool = false) {
        statuses = Mutex(cached)
        signInAnswer = signIn
        device = deviceSawCompletedUser
    }

    func cachedPosition(for userId: String) -> CachedOnboarding? {
        statuses.withLock { $0[userId] }.map(CachedOnboarding.init)
    }
    var deviceSawCompletedUser: Bool { device }
    var signedOutStep: OnboardingStep { .welcome }
    func refresh(userId: String) async -> OnboardingFetch { signInAnswer }
    func signedIn(userId: String) async -> OnboardingFetch {
        signInCalls.withLock { $0 += 1 }
        return signInAnswer
    }
}

@Suite(.timeLimit(.minutes(5)))
struct RouteCoordinatorTests {
    static let alice = AuthUser(id: "user-a", email: "alice@example.com")
    static var completed: OnboardingStatus {
        var s = OnboardingStatus.initial
        s.completed = true
        s.currentStep = .finish
        return s
    }

    struct Rig {
        let gateway = ScriptedAuthGateway()
        let auth: AuthController
        let onboarding: StubOnboardingService
        let routing: RouteCoordinator
        let logs = InMemoryLogSink()

        init(
            session: Bool, cached: OnboardingStatus?, signIn: OnboardingFetch = .fresh(completed), device: Bool = false
        ) {
            let stored =
                session
                ? AuthSession(
                    accessToken: "a", refreshToken: "r", expiresAt: Date().addingTimeInterval(3_600), user: alice) : nil
            auth = AuthController(
                store: InMemorySessionStore(stored), gateway: gateway, logger: LogSystem.disabled().logger(.auth))
            onboarding = StubOnboardingService(
                cached: cached.map { [alice.id: $0] } ?? [:], signIn: signIn, deviceSawCompletedUser: device)
            routing = RouteCoordinator(
                auth: AuthRouting(auth), onboarding: onboarding,
                logger: LogSystem(configuration: .init(defaultLevel: .trace), sinks: [logs]).logger(.routing))
        }

        /// Every route published from launch until the background work settles.
        func launchAndSettle(then: (Rig) async -> Void = { _ in }) async -> [AppRoute] {
            let stream = routing.routes()
            let collector = Task {
                var seen: [AppRoute] = []
                for await r in stream { seen.append(r) }
                return seen
            }
            routing.launch()
            await routing.settle()
            await then(self)
            await routing.settle()
            routing.stop()
            return await collector.value
        }

        func until(_ condition: () -> Bool) async { await TrendyTestSupport.until(attempts: 2_000, condition) }
    }

    @Test func aVerifiedReturningUserSeesOnlyTheMainScreen() async {
        let rig = Rig(session: true, cached: Self.completed)
        rig.gateway.onUser(.success(Self.alice))
        #expect(await rig.launchAndSettle() == [.authenticated])
        #expect(rig.gateway.calls("user") == 1)
        #expect(rig.onboarding.signInCalls.withLock { $0 } == 0)
    }

    @Test func aNetworkFailureDuringVerificationKeepsTheUserWhereTheyAre() async {
        let rig = Rig(session: true, cached: Self.completed)
        rig.gateway.onUser(.failure(.network("offline")))
        #expect(await rig.launchAndSettle() == [.authenticated])
        #expect(rig.auth.currentUserId == Self.alice.id)
    }

    @Test func aRejectedSessionGoesToLogin() async {
        let rig = Rig(session: true, cached: Self.completed)
        rig.gateway.onUser(.failure(.sessionRevoked(code: "session_not_found")))
        let routes = await rig.launchAndSettle { rig in await rig.until { rig.routing.route == .login } }
        #expect(routes == [.authenticated, .login])
        #expect(rig.logs.records.contains { $0.message == "Route changed" })
    }

    @Test func aCacheMissShowsOneLoadingScreenThenTheFetchedRoute() async {
        var midway = OnboardingStatus.initial
        midway.currentStep = .permissions
        let rig = Rig(session: true, cached: nil, signIn: .fresh(midway))
        rig.gateway.onUser(.success(Self.alice))
        #expect(await rig.launchAndSettle() == [.loading, .onboarding(.permissions)])
    }

    @Test func aSignedOutDeviceThatSawACompletedUserShowsLoginThenSignInRoutes() async throws {
        let rig = Rig(session: false, cached: nil, signIn: .fresh(Self.completed), device: true)
        rig.gateway.onSignIn(
            .session(
                AuthSession(
                    accessToken: "a2", refreshToken: "r2", expiresAt: Date().addingTimeInterval(3_600), user: Self.alice
                )))
        let routes = await rig.launchAndSettle { rig in
            _ = try? await rig.auth.signIn(email: Self.alice.email, password: "pw")
            await rig.until { rig.routing.route == .authenticated }
        }
        #expect(routes == [.login, .loading, .authenticated])
        #expect(rig.gateway.calls("user") == 0)
    }

    @Test func signingOutGoesToLoginAndDeepLinksOpenOnlyWhenAuthenticated() async {
        let rig = Rig(session: true, cached: Self.completed)
        rig.gateway.onUser(.success(Self.alice))
        rig.gateway.onSignOut(nil)
        let routes = await rig.launchAndSettle { rig in
            rig.routing.send(.deepLink("trendy://events/1"))
            await rig.auth.signOut(scope: .local)
            await rig.until { rig.routing.route == .login }
            rig.routing.send(.deepLink("trendy://events/2"))
        }
        #expect(routes == [.authenticated, .login])
        #expect(rig.routing.openedDeepLinks == ["trendy://events/1"])
    }

    @Test func launchRunsOnce() async {
        let rig = Rig(session: true, cached: Self.completed)
        rig.gateway.onUser(.success(Self.alice), .success(Self.alice))
        #expect(rig.routing.launch() == .authenticated)
        #expect(rig.routing.launch() == .authenticated)
        await rig.routing.settle()
        // A second launch would verify the session a second time.
        #expect(rig.gateway.calls("user") == 1)
        rig.routing.stop()
    }
}
