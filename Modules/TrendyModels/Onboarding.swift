/// The onboarding steps, in order.
public enum OnboardingStep: String, Codable, Sendable, CaseIterable, Comparable {
    /// What Trendy is.
    case welcome
    /// Sign up or sign in.
    case auth
    /// Create the first event type.
    case createEventType = "create_event_type"
    /// Log the first event.
    case logFirstEvent = "log_first_event"
    /// Notification, location and health permissions (skippable).
    case permissions
    /// Done.
    case finish

    /// Steps order by their position in the flow.
    public static func < (lhs: OnboardingStep, rhs: OnboardingStep) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// What happened when a permission was (or was not) asked for.
public enum PermissionOutcome: String, Codable, Sendable, CaseIterable {
    /// The person allowed it.
    case granted
    /// The person refused it.
    case denied
    /// The person skipped the priming screen.
    case skipped
    /// Never asked.
    case notRequested = "not_requested"
}
