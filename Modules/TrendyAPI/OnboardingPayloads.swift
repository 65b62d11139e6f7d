import Foundation
import TrendyModels

/// A user's onboarding status as the server stores it.
public struct OnboardingStatus: Codable, Sendable, Hashable {
    /// Whether onboarding is finished.
    public var completed: Bool
    /// The step the user is on.
    public var currentStep: OnboardingStep
    /// When each step was completed.
    public var stepCompletedAt: [String: Date]
    /// When onboarding was finished.
    public var completedAt: Date?
    /// Notification permission outcome.
    public var notificationsStatus: PermissionOutcome
    /// Location permission outcome.
    public var locationStatus: PermissionOutcome
    /// Health permission outcome.
    public var healthStatus: PermissionOutcome
    /// When the status last changed.
    public var updatedAt: Date?

    /// The status of a user who has not started.
    public static let initial = OnboardingStatus(
        completed: false, currentStep: .welcome, stepCompletedAt: [:], completedAt: nil,
        notificationsStatus: .notRequested, locationStatus: .notRequested, healthStatus: .notRequested, updatedAt: nil)

    /// Creates a status.
    public init(
        completed: Bool, currentStep: OnboardingStep, stepCompletedAt: [String: Date], completedAt: Date?,
        notificationsStatus: PermissionOutcome, locationStatus: PermissionOutcome, healthStatus: PermissionOutcome,
        updatedAt: Date?
    ) {
        self.completed = completed
        self.currentStep = currentStep
        self.stepCompletedAt = stepCompletedAt
        self.completedAt = completedAt
        self.notificationsStatus = notificationsStatus
        self.locationStatus = locationStatus
        self.healthStatus = healthStatus
        self.updatedAt = updatedAt
    }

    enum CodingKeys: String, CodingKey {
        case completed
        case currentStep = "current_step"
        case stepCompletedAt = "step_completed_at"
        case completedAt = "completed_at"
        case notificationsStatus = "notifications_status"
        case locationStatus = "location_status"
        case healthStatus = "health_status"
        case updatedAt = "updated_at"
    }
}

/// `PATCH /users/onboarding`: absent fields keep their value.
public struct OnboardingUpdate: Codable, Sendable, Equatable {
    /// Mark finished (or not).
    public var completed: Bool?
    /// Move to a step.
    public var currentStep: OnboardingStep?
    /// Record step completion times (merged into the stored ones).
    public var stepCompletedAt: [String: Date]?
    /// Notification outcome.
    public var notificationsStatus: PermissionOutcome?
    /// Location outcome.
    public var locationStatus: PermissionOutcome?
    /// Health outcome.
    public var healthStatus: PermissionOutcome?

    /// Creates an update.
    public init(
        completed: Bool? = nil, currentStep: OnboardingStep? = nil, stepCompletedAt: [String: Date]? = nil,
        notificationsStatus: PermissionOutcome? = nil, locationStatus: PermissionOutcome? = nil,
        healthStatus: PermissionOutcome? = nil
    ) {
        self.completed = completed
        self.currentStep = currentStep
        self.stepCompletedAt = stepCompletedAt
        self.notificationsStatus = notificationsStatus
        self.locationStatus = locationStatus
        self.healthStatus = healthStatus
    }

    enum CodingKeys: String, CodingKey {
        case completed
        case currentStep = "current_step"
        case stepCompletedAt = "step_completed_at"
        case notificationsStatus = "notifications_status"
        case locationStatus = "location_status"
        case healthStatus = "health_status"
    }

    /// Applies the update; completion is sticky (a completed status stays completed) and
    /// records `completed_at` once.
    public func apply(to status: OnboardingStatus, now: Date) -> OnboardingStatus {
        var s = status
        if let currentStep { s.currentStep = currentStep }
        if let stepCompletedAt { s.stepCompletedAt.merge(stepCompletedAt) { old, _ in old } }
        if let notificationsStatus { s.notificationsStatus = notificationsStatus }
        if let locationStatus { s.locationStatus = locationStatus }
        if let healthStatus { s.healthStatus = healthStatus }
        if completed == true, !s.completed {
            s.completed = true
            s.completedAt = now
            s.currentStep = .finish
        } else if completed == false {
            s.completed = false
            s.completedAt = nil
        }
        s.updatedAt = now
        return s
    }
}
