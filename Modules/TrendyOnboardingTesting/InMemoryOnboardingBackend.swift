import Foundation
import Synchronization
import TrendyAPI
import TrendyOnboarding

/// An ``OnboardingRemote`` that answers like the server, in memory: the initial status for a new
/// user, partial updates applied with the server's rules, a soft reset. Failures can be scripted
/// (the next calls throw them, e.g. `.transport(.refused(...))` for offline), and every call is
/// counted, so a module's tests need no server.
public final class InMemoryOnboardingBackend: OnboardingRemote {
    struct State {
        var status: OnboardingStatus?
        var failures: [TrendyAPIError] = []
        var calls: [String: Int] = [:]
        var updates: [OnboardingUpdate] = []
    }

    let state: Mutex<State>
    let now: @Sendable () -> Date

    /// A backend with `status` stored (nil: a new user), on the clock `now`.
    public init(status: OnboardingStatus? = nil, now: @escaping @Sendable () -> Date = Date.init) {
        state = Mutex(State(status: status))
        self.now = now
    }

    /// Makes the next calls fail with these errors, in order.
    public func failNext(_ errors: TrendyAPIError...) { state.withLock { $0.failures += errors } }

    /// How many times `name` (`onboardingStatus`, `updateOnboarding`, `resetOnboarding`) was called.
    public func calls(_ name: String) -> Int { state.withLock { $0.calls[name, default: 0] } }

    /// Every update received, in order.
    public var updates: [OnboardingUpdate] { state.withLock { $0.updates } }

    /// The stored status (nil until the first call creates it).
    public var stored: OnboardingStatus? { state.withLock { $0.status } }

    func call<T>(_ name: String, _ body: (inout State) -> T) throws(TrendyAPIError) -> T {
        let outcome: Result<T, TrendyAPIError> = state.withLock { s in
            s.calls[name, default: 0] += 1
            if !s.failures.isEmpty { return .failure(s.failures.removeFirst()) }
            return .success(body(&s))
        }
        return try outcome.get()
    }

    func current(_ s: inout State) -> OnboardingStatus {
        if let status = s.status { return status }
        var initial = OnboardingStatus.initial
        initial.updatedAt = now()
        s.status = initial
        return initial
    }

    /// Implements ``OnboardingRemote/onboardingStatus()``.
    public func onboardingStatus() async throws(TrendyAPIError) -> OnboardingStatus {
        try call("onboardingStatus") { current(&$0) }
    }

    /// Implements ``OnboardingRemote/updateOnboarding(_:idempotencyKey:)``.
    public func updateOnboarding(_ body: OnboardingUpdate, idempotencyKey: String?) async throws(TrendyAPIError)
        -> OnboardingStatus
    {
        let at = now()
        return try call("updateOnboarding") { s in
            s.updates.append(body)
            let updated = body.apply(to: current(&s), now: at)
            s.status = updated
            return updated
        }
    }

    /// Implements ``OnboardingRemote/resetOnboarding()``.
    public func resetOnboarding() async throws(TrendyAPIError) -> OnboardingStatus {
        let at = now()
        return try call("resetOnboarding") { s in
            var initial = OnboardingStatus.initial
            initial.updatedAt = at
            s.status = initial
            return initial
        }
    }
}

/// An ``OnboardingRemote`` for tests that must not reach the server at all: every call records
/// an issue through `fail` and throws.
public struct UnimplementedOnboardingRemote: OnboardingRemote {
    let fail: @Sendable (String) -> Void

    /// Reports each unexpected call to `fail` (e.g. `{ Issue.record(Comment(rawValue: $0)) }`).
    public init(fail: @escaping @Sendable (String) -> Void) { self.fail = fail }

    func unexpected(_ name: String) -> TrendyAPIError {
        fail("unexpected call to OnboardingRemote.\(name)")
        return .server(status: 501, problem: nil)
    }

    /// Fails: not expected.
    public func onboardingStatus() async throws(TrendyAPIError) -> OnboardingStatus {
        throw unexpected("onboardingStatus")
    }

    /// Fails: not expected.
    public func updateOnboarding(_ body: OnboardingUpdate, idempotencyKey: String?) async throws(TrendyAPIError)
        -> OnboardingStatus
    { throw unexpected("updateOnboarding") }

    /// Fails: not expected.
    public func resetOnboarding() async throws(TrendyAPIError) -> OnboardingStatus {
        throw unexpected("resetOnboarding")
    }
}
