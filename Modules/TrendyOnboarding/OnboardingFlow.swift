import TrendyModels

/// The onboarding steps' rules: order, back navigation (never back past sign-in), which steps
/// can be skipped and which need a session, and progress.
public enum OnboardingFlow {
    /// The step after `step`, or nil after the last.
    public static func next(after step: OnboardingStep) -> OnboardingStep? {
        let all = OnboardingStep.allCases
        guard let i = all.firstIndex(of: step), i + 1 < all.count else { return nil }
        return all[i + 1]
    }

    /// The step before `step` when going back is allowed, else nil.
    public static func previous(before step: OnboardingStep) -> OnboardingStep? {
        guard canGoBack(from: step) else { return nil }
        let all = OnboardingStep.allCases
        guard let i = all.firstIndex(of: step), i > 0 else { return nil }
        return all[i - 1]
    }

    /// Going back never crosses the sign-in step: once signed in, the account exists.
    public static func canGoBack(from step: OnboardingStep) -> Bool {
        switch step {
        case .welcome, .createEventType, .finish: return false
        case .auth, .logFirstEvent, .permissions: return true
        }
    }

    /// Only the permissions step may be skipped.
    public static func isSkippable(_ step: OnboardingStep) -> Bool { step == .permissions }

    /// Steps after sign-in need a session.
    public static func requiresAuth(_ step: OnboardingStep) -> Bool { step > .auth }

    /// Progress from 0 (welcome) to 1 (finish).
    public static func progress(at step: OnboardingStep) -> Double {
        let all = OnboardingStep.allCases
        return Double(all.firstIndex(of: step) ?? 0) / Double(all.count - 1)
    }

    /// Where a signed-in user continues: a user who already has event types skips creating one.
    public static func resume(at step: OnboardingStep, hasEventTypes: Bool) -> OnboardingStep {
        if step == .createEventType, hasEventTypes { return .logFirstEvent }
        return step
    }
}
