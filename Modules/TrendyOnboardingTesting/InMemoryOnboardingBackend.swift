import Foundation
import Synchronization
import TrendyAPI
import TrendyOnboarding
import TrendyTestSupport

/// An ``OnboardingRemote`` that answers like the server for one signed-in user, in memory: the
/// initial status for a new user, partial updates applied with the server's rules, a soft reset,
/// and idempotency keys (a repeated key with the same update answers the stored status without
/// applying it again; with another update, 422 `idempotency_key_reused`). Failures can be
/// scripted per call — before the work (`fail`) or after it, as a lost answer (`loseAnswer`) —
/// calls can be held to create races, and every call is recorded with its idempotency key, so a
/// module's tests need no server.
public final class InMemoryOnboardingBackend: OnboardingRemote {
    /// One call received.
    public struct Call: Sendable, Hashable {
        /// `onboardingStatus`, `updateOnboarding` or `resetOnboarding`.
        public var name: String
        /// The idempotency key sent, if any.
        public var idempotencyKey: String?
    }

    struct State {
        var status: OnboardingStatus?
        var failures: [(name: String?, error: TrendyAPIError, afterWork: Bool)] = []
        var answered: [String: (update: OnboardingUpdate, status: OnboardingStatus)] = [:]
        var calls: [Call] = []
        var updates: [OnboardingUpdate] = []
    }

    let state: Mutex<State>
    let gate = CallGate()
    let now: @Sendable () -> Date

    /// A backend with `status` stored (nil: a new user), on the clock `now`.
    public init(status: OnboardingStatus? = nil, now: @escaping @Sendable () -> Date = Date.init) {
        state = Mutex(State(status: status))
        self.now = now
    }

    /// Makes the next calls fail with these errors, in order, whatever they are.
    public func failNext(_ errors: TrendyAPIError...) {
        state.withLock { s in s.failures += errors.map { (nil, $0, false) } }
    }

    /// Fails the next `times` calls named `name` (any call when nil) with `error`.
    public func fail(_ name: String?, with error: TrendyAPIError, times: Int = 1) {
        state.withLock { s in for _ in 0..<times { s.failures.append((name, error, false)) } }
    }

    /// Does the next `times` calls named `name`, then fails them with `error` as if the answer
    /// had been lost on the way back (the server did the work).
    public func loseAnswer(_ name: String, with error: TrendyAPIError, times: Int = 1) {
        state.withLock { s in for _ in 0..<times { s.failures.append((name, error, true)) } }
    }

    /// The status the server holds, read without being recorded as a call (a new user's initial
    /// status before the first call).
    public var serverStatus: OnboardingStatus {
        let at = now()
        return state.withLock { Self.current(&$0, at) }
    }

    /// Applies `update` on the server's side, as another device would, without being recorded.
    public func applyOnServer(_ update: OnboardingUpdate) {
        let at = now()
        state.withLock { s in s.status = update.apply(to: Self.current(&s, at), now: at) }
    }

    /// Holds every call named `name` before it is answered, until ``releaseHeld()``.
    public func hold(_ name: String) { gate.hold(name) }

    /// How many calls are waiting.
    public var heldCount: Int { gate.heldCount }

    /// Lets held calls go and stops holding.
    public func releaseHeld() { gate.releaseHeld() }

    /// Every call received, in order.
    public var calls: [Call] { state.withLock { $0.calls } }

    /// How many times `name` was called.
    public func calls(_ name: String) -> Int { state.withLock { $0.calls.filter { $0.name == name }.count } }

    /// Every update received, in order.
    public var updates: [OnboardingUpdate] { state.withLock { $0.updates } }

    /// The stored status (nil until the first call creates it).
    public var stored: OnboardingStatus? { state.withLock { $0.status } }

    func call<T>(_ name: String, key: String? = nil, _ body: @Sendable (inout State) -> T) async throws(TrendyAPIError)
        -> T
    {
        state.withLock { $0.calls.append(Call(name: name, idempotencyKey: key)) }
        await gate.pass(name)
        let outcome: Result<T, TrendyAPIError> = state.withLock { s in
            if let i = s.failures.firstIndex(where: { $0.name == nil || $0.name == name }) {
                let failure = s.failures.remove(at: i)
                if failure.afterWork { _ = body(&s) }
                return .failure(failure.error)
            }
            return .success(body(&s))
        }
        return try outcome.get()
    }

    static func current(_ s: inout State, _ at: Date) -> OnboardingStatus {
        if let status = s.status { return status }
        var initial = OnboardingStatus.initial
        initial.updatedAt = at
        s.status = initial
        return initial
    }

    public func onboardingStatus() async throws(TrendyAPIError) -> OnboardingStatus {
        let at = now()
        return try await call("onboardingStatus") { Self.current(&$0, at) }
    }

    public func updateOnboarding(_ body: OnboardingUpdate, idempotencyKey: String?) async throws(TrendyAPIError)
        -> OnboardingStatus
    {
        let at = now()
        let answer: Result<OnboardingStatus, TrendyAPIError> = try await call("updateOnboarding", key: idempotencyKey) {
            s in
            if let key = idempotencyKey, let earlier = s.answered[key] {
                guard earlier.update == body else {
                    // Mapped as the live client maps the server's answer.
                    let problem = APIProblem(
                        status: 422, code: "idempotency_key_reused", title: "Idempotency key reused")
                    return .failure(.from(status: 422, problem: problem, retryAfter: nil))
                }
                return .success(earlier.status)
            }
            s.updates.append(body)
            let updated = body.apply(to: Self.current(&s, at), now: at)
            s.status = updated
            if let key = idempotencyKey { s.answered[key] = (body, updated) }
            return .success(updated)
        }
        return try answer.get()
    }

    public func resetOnboarding() async throws(TrendyAPIError) -> OnboardingStatus {
        let at = now()
        return try await call("resetOnboarding") { s in
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
