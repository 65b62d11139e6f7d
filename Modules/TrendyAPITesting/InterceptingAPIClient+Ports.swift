import TrendyOnboarding
import TrendySync

/// The recording wrapper serves the same ports as the client it wraps.
extension InterceptingAPIClient: SyncRemote, OnboardingRemote {}
