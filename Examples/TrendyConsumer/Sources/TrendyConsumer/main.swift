import Foundation
import TrendyAuth
import TrendyAuthTesting
import TrendyLogging
import TrendyOnboarding
import TrendyRouting

// An app's own composition root: its session store and auth gateway (here the Testing
// products' fakes, where an iOS app would put Keychain and its GoTrue client), Trendy Core's
// controller and route decision. Prints each step; exits non-zero when a route is not the
// expected one.
let logs = LogSystem.disabled()
let store = InMemorySessionStore()
let gateway = ScriptedAuthGateway()
let auth = AuthController(store: store, gateway: gateway, logger: logs.logger(.auth))

@MainActor func route(onboarding: CachedOnboarding?, sawCompleted: Bool = false) -> AppRoute {
    InitialRoute.decide(
        LaunchSnapshot(
            userId: auth.currentUserId, cachedOnboarding: onboarding, deviceSawCompletedUser: sawCompleted))
}

var failures = 0
@MainActor func check(_ what: String, _ route: AppRoute, _ expected: AppRoute) {
    print("\(what): \(route)")
    if route != expected {
        print("  expected \(expected)")
        failures += 1
    }
}

check("first launch", route(onboarding: nil), .onboarding(.welcome))
let user = AuthUser(id: "user-1", email: "ana@example.com")
gateway.onSignIn(
    .session(
        AuthSession(
            accessToken: "a", refreshToken: "r", expiresAt: Date().addingTimeInterval(3_600), user: user)))
_ = try await auth.signIn(email: "ana@example.com", password: "password-1")
check("signed in, onboarding at its second step", route(onboarding: .inProgress(.auth)), .onboarding(.createEventType))
check("signed in, onboarding done", route(onboarding: .completed), .authenticated)
await auth.signOut(scope: .local)
check("signed out on a device that saw a completed user", route(onboarding: nil, sawCompleted: true), .login)
exit(failures == 0 ? 0 : 1)
