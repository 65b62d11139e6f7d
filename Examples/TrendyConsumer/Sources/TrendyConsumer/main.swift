import Foundation
import Synchronization
import TrendyAuth
import TrendyAuthTesting
import TrendyLogging
import TrendyOnboarding
import TrendyOnboardingTesting
import TrendyRouting

// An app's own composition root, built from Trendy Core's library products: its session store,
// auth server and onboarding backend (here the Testing products' fakes, which keep the same
// contracts as the real server; an iOS app puts Keychain and its HTTP client there), its own
// local data for the onboarding steps, and Trendy Core's controllers and route coordinator.
// Prints each step; exits non-zero when a route is not the expected one.
let logs = LogSystem.disabled()
let auth = AuthController(
    store: InMemorySessionStore(), gateway: InMemoryAuthServer(), logger: logs.logger(.auth))
let onboarding = OnboardingController(
    cache: InMemoryOnboardingCache(), api: InMemoryOnboardingBackend(),
    currentUserId: { auth.currentUserId }, hasEventTypes: { false }, fetchTimeout: .seconds(2),
    logger: logs.logger(.onboarding))

/// The app's own local data for the onboarding steps (a real app: its database).
final class AppData: OnboardingLocalData {
    let types = Mutex<Set<String>>([])
    let events = Mutex(0)
    func hasEventTypes() async throws -> Bool { types.withLock { !$0.isEmpty } }
    func hasEvents() async throws -> Bool { events.withLock { $0 > 0 } }
    func ensureEventType(named name: String) async throws { _ = types.withLock { $0.insert(name) } }
    func logEvent(ofType type: String) async throws { events.withLock { $0 += 1 } }
}

var failures = 0
@MainActor func check(_ what: String, _ route: AppRoute, _ expected: AppRoute) {
    print("\(what): \(route)")
    if route != expected {
        print("  expected \(expected)")
        failures += 1
    }
}

/// The route a launch shows after its background work settled.
func launch(_ onboarding: any RoutingOnboarding) async -> AppRoute {
    let routing = RouteCoordinator(auth: auth, onboarding: onboarding, logger: logs.logger(.routing))
    let first = routing.launch()
    await routing.settle()
    defer { routing.stop() }
    print("  (first frame: \(first))")
    return routing.route
}

check("first launch", await launch(onboarding), .onboarding(.welcome))
_ = try await auth.signUp(email: "ana@example.com", password: "password-1")
check("signed up", await launch(onboarding), .onboarding(.createEventType))

let steps = OnboardingSteps(status: onboarding, local: AppData(), currentUserId: { auth.currentUserId })
let person = ScriptedPermissionPrompter([.notifications: .allow, .location: .deny])
_ = try await steps.next(typeName: "Coffee", logType: nil, prompter: person)
_ = try await steps.next(typeName: nil, logType: "Coffee", prompter: person)
_ = try await steps.next(typeName: nil, logType: nil, prompter: person)
print("onboarding: \(try await steps.next(typeName: nil, logType: nil, prompter: person).label)")
check("onboarded", await launch(onboarding), .authenticated)
check("an app without onboarding", await launch(NoOnboarding()), .authenticated)

await auth.signOut(scope: .local)
check("signed out on a device that saw a completed user", await launch(onboarding), .login)
exit(failures == 0 ? 0 : 1)
