import TrendyAPI

/// The server calls onboarding makes: its own port, three calls instead of the whole API
/// client's. The live HTTP client conforms (TrendyAPILive); tests use
/// `InMemoryOnboardingBackend` (TrendyOnboardingTesting), which answers like the server.
public protocol OnboardingRemote: Sendable {
    /// `GET /users/onboarding`: the user's status (the defaults for a new user).
    func onboardingStatus() async throws(TrendyAPIError) -> OnboardingStatus
    /// `PATCH /users/onboarding`: applies a partial update and answers the new status.
    func updateOnboarding(_ body: OnboardingUpdate, idempotencyKey: String?) async throws(TrendyAPIError)
        -> OnboardingStatus
    /// `DELETE /users/onboarding`: back to the initial status (a soft reset).
    func resetOnboarding() async throws(TrendyAPIError) -> OnboardingStatus
}
