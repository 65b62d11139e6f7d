import TrendyOnboarding
import TrendySync

/// The live HTTP client serves every module's remote port: Sync's (the engine's 17 calls) and
/// Onboarding's (its three).
extension LiveTrendyAPIClient: SyncRemote, OnboardingRemote {}
