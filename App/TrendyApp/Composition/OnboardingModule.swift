import TrendyAPILive
import TrendyAuth
import TrendyOnboarding

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

/// The live HTTP client serves onboarding's port (the three calls it makes).
extension LiveTrendyAPIClient: OnboardingRemote {}
