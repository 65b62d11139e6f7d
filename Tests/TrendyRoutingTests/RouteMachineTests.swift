import Testing
import TrendyModels
import TrendyOnboarding
import TrendyRouting

struct InitialRouteTests {
    @Test(arguments: [
        (
            LaunchSnapshot(userId: "u", cachedOnboarding: .completed, deviceSawCompletedUser: true),
            AppRoute.authenticated
        ),
        (
            LaunchSnapshot(userId: "u", cachedOnboarding: .inProgress(.logFirstEvent), deviceSawCompletedUser: false),
            .onboarding(.logFirstEvent)
        ),
        (
            LaunchSnapshot(userId: "u", cachedOnboarding: .inProgress(.auth), deviceSawCompletedUser: false),
            .onboarding(.createEventType)
        ),
        (LaunchSnapshot(userId: "u", cachedOnboarding: nil, deviceSawCompletedUser: true), .loading),
        (LaunchSnapshot(userId: nil, cachedOnboarding: nil, deviceSawCompletedUser: true), .login),
        (LaunchSnapshot(userId: nil, cachedOnboarding: nil, deviceSawCompletedUser: false), .onboarding(.welcome)),
    ])
    func theFirstRouteComesFromLocalState(snapshot: LaunchSnapshot, expected: AppRoute) {
        #expect(InitialRoute.decide(snapshot) == expected)
    }
}

/// Scripts: each event, then the whole next state and the exact effects.
struct RouteMachineTests {
    func step(_ m: inout RouteMachine, _ e: RouteEvent, _ route: AppRoute, _ effects: [RouteEffect]) {
        let from = m.route
        let got = m.handle(e)
        #expect(m.route == route, "after \(e) from \(from)")
        #expect(got == effects, "effects of \(e) from \(from)")
    }

    @Test func returningCompletedUserGoesStraightToTheMainScreen() {
        var m = RouteMachine()
        step(
            &m, .launched(.init(userId: "u", cachedOnboarding: .completed, deviceSawCompletedUser: true)),
            .authenticated, [.logTransition(from: .loading, to: .authenticated), .verifySession])
        step(&m, .sessionVerified, .authenticated, [])
        step(&m, .deepLink("trendy://events/1"), .authenticated, [.openDeepLink("trendy://events/1")])
        #expect(m.launched)
        #expect(m.userId == "u")
    }

    @Test func initialisationRunsOnce() {
        var m = RouteMachine()
        let snapshot = LaunchSnapshot(userId: nil, cachedOnboarding: nil, deviceSawCompletedUser: true)
        step(&m, .launched(snapshot), .login, [.logTransition(from: .loading, to: .login)])
        step(&m, .launched(snapshot), .login, [.logRejected(event: .launched(snapshot), route: .login)])
    }

    @Test func eventsBeforeLaunchAreRejected() {
        var m = RouteMachine()
        step(&m, .signedOut, .loading, [.logRejected(event: .signedOut, route: .loading)])
        #expect(!m.launched)
    }

    @Test func aRejectedSessionSendsToLoginButANetworkFailureChangesNothing() {
        var m = RouteMachine()
        step(
            &m, .launched(.init(userId: "u", cachedOnboarding: .completed, deviceSawCompletedUser: true)),
            .authenticated, [.logTransition(from: .loading, to: .authenticated), .verifySession])
        // A network failure produces no event at all: the route stays.
        step(&m, .sessionRejected, .login, [.logTransition(from: .authenticated, to: .login)])
        #expect(m.userId == nil)
        step(&m, .sessionRejected, .login, [.logRejected(event: .sessionRejected, route: .login)])
    }

    @Test func aCacheMissOnADeviceWithTheAccountsDataGoesToTheMainScreenAndRepairsTheCache() {
        var m = RouteMachine()
        step(
            &m,
            .launched(
                .init(userId: "u", cachedOnboarding: nil, deviceSawCompletedUser: false, hasAccountData: true)),
            .authenticated,
            [.logTransition(from: .loading, to: .authenticated), .verifySession, .repairOnboardingCache(userId: "u")])
        // A late status never moves the person off the main screen.
        step(
            &m, .onboardingStatusLoaded(.inProgress(.logFirstEvent)), .authenticated,
            [.logRejected(event: .onboardingStatusLoaded(.inProgress(.logFirstEvent)), route: .authenticated)])
    }

    @Test func cacheMissLoadsThenRoutes() {
        var m = RouteMachine()
        step(
            &m, .launched(.init(userId: "u", cachedOnboarding: nil, deviceSawCompletedUser: false)), .loading,
            [.verifySession, .fetchOnboardingStatus(userId: "u")])
        step(
            &m, .onboardingStatusLoaded(.inProgress(.permissions)), .onboarding(.permissions),
            [.logTransition(from: .loading, to: .onboarding(.permissions))])
    }

    @Test func freshInstallWalksOnboardingWithSignInInTheMiddle() {
        var m = RouteMachine()
        step(
            &m, .launched(.init(userId: nil, cachedOnboarding: nil, deviceSawCompletedUser: false)),
            .onboarding(.welcome), [.logTransition(from: .loading, to: .onboarding(.welcome))])
        step(
            &m, .onboardingStepChanged(.auth), .onboarding(.auth),
            [.logTransition(from: .onboarding(.welcome), to: .onboarding(.auth))])
        // No skipping ahead past sign-in without a session.
        step(
            &m, .onboardingStepChanged(.createEventType), .onboarding(.auth),
            [.logRejected(event: .onboardingStepChanged(.createEventType), route: .onboarding(.auth))])
        step(
            &m, .signedIn(userId: "new"), .loading,
            [.logTransition(from: .onboarding(.auth), to: .loading), .fetchOnboardingStatus(userId: "new")])
        step(
            &m, .onboardingStatusLoaded(.inProgress(.welcome)), .onboarding(.createEventType),
            [.logTransition(from: .loading, to: .onboarding(.createEventType))])
        // Never back past sign-in.
        step(
            &m, .onboardingStepChanged(.auth), .onboarding(.createEventType),
            [.logRejected(event: .onboardingStepChanged(.auth), route: .onboarding(.createEventType))])
        step(
            &m, .onboardingStepChanged(.logFirstEvent), .onboarding(.logFirstEvent),
            [.logTransition(from: .onboarding(.createEventType), to: .onboarding(.logFirstEvent))])
        step(
            &m, .onboardingStepChanged(.permissions), .onboarding(.permissions),
            [.logTransition(from: .onboarding(.logFirstEvent), to: .onboarding(.permissions))])
        step(
            &m, .onboardingCompleted, .authenticated,
            [.logTransition(from: .onboarding(.permissions), to: .authenticated)])
        step(&m, .signedOut, .login, [.logTransition(from: .authenticated, to: .login)])
    }

    @Test func signInOnASecondDeviceWithACompletedAccountSkipsOnboarding() {
        var m = RouteMachine()
        step(
            &m, .launched(.init(userId: nil, cachedOnboarding: nil, deviceSawCompletedUser: true)), .login,
            [.logTransition(from: .loading, to: .login)])
        step(
            &m, .signedIn(userId: "u"), .loading,
            [.logTransition(from: .login, to: .loading), .fetchOnboardingStatus(userId: "u")])
        step(
            &m, .onboardingStatusLoaded(.completed), .authenticated,
            [.logTransition(from: .loading, to: .authenticated)])
    }

    @Test func deepLinksNeedAnAuthenticatedRoute() {
        var m = RouteMachine()
        step(
            &m, .launched(.init(userId: nil, cachedOnboarding: nil, deviceSawCompletedUser: true)), .login,
            [.logTransition(from: .loading, to: .login)])
        step(&m, .deepLink("trendy://x"), .login, [.logRejected(event: .deepLink("trendy://x"), route: .login)])
    }

    @Test func failuresShowTheErrorRoute() {
        var m = RouteMachine()
        step(
            &m, .launched(.init(userId: nil, cachedOnboarding: nil, deviceSawCompletedUser: true)), .login,
            [.logTransition(from: .loading, to: .login)])
        step(
            &m, .failed("database unreadable"), .error("database unreadable"),
            [.logTransition(from: .login, to: .error("database unreadable"))])
    }
}

struct OnboardingFlowTests {
    @Test func orderBackNavigationAndSkipping() {
        #expect(OnboardingFlow.next(after: .welcome) == .auth)
        #expect(OnboardingFlow.next(after: .finish) == nil)
        #expect(OnboardingFlow.previous(before: .auth) == .welcome)
        #expect(OnboardingFlow.previous(before: .createEventType) == nil)
        #expect(OnboardingFlow.previous(before: .permissions) == .logFirstEvent)
        #expect(OnboardingStep.allCases.filter(OnboardingFlow.isSkippable) == [.permissions])
        #expect(
            OnboardingStep.allCases.filter(OnboardingFlow.requiresAuth) == [
                .createEventType, .logFirstEvent, .permissions, .finish,
            ])
        #expect(OnboardingFlow.progress(at: .welcome) == 0)
        #expect(OnboardingFlow.progress(at: .finish) == 1)
        #expect(OnboardingFlow.resume(at: .createEventType, hasEventTypes: true) == .logFirstEvent)
        #expect(OnboardingFlow.resume(at: .createEventType, hasEventTypes: false) == .createEventType)
    }
}
