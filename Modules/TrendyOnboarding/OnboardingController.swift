import Foundation
import Logging
import Synchronization
import TrendyAPI
import TrendyLogging
import TrendyModels

/// The ``OnboardingStatusService``: a locked in-memory copy of the cache for synchronous reads,
/// cache-first writes, a pending write per user that survives restarts, and fetches that give up
/// after `fetchTimeout` and fall back to the cache.
///
/// Analytics: `onboarding_started` is recorded once for a user whose status shows no progress yet
/// when they pass the auth step; `onboarding_completed` once when they finish. A returning user
/// (already completed, or already past a step elsewhere) records nothing.
public final class OnboardingController: OnboardingStatusService, Sendable {
    let cache: any OnboardingCache
    let api: any OnboardingRemote
    let currentUserId: @Sendable () -> String?
    let hasEventTypes: @Sendable () async -> Bool
    let now: @Sendable () -> Date
    let newKey: @Sendable () -> String
    let fetchTimeout: Duration
    let logger: Logger
    let state: Mutex<OnboardingCacheState>
    let flushing = Mutex(false)

    /// Creates the controller and loads the cache synchronously.
    public init(
        cache: any OnboardingCache, api: any OnboardingRemote, currentUserId: @escaping @Sendable () -> String?,
        hasEventTypes: @escaping @Sendable () async -> Bool, fetchTimeout: Duration = .seconds(3),
        now: @escaping @Sendable () -> Date = Date.init, ids: UUIDv7Generator = UUIDv7Generator(), logger: Logger
    ) {
        self.cache = cache
        self.api = api
        self.currentUserId = currentUserId
        self.hasEventTypes = hasEventTypes
        self.fetchTimeout = fetchTimeout
        self.now = now
        self.newKey = { "onboarding-" + ids.next().description }
        self.logger = logger
        state = Mutex(cache.load())
    }

    // MARK: Synchronous reads

    /// The cached status for a user.
    public func cachedStatus(for userId: String) -> OnboardingStatus? { state.withLock { $0.users[userId]?.status } }

    /// The cached position for a user.
    public func cachedPosition(for userId: String) -> CachedOnboarding? {
        cachedStatus(for: userId).map(CachedOnboarding.init)
    }

    /// Whether any user completed onboarding here.
    public var deviceSawCompletedUser: Bool { state.withLock { $0.deviceSawCompletedUser } }

    /// The signed-out person's step.
    public var signedOutStep: OnboardingStep { state.withLock { $0.signedOutStep } }

    /// The pending write for a user.
    public func pendingWrite(for userId: String) -> PendingOnboardingWrite? {
        state.withLock { $0.users[userId]?.pending }
    }

    /// The local analytics log.
    public func analyticsEvents() -> [AnalyticsEvent] { state.withLock { $0.analytics } }

    /// Moves a signed-out person between welcome and auth (other steps need a session).
    public func setSignedOutStep(_ step: OnboardingStep) {
        guard step <= .auth else { return }
        mutate { $0.signedOutStep = step }
    }

    // MARK: Fetching

    /// The server's status with local pending changes applied; the cache when the server is slow or away.
    public func refresh(userId: String) async -> OnboardingFetch {
        guard currentUserId() == userId else { return fallback(userId, reason: "not the signed-in user") }
        let result = await withDeadline(fetchTimeout) { [api] () async throws(TrendyAPIError) -> OnboardingStatus in
            try await api.onboardingStatus()
        }
        switch result {
        case .success(let server):
            let merged = mutate { s -> OnboardingStatus in
                var record = s.users[userId] ?? OnboardingUserRecord(status: server)
                record.status =
                    record.pending.map { $0.update.apply(to: server, now: server.updatedAt ?? now()) } ?? server
                record.fetchedAt = now()
                s.users[userId] = record
                if record.status.completed { s.deviceSawCompletedUser = true }
                return record.status
            }
            return .fresh(merged)
        case .failure(let reason):
            logger.notice(
                "Onboarding status not fetched; using the cache", metadata: ["reason": .string(reason.description)])
            return fallback(userId, reason: reason.description)
        }
    }

    func fallback(_ userId: String, reason: String) -> OnboardingFetch {
        if let cached = cachedStatus(for: userId) { return .cached(cached, reason: reason) }
        return .unavailable(reason: reason)
    }

    /// After a sign-in: fresh status, then a new user moves past auth (and past creating a type
    /// when they already have one).
    public func signedIn(userId: String) async -> OnboardingFetch {
        let fetched = await refresh(userId: userId)
        mutate { $0.signedOutStep = .welcome }
        let status: OnboardingStatus
        switch fetched {
        case .fresh(let s), .cached(let s, _): status = s
        case .unavailable:
            // Offline with nothing cached. A device holding this account's data is a returning
            // user whose cache was lost: nothing is known, so nothing is written (a guessed step
            // would reach the server later and undo a completed onboarding).
            if await hasEventTypes() { return fetched }
            // A new user: continue onboarding locally; the write catches up later.
            status = .initial
        }
        guard !status.completed else { return fetched }
        var target = max(status.currentStep, .createEventType)
        if target == .createEventType, await hasEventTypes() { target = .logFirstEvent }
        guard target != status.currentStep else { return fetched }
        let moved = await advance(userId: userId, to: target)
        switch fetched {
        case .fresh: return .fresh(moved)
        case .cached(_, let reason), .unavailable(let reason): return .cached(moved, reason: reason)
        }
    }

    // MARK: Writes

    /// Moves to `step`, marking every step before it completed.
    @discardableResult public func advance(userId: String, to step: OnboardingStep) async -> OnboardingStatus {
        let at = now()
        let status = cachedStatus(for: userId) ?? .initial
        var times: [String: Date] = [:]
        for done in OnboardingStep.allCases where done < step && status.stepCompletedAt[done.rawValue] == nil {
            times[done.rawValue] = at
        }
        return await write(userId, OnboardingUpdate(currentStep: step, stepCompletedAt: times.isEmpty ? nil : times))
    }

    /// Stores a permission outcome.
    @discardableResult public func recordPermission(
        userId: String, _ kind: PermissionKind, _ outcome: PermissionOutcome
    ) async
        -> OnboardingStatus
    {
        var update = OnboardingUpdate()
        switch kind {
        case .notifications: update.notificationsStatus = outcome
        case .location: update.locationStatus = outcome
        case .health: update.healthStatus = outcome
        }
        return await write(userId, update)
    }

    /// Finishes onboarding; a second call changes nothing.
    @discardableResult public func complete(userId: String) async -> OnboardingStatus {
        if let cached = cachedStatus(for: userId), cached.completed {
            await flushPending()
            return cached
        }
        let at = now()
        let status = cachedStatus(for: userId) ?? .initial
        var times: [String: Date] = [:]
        for done in OnboardingStep.allCases where status.stepCompletedAt[done.rawValue] == nil {
            times[done.rawValue] = at
        }
        return await write(userId, OnboardingUpdate(completed: true, stepCompletedAt: times))
    }

    /// Server first: a reset that cannot reach the server changes nothing locally.
    public func reset(userId: String) async throws(TrendyAPIError) -> OnboardingStatus {
        let status = try await api.resetOnboarding()
        mutate { s in
            s.users[userId] = OnboardingUserRecord(status: status, fetchedAt: now())
            s.signedOutStep = .welcome
        }
        logger.info("Onboarding reset", metadata: ["user_id": .string(userId)])
        return status
    }

    /// Cache first (with analytics), then the backend.
    func write(_ userId: String, _ update: OnboardingUpdate) async -> OnboardingStatus {
        let at = now()
        let status = mutate { s -> OnboardingStatus in
            var record = s.users[userId] ?? OnboardingUserRecord(status: .initial)
            let before = record.status
            record.status = update.apply(to: before, now: at)
            if let pending = record.pending {
                record.pending = PendingOnboardingWrite(
                    update: pending.update.merged(with: update), idempotencyKey: newKey(), attempts: pending.attempts,
                    lastError: pending.lastError)
            } else {
                record.pending = PendingOnboardingWrite(update: update, idempotencyKey: newKey())
            }
            s.users[userId] = record
            let isNew = !before.completed && before.stepCompletedAt.isEmpty
            if isNew, record.status.currentStep > .auth, !s.recorded(.onboardingStarted, for: userId) {
                s.analytics.append(AnalyticsEvent(name: .onboardingStarted, userId: userId, at: at))
            }
            if record.status.completed, !before.completed {
                s.deviceSawCompletedUser = true
                if !s.recorded(.onboardingCompleted, for: userId) {
                    s.analytics.append(AnalyticsEvent(name: .onboardingCompleted, userId: userId, at: at))
                }
            }
            return record.status
        }
        await flushPending()
        return cachedStatus(for: userId) ?? status
    }

    /// Sends the signed-in user's pending write; a failure keeps it for the next try. One flush
    /// runs at a time: a change merged in while a write is in flight goes out in the same flush,
    /// right after it, so a concurrent caller can return at once.
    @discardableResult public func flushPending() async -> Bool {
        guard let userId = currentUserId() else { return true }
        let claimed = flushing.withLock { busy in
            defer { busy = true }
            return !busy
        }
        guard claimed else { return false }
        defer { flushing.withLock { $0 = false } }
        while let pending = pendingWrite(for: userId) {
            guard await send(pending, for: userId) else { return false }
        }
        return true
    }

    /// One write to the backend; true when it was accepted.
    func send(_ pending: PendingOnboardingWrite, for userId: String) async -> Bool {
        do {
            let server = try await api.updateOnboarding(pending.update, idempotencyKey: pending.idempotencyKey)
            mutate { s in
                guard var record = s.users[userId] else { return }
                if record.pending?.idempotencyKey == pending.idempotencyKey {
                    record.pending = nil
                    record.status = server
                } else if let newer = record.pending {
                    // More changes arrived while this write was in flight; they go out next.
                    record.status = newer.update.apply(to: server, now: now())
                }
                record.fetchedAt = now()
                s.users[userId] = record
                if record.status.completed { s.deviceSawCompletedUser = true }
            }
            return true
        } catch {
            logger.notice(
                "Onboarding write kept for a retry",
                metadata: ["error": .string(error.description), "attempts": .stringConvertible(pending.attempts + 1)])
            mutate { s in
                guard var record = s.users[userId], record.pending?.idempotencyKey == pending.idempotencyKey else {
                    return
                }
                record.pending?.attempts += 1
                record.pending?.lastError = error.description
                s.users[userId] = record
            }
            return false
        }
    }

    // MARK: Persistence

    /// Applies `change` and saves; a save failure is logged and the in-memory state kept.
    @discardableResult
    func mutate<T>(_ change: (inout OnboardingCacheState) -> T) -> T {
        state.withLock { s in
            let result = change(&s)
            do {
                try cache.save(s)
            } catch {
                logger.error("Onboarding cache not saved", metadata: ["error": .string(String(describing: error))])
            }
            return result
        }
    }
}

/// Runs an API call, giving up after `timeout` (the call is then cancelled and its late result
/// dropped): ``TrendyAPI/withDeadline(_:orElse:_:)`` with the outcome as a `Result`.
func withDeadline<T: Sendable>(
    _ timeout: Duration, _ work: @escaping @Sendable () async throws(TrendyAPIError) -> T
) async -> Result<T, DeadlineFailure> {
    let late: @Sendable () -> Result<T, DeadlineFailure> = {
        .failure(DeadlineFailure(description: "timed out after \(timeout)"))
    }
    let call: @Sendable () async -> Result<T, DeadlineFailure> = {
        do throws(TrendyAPIError) {
            return .success(try await work())
        } catch {
            return .failure(DeadlineFailure(description: error.description))
        }
    }
    return await withDeadline(timeout, orElse: late, call)
}

/// Why a deadline-bound call produced no value.
struct DeadlineFailure: Error, CustomStringConvertible, Equatable {
    let description: String
}
