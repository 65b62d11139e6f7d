import ArgumentParser
import Logging
import TrendyAPI
import TrendyAPILive
import TrendyAuth
import TrendyLogging
import TrendyModels
import TrendyOnboarding
import TrendyOnboardingLive
import TrendyRouting
import TrendySync
import TrendySyncLive

/// Onboarding: the first-run flow's status (cached per user, written to the server), the launch's
/// cached position, and `trendy onboarding`. Without it, every account counts as onboarded
/// (``NoOnboarding``).
public struct OnboardingPlugin: TrendyPlugin {
    /// Creates the plugin.
    public init() {}

    /// The plugin's name.
    public var name: String { "onboarding" }
    /// What the feature does.
    public var summary: String { "The first-run flow: welcome, account, first type and event, permissions." }
    /// The commands the feature owns.
    public var commands: [any ParsableCommand.Type] { [OnboardingCommand.self] }
    /// What the feature reads.
    public var settings: [PluginSetting] {
        [.init(.file, "onboarding.json", "each user's onboarding status and writes not yet sent")]
    }

    /// The cached onboarding position the launch decides from.
    public func launchFacts(paths: AppPaths, userId: String?) -> OnboardingLaunchFacts? {
        Self.cache(paths, logger: LogSystem.disabled().logger(.onboarding)).launchFacts(for: userId)
    }

    /// Builds the feature's live parts.
    public func install(into app: inout AppAssembly) {
        let platform = app.platform
        let logger = platform.logs.logger(.onboarding)
        let store = platform.store
        let onboarding = OnboardingController(
            cache: Self.cache(platform.paths, logger: logger), api: platform.remote,
            currentUserId: { [auth = platform.auth] in auth.currentUserId },
            hasEventTypes: { [auth = platform.auth] in await Self.hasOwnEventTypes(store, user: auth.currentUserId) },
            fetchTimeout: platform.budget.respond, ids: platform.ids, logger: logger)
        app.onboarding = onboarding
        app.modules.append(OnboardingModule(onboarding: onboarding, auth: platform.auth))
    }

    /// Whether the local store holds event types of `user`'s: signed in to another account, the
    /// last one's types are still here until the sign-in claims the store, and onboarding skipped
    /// "Create a type" for them. Data no account claimed yet counts as the user's.
    static func hasOwnEventTypes(_ store: any LocalStore, user: String?) async -> Bool {
        if let owner = try? await store.owner(), owner != user { return false }
        return ((try? await store.eventTypes()) ?? []).isEmpty == false
    }

    static func cache(_ paths: AppPaths, logger: Logger) -> FileOnboardingCache {
        FileOnboardingCache(file: paths.onboardingFile, logger: logger)
    }
}

/// Onboarding's contribution to the lifecycle: send writes that failed earlier, after launch, on
/// foreground and before going to the background.
struct OnboardingModule: AppModule {
    let onboarding: any OnboardingStatusService
    let auth: any AuthService

    var name: String { "onboarding" }

    func didLaunch() async { await onboarding.flushPending() }

    func willEnterForeground() async { await onboarding.flushPending() }

    func didEnterBackground() async { await onboarding.flushPending() }

    func health() async -> ModuleHealth {
        guard let user = auth.currentUserId else {
            return ModuleHealth(module: name, ok: true, details: ["signed_in": "false"])
        }
        let pending = onboarding.pendingWrite(for: user)
        let status = onboarding.cachedStatus(for: user)
        return ModuleHealth(
            module: name, ok: pending == nil,
            details: [
                "completed": status.map { String($0.completed) } ?? "unknown",
                "step": status?.currentStep.rawValue ?? "unknown",
                "pending_write": pending.map { "attempts \($0.attempts)" } ?? "none",
            ])
    }
}
