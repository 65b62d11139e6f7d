import Foundation
import Synchronization
import TrendyAuth

/// An ``AuthGateway`` whose answers a test scripts. Counts calls; a refresh can be held at a
/// gate until the test releases it, to create races on purpose. Unscripted calls fail with
/// `.server(status: 501, ...)` so a test notices them. Does not validate tokens.
public final class ScriptedAuthGateway: AuthGateway {
    /// What a call answers.
    public enum Answer: Sendable {
        /// Succeed with this session.
        case session(AuthSession)
        /// Fail with this error.
        case failure(AuthError)
    }

    struct State {
        var signUp: [Answer] = []
        var signIn: [Answer] = []
        var refresh: [Answer] = []
        var user: [Result<AuthUser, AuthError>] = []
        var signOut: [AuthError?] = []
        var updatePassword: [AuthError?] = []
        var nonces: [String?] = []
        var calls: [String: Int] = [:]
        var refreshTokensSeen: [String] = []
        var gate: [CheckedContinuation<Void, Never>]?
        var signInGate: [CheckedContinuation<Void, Never>]?
    }

    let state = Mutex(State())

    /// Creates a gateway with nothing scripted.
    public init() {}

    /// Scripts the next sign-up answers.
    public func onSignUp(_ answers: Answer...) { state.withLock { $0.signUp += answers } }
    /// Scripts the next sign-in answers.
    public func onSignIn(_ answers: Answer...) { state.withLock { $0.signIn += answers } }
    /// Scripts the next refresh answers.
    public func onRefresh(_ answers: Answer...) { state.withLock { $0.refresh += answers } }
    /// Scripts the next `/user` answers.
    public func onUser(_ answers: Result<AuthUser, AuthError>...) { state.withLock { $0.user += answers } }
    /// Scripts the next sign-out answers (nil = success).
    public func onSignOut(_ answers: AuthError?...) { state.withLock { $0.signOut += answers } }

    /// How often `name` (`signUp`, `signIn`, `refresh`, `user`, `signOut`) was called.
    public func calls(_ name: String) -> Int { state.withLock { $0.calls[name, default: 0] } }

    /// Refresh tokens presented, in order.
    public var refreshTokensSeen: [String] { state.withLock { $0.refreshTokensSeen } }

    typealias Gate = WritableKeyPath<State, [CheckedContinuation<Void, Never>]?>

    /// Holds every refresh until ``openRefreshGate()``.
    public func closeRefreshGate() { close(\.gate) }
    /// Releases held refreshes.
    public func openRefreshGate() { open(\.gate) }
    /// How many refreshes are waiting at the gate.
    public var heldRefreshes: Int { state.withLock { $0.gate?.count ?? 0 } }

    /// Holds every sign-in until ``openSignInGate()``.
    public func closeSignInGate() { close(\.signInGate) }
    /// Releases held sign-ins.
    public func openSignInGate() { open(\.signInGate) }
    /// How many sign-ins are waiting at their gate.
    public var heldSignIns: Int { state.withLock { $0.signInGate?.count ?? 0 } }

    func close(_ gate: Gate) { state.withLock { $0[keyPath: gate] = [] } }

    func open(_ gate: Gate) {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            defer { s[keyPath: gate] = nil }
            return s[keyPath: gate] ?? []
        }
        for w in waiters { w.resume() }
    }

    /// Parks the caller while the gate at `gate` is closed.
    func wait(at gate: Gate) async {
        guard state.withLock({ $0[keyPath: gate] != nil }) else { return }
        await withCheckedContinuation { continuation in
            let parked = state.withLock { s -> Bool in
                guard s[keyPath: gate] != nil else { return false }
                s[keyPath: gate]?.append(continuation)
                return true
            }
            if !parked { continuation.resume() }
        }
    }

    func next(_ name: String, _ queue: WritableKeyPath<State, [Answer]>) -> Answer {
        state.withLock { s in
            s.calls[name, default: 0] += 1
            guard !s[keyPath: queue].isEmpty else {
                return .failure(.server(status: 501, code: "unscripted", message: "\(name) was not scripted"))
            }
            return s[keyPath: queue].removeFirst()
        }
    }

    func resolve(_ answer: Answer) throws(AuthError) -> AuthSession {
        switch answer {
        case .session(let s): return s
        case .failure(let e): throw e
        }
    }

    /// Answers from the sign-up script.
    public func signUp(email: String, password: String) async throws(AuthError) -> AuthSession {
        try resolve(next("signUp", \.signUp))
    }

    /// Waits at the sign-in gate if closed, then answers from the sign-in script.
    public func signIn(email: String, password: String) async throws(AuthError) -> AuthSession {
        await wait(at: \.signInGate)
        return try resolve(next("signIn", \.signIn))
    }

    /// Waits at the gate if closed, then answers from the refresh script.
    public func refresh(refreshToken: String) async throws(AuthError) -> AuthSession {
        state.withLock { $0.refreshTokensSeen.append(refreshToken) }
        await wait(at: \.gate)
        return try resolve(next("refresh", \.refresh))
    }

    /// Answers from the `/user` script.
    public func user(accessToken: String) async throws(AuthError) -> AuthUser {
        let answer: Result<AuthUser, AuthError>? = state.withLock { s in
            s.calls["user", default: 0] += 1
            return s.user.isEmpty ? nil : s.user.removeFirst()
        }
        guard let answer else { throw .server(status: 501, code: "unscripted", message: "user was not scripted") }
        return try answer.get()
    }

    /// Succeeds unless a failure is scripted with `onUpdatePassword`; records the nonce sent.
    public func updatePassword(accessToken: String, newPassword: String, nonce: String?) async throws(AuthError) {
        let answer: AuthError? = state.withLock { s in
            s.calls["updatePassword", default: 0] += 1
            s.nonces.append(nonce)
            return s.updatePassword.isEmpty ? nil : s.updatePassword.removeFirst()
        }
        if let answer { throw answer }
    }

    /// Succeeds (counted as `requestReauthentication`).
    public func requestReauthentication(accessToken: String) async throws(AuthError) {
        state.withLock { $0.calls["requestReauthentication", default: 0] += 1 }
    }

    /// The nonce sent with each password update, in order.
    public var nonces: [String?] { state.withLock { $0.nonces } }

    /// Fails the next password updates with these errors (nil: succeeds).
    public func onUpdatePassword(_ answers: AuthError?...) { state.withLock { $0.updatePassword += answers } }

    /// Answers from the sign-out script.
    public func signOut(accessToken: String, scope: SignOutScope) async throws(AuthError) {
        let answer: AuthError? = state.withLock { s in
            s.calls["signOut", default: 0] += 1
            return s.signOut.isEmpty ? nil : s.signOut.removeFirst()
        }
        if let answer { throw answer }
    }
}
