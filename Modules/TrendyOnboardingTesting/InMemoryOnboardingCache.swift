import Synchronization
import TrendyOnboarding

/// A working in-memory ``OnboardingCache``. Does not simulate: disk failures (set `failSaves`
/// to make every save throw), partial writes.
public final class InMemoryOnboardingCache: OnboardingCache {
    let stored: Mutex<OnboardingCacheState>
    let failing = Mutex(false)

    /// Starts with `state`.
    public init(_ state: OnboardingCacheState = .empty) { stored = Mutex(state) }

    /// What was saved last.
    public var state: OnboardingCacheState { stored.withLock { $0 } }

    /// Makes every later save throw (or not).
    public func failSaves(_ fail: Bool) { failing.withLock { $0 = fail } }

    /// The stored state.
    public func load() -> OnboardingCacheState { state }

    /// Stores `state` (or throws when told to fail).
    public func save(_ state: OnboardingCacheState) throws {
        if failing.withLock({ $0 }) { throw SaveFailure() }
        stored.withLock { $0 = state }
    }

    /// The error a failing save throws.
    public struct SaveFailure: Error {}
}

/// A ``PermissionPrompter`` that answers from a script and records what it was asked.
public final class ScriptedPermissionPrompter: PermissionPrompter {
    /// How the person answers for one permission.
    public enum Answer: Sendable, Equatable {
        /// Continue, then allow.
        case allow
        /// Continue, then refuse.
        case deny
        /// "Not now" on the priming screen.
        case notNow
    }

    let answers: [PermissionKind: Answer]
    let log = Mutex<[String]>([])

    /// Answers per permission; unlisted permissions get "not now".
    public init(_ answers: [PermissionKind: Answer]) { self.answers = answers }

    /// What was shown, in order (`prime:location`, `system:location`).
    public var asked: [String] { log.withLock { $0 } }

    /// Continue unless the answer is "not now".
    public func prime(_ kind: PermissionKind, explanation: String) async -> Bool {
        log.withLock { $0.append("prime:\(kind.rawValue)") }
        return (answers[kind] ?? .notNow) != .notNow
    }

    /// Allow only for `.allow`.
    public func requestSystemPermission(_ kind: PermissionKind) async -> Bool {
        log.withLock { $0.append("system:\(kind.rawValue)") }
        return answers[kind] == .allow
    }
}
