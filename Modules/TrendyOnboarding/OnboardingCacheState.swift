import Foundation
import TrendyAPI
import TrendyModels

/// Where a user stands in onboarding, as the launch decision needs it.
public enum CachedOnboarding: Sendable, Hashable {
    /// Finished.
    case completed
    /// Mid-way, at this step.
    case inProgress(OnboardingStep)

    /// The position a status describes.
    public init(_ status: OnboardingStatus) {
        self = status.completed ? .completed : .inProgress(status.currentStep)
    }
}

/// Everything onboarding keeps on the device, persisted as one value by an ``OnboardingCache``.
public struct OnboardingCacheState: Codable, Sendable, Equatable {
    /// Whether any user completed onboarding on this device (routes a signed-out launch to login).
    public var deviceSawCompletedUser: Bool
    /// The step a signed-out person is on (welcome or auth).
    public var signedOutStep: OnboardingStep
    /// Per-user records, by user id.
    public var users: [String: OnboardingUserRecord]
    /// The local analytics log, oldest first.
    public var analytics: [AnalyticsEvent]

    /// A fresh install.
    public static let empty = OnboardingCacheState(
        deviceSawCompletedUser: false, signedOutStep: .welcome, users: [:], analytics: [])

    /// Creates a state.
    public init(
        deviceSawCompletedUser: Bool, signedOutStep: OnboardingStep, users: [String: OnboardingUserRecord],
        analytics: [AnalyticsEvent]
    ) {
        self.deviceSawCompletedUser = deviceSawCompletedUser
        self.signedOutStep = signedOutStep
        self.users = users
        self.analytics = analytics
    }

    enum CodingKeys: String, CodingKey {
        case deviceSawCompletedUser = "device_saw_completed_user"
        case signedOutStep = "signed_out_step"
        case users, analytics
    }

    /// Whether `name` was already recorded for `userId`.
    public func recorded(_ name: AnalyticsEvent.Name, for userId: String) -> Bool {
        analytics.contains { $0.name == name && $0.userId == userId }
    }
}

/// One user's onboarding on this device: the cached status and the write not yet on the server.
public struct OnboardingUserRecord: Codable, Sendable, Equatable {
    /// The status as last known (server truth with local changes applied).
    public var status: OnboardingStatus
    /// Local changes the server has not confirmed yet, merged into one update.
    public var pending: PendingOnboardingWrite?
    /// When the status was last fetched from the server.
    public var fetchedAt: Date?

    /// Creates a record.
    public init(status: OnboardingStatus, pending: PendingOnboardingWrite? = nil, fetchedAt: Date? = nil) {
        self.status = status
        self.pending = pending
        self.fetchedAt = fetchedAt
    }

    enum CodingKeys: String, CodingKey {
        case status, pending
        case fetchedAt = "fetched_at"
    }
}

/// A status write waiting for the server. Its idempotency key stays the same across retries and
/// changes only when more changes are merged in.
public struct PendingOnboardingWrite: Codable, Sendable, Equatable {
    /// The merged update.
    public var update: OnboardingUpdate
    /// The idempotency key sent with it.
    public var idempotencyKey: String
    /// Failed attempts so far.
    public var attempts: Int
    /// The last failure, for status output.
    public var lastError: String?

    /// Creates a pending write.
    public init(update: OnboardingUpdate, idempotencyKey: String, attempts: Int = 0, lastError: String? = nil) {
        self.update = update
        self.idempotencyKey = idempotencyKey
        self.attempts = attempts
        self.lastError = lastError
    }

    enum CodingKeys: String, CodingKey {
        case update, attempts
        case idempotencyKey = "idempotency_key"
        case lastError = "last_error"
    }
}

/// One entry in the local analytics log.
public struct AnalyticsEvent: Codable, Sendable, Equatable {
    /// The analytics events onboarding records.
    public enum Name: String, Codable, Sendable {
        /// A new user began onboarding (once per user).
        case onboardingStarted = "onboarding_started"
        /// A user finished onboarding (once per user).
        case onboardingCompleted = "onboarding_completed"
    }

    /// What happened.
    public var name: Name
    /// Who it happened to.
    public var userId: String
    /// When.
    public var at: Date

    /// Creates an entry.
    public init(name: Name, userId: String, at: Date) {
        self.name = name
        self.userId = userId
        self.at = at
    }

    enum CodingKeys: String, CodingKey {
        case name
        case userId = "user_id"
        case at
    }
}

extension OnboardingUpdate {
    /// This update followed by `later`: later values win, step times keep the first one recorded.
    public func merged(with later: OnboardingUpdate) -> OnboardingUpdate {
        var m = self
        if let v = later.completed { m.completed = v }
        if let v = later.currentStep { m.currentStep = v }
        if let v = later.stepCompletedAt { m.stepCompletedAt = (m.stepCompletedAt ?? [:]).merging(v) { old, _ in old } }
        if let v = later.notificationsStatus { m.notificationsStatus = v }
        if let v = later.locationStatus { m.locationStatus = v }
        if let v = later.healthStatus { m.healthStatus = v }
        return m
    }
}

/// What the launch decision needs from onboarding, read before anything is built: the user's
/// cached position, whether the device saw a completed user, and the signed-out person's step.
public struct OnboardingLaunchFacts: Sendable, Equatable {
    /// The user's cached position, if any.
    public var position: CachedOnboarding?
    /// Whether any user completed onboarding on this device.
    public var deviceSawCompletedUser: Bool
    /// The signed-out person's step.
    public var signedOutStep: OnboardingStep

    /// Creates facts.
    public init(position: CachedOnboarding?, deviceSawCompletedUser: Bool, signedOutStep: OnboardingStep) {
        self.position = position
        self.deviceSawCompletedUser = deviceSawCompletedUser
        self.signedOutStep = signedOutStep
    }
}
