import Foundation

/// Where the session lives between launches. `load` is synchronous: the launch reads it
/// before anything renders.
public protocol SessionStore: Sendable {
    /// The stored session, or nil (missing, unreadable or corrupt: never a crash).
    func load() -> AuthSession?
    /// Stores the session (atomically).
    func save(_ session: AuthSession) throws
    /// Removes the stored session.
    func clear() throws
}

/// The auth server (GoTrue's `/auth/v1`), as the app needs it.
public protocol AuthGateway: Sendable {
    /// `POST /signup`.
    func signUp(email: String, password: String) async throws(AuthError) -> AuthSession
    /// `POST /token?grant_type=password`.
    func signIn(email: String, password: String) async throws(AuthError) -> AuthSession
    /// `POST /token?grant_type=refresh_token`.
    func refresh(refreshToken: String) async throws(AuthError) -> AuthSession
    /// `GET /user`.
    func user(accessToken: String) async throws(AuthError) -> AuthUser
    /// `POST /logout?scope=`.
    func signOut(accessToken: String, scope: SignOutScope) async throws(AuthError)
    /// `PUT /user` with a new password (the server ends the user's other sessions), and the
    /// reauthentication code when the server asked for one.
    func updatePassword(accessToken: String, newPassword: String, nonce: String?) async throws(AuthError)
    /// `GET /reauthenticate`: the server mails the user a code for a password change.
    func requestReauthentication(accessToken: String) async throws(AuthError)
}

/// The app's authentication: session snapshot, sign in/up/out, refresh and events.
///
/// ```swift
/// let auth: any AuthService = ...             // built by the composition root
/// if let user = auth.currentUserId { ... }    // synchronous, at launch
/// Task { await auth.restore() }               // validate/refresh in the background
/// for await event in auth.events() { ... }    // every listener gets every event
/// ```
///
/// Threading: every member may be called from any task. The snapshot reads take a lock only.
public protocol AuthService: Sendable {
    /// The session right now (possibly with an expired access token).
    var currentSession: AuthSession? { get }
    /// The signed-in user's id right now.
    var currentUserId: String? { get }
    /// Validates the cached session with the server in the background; refreshes when needed.
    func restore() async
    /// Creates an account and signs in.
    func signUp(email: String, password: String) async throws(AuthError) -> AuthSession
    /// Signs in.
    func signIn(email: String, password: String) async throws(AuthError) -> AuthSession
    /// Signs out locally at once, then tells the server; returns the server call's error, if any.
    @discardableResult func signOut(scope: SignOutScope) async -> AuthError?
    /// A valid access token, refreshing ahead of expiry; nil when signed out.
    func validAccessToken() async throws(AuthError) -> String?
    /// An API call was refused with this token: refresh unless that already happened.
    func accessTokenRejected(_ token: String) async
    /// The user as the server sees them (validates the session).
    func fetchUser() async throws(AuthError) -> AuthUser
    /// Changes the signed-in user's password (checked locally first); other sessions end.
    /// `nonce` is the code from ``requestReauthentication()`` when the server answered
    /// ``AuthError/reauthenticationNeeded``.
    func changePassword(to newPassword: String, nonce: String?) async throws(AuthError)
    /// Asks the server to mail the user a code that confirms a password change.
    func requestReauthentication() async throws(AuthError)
    /// A stream of auth events; the first is the current state.
    func events() -> AsyncStream<AuthEvent>
    /// Reads the stored session again: another process of the install signed in or out, or
    /// refreshed the tokens. A change is taken, and announced, as if made here.
    func adoptStoredSession()
}
