import Foundation
import Synchronization
import TrendyAuth

/// An ``AuthGateway`` that behaves like GoTrue for the calls the app makes, in memory: accounts
/// with passwords, sessions with rotating refresh tokens (a token used again within the reuse
/// window answers the session's current one; after it, the whole session is revoked), access
/// tokens that expire, sign-out by scope, and password changes that end the user's other
/// sessions. Emails are trimmed and lower-cased and must look like an address; passwords are 6
/// characters to 72 bytes. Keeps ``AuthGatewayContract`` like the GoTrue gateway on the real
/// server does, so a module's tests get a server-shaped auth without a server. Not modelled:
/// reauthentication codes (`requestReauthentication` is accepted, a nonce is never required),
/// rate limits, user metadata.
public final class InMemoryAuthServer: AuthGateway {
    /// How long a used refresh token still answers (GoTrue's default: 10 s).
    public static let reuseWindow: TimeInterval = 10
    /// How long an access token lives.
    public static let accessTokenLifetime: TimeInterval = 3_600
    /// The shortest password accepted.
    public static let minimumPasswordLength = 6

    struct Account {
        var user: AuthUser
        var password: String
    }

    struct Session {
        var userId: String
        var revoked = false
        var current: String
    }

    struct RefreshToken {
        var session: UUID
        var usedAt: Date?
    }

    struct AccessToken {
        var session: UUID
        var expiresAt: Date
    }

    struct State {
        var accounts: [String: Account] = [:]
        var sessions: [UUID: Session] = [:]
        var refreshTokens: [String: RefreshToken] = [:]
        var accessTokens: [String: AccessToken] = [:]
    }

    let state = Mutex(State())
    let now: @Sendable () -> Date

    /// A server with no accounts, on the clock `now`.
    public init(now: @escaping @Sendable () -> Date = Date.init) { self.now = now }

    public func signUp(email: String, password: String) async throws(AuthError) -> AuthSession {
        let at = now()
        return try state.withLock { s throws(AuthError) in
            let key = Self.normalized(email)
            // The app's own plausibility rule, plus the characters the server also refuses.
            try CredentialRules.check(email: key)
            guard !key.contains(where: { ",<>".contains($0) }) else { throw .invalidEmail }
            try Self.checkStrength(password)
            guard s.accounts[key] == nil else { throw .userAlreadyExists }
            let user = AuthUser(id: UUID().uuidString.lowercased(), email: key)
            s.accounts[key] = Account(user: user, password: password)
            return Self.newSession(for: user, in: &s, at: at)
        }
    }

    public func signIn(email: String, password: String) async throws(AuthError) -> AuthSession {
        let at = now()
        return try state.withLock { s throws(AuthError) in
            guard let account = s.accounts[Self.normalized(email)], account.password == password,
                password.utf8.count <= CredentialRules.maximumPasswordBytes
            else {
                throw .invalidCredentials
            }
            return Self.newSession(for: account.user, in: &s, at: at)
        }
    }

    public func refresh(refreshToken: String) async throws(AuthError) -> AuthSession {
        let at = now()
        return try state.withLock { s throws(AuthError) in
            guard let token = s.refreshTokens[refreshToken], var session = s.sessions[token.session], !session.revoked,
                let account = s.accounts.values.first(where: { $0.user.id == session.userId })
            else { throw .sessionRevoked(code: "refresh_token_not_found") }
            if let used = token.usedAt {
                guard at.timeIntervalSince(used) <= Self.reuseWindow else {
                    session.revoked = true
                    s.sessions[token.session] = session
                    throw .sessionRevoked(code: "refresh_token_already_used")
                }
                // Within the window: the session's current token, not a new branch.
                return Self.issue(for: account.user, session: token.session, refresh: session.current, in: &s, at: at)
            }
            s.refreshTokens[refreshToken]?.usedAt = at
            let next = Self.token()
            session.current = next
            s.sessions[token.session] = session
            s.refreshTokens[next] = RefreshToken(session: token.session)
            return Self.issue(for: account.user, session: token.session, refresh: next, in: &s, at: at)
        }
    }

    public func user(accessToken: String) async throws(AuthError) -> AuthUser {
        let at = now()
        return try state.withLock { s throws(AuthError) in try Self.account(accessToken, in: s, at: at).user }
    }

    /// Signing out twice is fine.
    public func signOut(accessToken: String, scope: SignOutScope) async throws(AuthError) {
        state.withLock { s in
            guard let token = s.accessTokens[accessToken], let session = s.sessions[token.session] else { return }
            for (id, other) in s.sessions where other.userId == session.userId {
                let mine = id == token.session
                switch scope {
                case .local where mine, .global,
                    .others where !mine:
                    s.sessions[id]?.revoked = true
                default: break
                }
            }
        }
    }

    /// The user's
    /// other sessions end.
    public func updatePassword(accessToken: String, newPassword: String, nonce: String?) async throws(AuthError) {
        let at = now()
        try state.withLock { s throws(AuthError) in
            let account = try Self.account(accessToken, in: s, at: at)
            try Self.checkStrength(newPassword)
            guard newPassword != account.password else { throw .samePassword }
            s.accounts[account.user.email]?.password = newPassword
            let mine = s.accessTokens[accessToken]?.session
            for (id, session) in s.sessions where session.userId == account.user.id && id != mine {
                s.sessions[id]?.revoked = true
            }
        }
    }

    /// Accepted (no mail here).
    public func requestReauthentication(accessToken: String) async throws(AuthError) {
        let at = now()
        _ = try state.withLock { s throws(AuthError) in try Self.account(accessToken, in: s, at: at) }
    }

    /// Emails as the server keeps them: trimmed, lower case.
    static func normalized(_ email: String) -> String { email.trimmingCharacters(in: .whitespaces).lowercased() }

    /// At most 72 bytes (bcrypt's limit, which GoTrue enforces), at least the minimum length.
    static func checkStrength(_ password: String) throws(AuthError) {
        guard password.utf8.count <= CredentialRules.maximumPasswordBytes else {
            throw .passwordTooLong(maximumBytes: CredentialRules.maximumPasswordBytes)
        }
        guard password.count >= minimumPasswordLength else { throw .weakPassword(minimumLength: minimumPasswordLength) }
    }

    static func token() -> String { UUID().uuidString.lowercased() + UUID().uuidString.lowercased() }

    static func account(_ accessToken: String, in s: State, at: Date) throws(AuthError) -> Account {
        guard let token = s.accessTokens[accessToken], token.expiresAt > at else {
            throw .sessionRevoked(code: "bad_jwt")
        }
        guard let session = s.sessions[token.session], !session.revoked else {
            throw .sessionRevoked(code: "session_not_found")
        }
        guard let account = s.accounts.values.first(where: { $0.user.id == session.userId }) else {
            throw .sessionRevoked(code: "user_not_found")
        }
        return account
    }

    static func newSession(for user: AuthUser, in s: inout State, at: Date) -> AuthSession {
        let id = UUID()
        let refresh = token()
        s.sessions[id] = Session(userId: user.id, current: refresh)
        s.refreshTokens[refresh] = RefreshToken(session: id)
        return issue(for: user, session: id, refresh: refresh, in: &s, at: at)
    }

    static func issue(for user: AuthUser, session: UUID, refresh: String, in s: inout State, at: Date) -> AuthSession {
        let access = token()
        let expiresAt = at.addingTimeInterval(accessTokenLifetime)
        s.accessTokens[access] = AccessToken(session: session, expiresAt: expiresAt)
        return AuthSession(accessToken: access, refreshToken: refresh, expiresAt: expiresAt, user: user)
    }
}
