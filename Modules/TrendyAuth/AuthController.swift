import Foundation
import Logging
import Synchronization
import TrendyLogging

/// The ``AuthService``: a locked snapshot for synchronous reads, single-flight refresh, a
/// session generation that stops stale results from being applied, and broadcast events.
///
/// - Launch: the stored session is loaded in `init` (synchronously) and is the first event of
///   every stream; ``restore()`` then validates it with the server.
/// - Refresh: ahead of expiry by `refreshMargin`; concurrent callers share one request; the
///   rotated session is saved before anyone uses it.
/// - Generations: signing in, up or out starts a new generation; a refresh, validation or sign-in
///   that started under an older one is dropped when it finishes.
/// - Only answers meaning "this session is gone" sign out; network failures never do.
public final class AuthController: AuthService, Sendable {
    struct State {
        var session: AuthSession?
        var generation: UInt64 = 0
        var refresh: (generation: UInt64, task: Task<AuthSession, any Error>)?
        var listeners: [UUID: AsyncStream<AuthEvent>.Continuation] = [:]
    }

    let store: any SessionStore
    let gateway: any AuthGateway
    let now: @Sendable () -> Date
    let refreshMargin: TimeInterval
    let logger: Logger
    let state: Mutex<State>
    /// The gateway is not the server the stored session came from (the install was started with
    /// another `--api-url`): a rejection there ends the session for this process only and keeps
    /// the stored one (one mistyped URL used to sign the install out).
    let keepsStoredSessionOnRejection: Bool

    /// Creates the controller and loads the stored session synchronously.
    public init(
        store: any SessionStore, gateway: any AuthGateway, refreshMargin: TimeInterval = 60,
        now: @escaping @Sendable () -> Date = Date.init, logger: Logger, keepsStoredSessionOnRejection: Bool = false
    ) {
        self.store = store
        self.gateway = gateway
        self.now = now
        self.refreshMargin = refreshMargin
        self.logger = logger
        self.keepsStoredSessionOnRejection = keepsStoredSessionOnRejection
        state = Mutex(State(session: store.load()))
    }

    // MARK: Snapshot

    /// The session right now.
    public var currentSession: AuthSession? { state.withLock { $0.session } }

    /// The signed-in user's id right now.
    public var currentUserId: String? { state.withLock { $0.session?.user.id } }

    // MARK: Events

    /// A stream whose first element is the current session; later events follow as they happen.
    public func events() -> AsyncStream<AuthEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: AuthEvent.self, bufferingPolicy: .unbounded)
        let id = UUID()
        state.withLock { s in
            continuation.yield(.initialSession(s.session))
            s.listeners[id] = continuation
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.listeners.removeValue(forKey: id) }
        }
        return stream
    }

    public func adoptStoredSession() {
        // A session another server rejected is kept on disk for its own server: not taken back.
        guard !keepsStoredSessionOnRejection else { return }
        // Read under the lock, where this process writes it: a refresh of ours finishing at the
        // same moment is never mistaken for another process's change (and undone).
        let (event, stored): (AuthEvent?, AuthSession?) = state.withLock { s in
            let stored = store.load()
            guard stored != s.session else { return (nil, stored) }
            let previous = s.session
            s.generation &+= 1
            s.refresh?.task.cancel()
            s.refresh = nil
            s.session = stored
            let event: AuthEvent
            if let stored {
                event = previous?.user.id == stored.user.id ? .tokenRefreshed(stored) : .signedIn(stored)
            } else {
                event = .signedOut(.userInitiated)
            }
            Self.broadcast(event, in: s)
            return (event, stored)
        }
        if event != nil {
            logger.info(
                "The session changed in another process",
                metadata: ["now": .string(stored == nil ? "signed out" : "signed in")])
        }
    }

    /// Delivers an event to every listener (call with the lock held so order is kept).
    static func broadcast(_ event: AuthEvent, in s: State) {
        for continuation in s.listeners.values { continuation.yield(event) }
    }

    // MARK: Sign up, in, out

    /// Creates an account and signs in.
    public func signUp(email: String, password: String) async throws(AuthError) -> AuthSession {
        try CredentialRules.check(email: email)
        try CredentialRules.check(newPassword: password)
        let generation = state.withLock { $0.generation }
        let session = try await gateway.signUp(email: normalized(email), password: password)
        try adopt(session, startedAt: generation, event: .signedIn(session))
        logger.info("Signed up", metadata: ["user_id": .string(session.user.id)])
        return session
    }

    /// Signs in.
    public func signIn(email: String, password: String) async throws(AuthError) -> AuthSession {
        try CredentialRules.check(email: email)
        guard !password.isEmpty else { throw .invalidCredentials }
        let generation = state.withLock { $0.generation }
        let session = try await gateway.signIn(email: normalized(email), password: password)
        try adopt(session, startedAt: generation, event: .signedIn(session))
        logger.info("Signed in", metadata: ["user_id": .string(session.user.id)])
        return session
    }

    func normalized(_ email: String) -> String { email.trimmingCharacters(in: .whitespaces).lowercased() }

    /// Makes `session` current (new generation), saved first; fails if the world moved on.
    /// Store writes happen under the lock so memory and disk never disagree.
    func adopt(_ session: AuthSession, startedAt generation: UInt64, event: AuthEvent) throws(AuthError) {
        let adopted: Bool = state.withLock { s in
            guard s.generation == generation else { return false }
            persist(session)
            s.generation &+= 1
            s.session = session
            s.refresh?.task.cancel()
            s.refresh = nil
            Self.broadcast(event, in: s)
            return true
        }
        guard adopted else {
            logger.notice("Dropped a sign-in that finished after another session change")
            throw .superseded
        }
    }

    func persist(_ session: AuthSession) {
        do { try store.save(session) } catch {
            logger.error("Cannot store the session", metadata: ["error": .error(error)])
        }
    }

    /// Signs out locally first (tokens cleared, event sent), then tells the server.
    @discardableResult
    public func signOut(scope: SignOutScope) async -> AuthError? {
        guard let token = endSession(reason: .userInitiated) else { return nil }
        do {
            try await gateway.signOut(accessToken: token, scope: scope)
            return nil
        } catch {
            logger.warning(
                "Server sign-out failed; signed out locally", metadata: ["error": .string(error.description)])
            return error
        }
    }

    /// Clears the session locally and broadcasts; returns the access token it had.
    @discardableResult
    func endSession(reason: SignOutReason, ifGeneration expected: UInt64? = nil) -> String? {
        let token: String? = state.withLock { s in
            if let expected, s.generation != expected { return nil }
            guard let session = s.session else { return nil }
            s.generation &+= 1
            s.session = nil
            s.refresh?.task.cancel()
            s.refresh = nil
            if reason == .sessionRevoked, keepsStoredSessionOnRejection {
                logger.warning("Another server rejected the session; the install's stored session is kept")
            } else {
                do { try store.clear() } catch {
                    logger.error("Cannot clear the stored session", metadata: ["error": .error(error)])
                }
            }
            Self.broadcast(.signedOut(reason), in: s)
            return session.accessToken
        }
        if token != nil { logger.info("Signed out", metadata: ["reason": .string(reason.rawValue)]) }
        return token
    }

    // MARK: Tokens

    /// A valid access token: the current one, or a refreshed one when it expires within the margin.
    public func validAccessToken() async throws(AuthError) -> String? {
        guard let session = currentSession else { return nil }
        if !session.needsRefresh(now: now(), margin: refreshMargin) { return session.accessToken }
        return try await refreshed(replacing: session.accessToken).accessToken
    }

    enum RefreshLookup {
        case notSignedIn
        case alreadyReplaced(AuthSession)
        case wait(Task<AuthSession, any Error>)
    }

    /// Refreshes (once, however many callers) unless `token` was already replaced. The one
    /// refresh task does everything: the request, the stale check, saving, applying, the event.
    func refreshed(replacing token: String) async throws(AuthError) -> AuthSession {
        let lookup: RefreshLookup = state.withLock { s in
            guard let session = s.session else { return .notSignedIn }
            if session.accessToken != token { return .alreadyReplaced(session) }
            if let running = s.refresh, running.generation == s.generation { return .wait(running.task) }
            let generation = s.generation
            let refreshToken = session.refreshToken
            let task = Task<AuthSession, any Error> { [self] in
                try await performRefresh(refreshToken, generation: generation)
            }
            s.refresh = (generation, task)
            return .wait(task)
        }
        switch lookup {
        case .notSignedIn: throw .notSignedIn
        case .alreadyReplaced(let session): return session
        case .wait(let task):
            do {
                return try await task.value
            } catch let error as AuthError {
                throw error
            } catch {
                throw .network(String(describing: error))
            }
        }
    }

    func performRefresh(_ refreshToken: String, generation: UInt64) async throws(AuthError) -> AuthSession {
        let result: AuthSession
        do {
            result = try await gateway.refresh(refreshToken: refreshToken)
        } catch {
            state.withLock { s in if s.refresh?.generation == generation { s.refresh = nil } }
            if case .sessionRevoked = error { endSession(reason: .sessionRevoked, ifGeneration: generation) }
            throw error
        }
        let applied: Bool = state.withLock { s in
            guard s.generation == generation, s.session != nil else { return false }
            persist(result)  // the rotated refresh token is on disk before anyone uses it
            s.session = result
            s.refresh = nil
            Self.broadcast(.tokenRefreshed(result), in: s)
            return true
        }
        guard applied else {
            logger.notice("Dropped a refresh that finished after the session changed")
            throw .notSignedIn
        }
        logger.debug(
            "Token refreshed", metadata: ["expires_in_s": .int(Int(result.expiresAt.timeIntervalSince(now())))])
        return result
    }

    /// The API answered 401 for `token`: refresh unless that already happened.
    public func accessTokenRejected(_ token: String) async {
        _ = try? await refreshed(replacing: token)
    }

    // MARK: Restore and validation

    /// Validates the launch session: refreshes it when due, else asks the server who we are.
    /// Only a server answer that the session is gone signs out; offline keeps the session.
    public func restore() async {
        guard let session = currentSession else { return }
        let generation = state.withLock { $0.generation }
        do {
            if session.needsRefresh(now: now(), margin: refreshMargin) {
                _ = try await refreshed(replacing: session.accessToken)
            } else {
                let user = try await gateway.user(accessToken: session.accessToken)
                state.withLock { s in
                    guard s.generation == generation, var current = s.session, current.user != user else { return }
                    current.user = user
                    s.session = current
                    Self.broadcast(.userUpdated(user), in: s)
                }
            }
        } catch {
            switch error {
            case .sessionRevoked:
                endSession(reason: .sessionRevoked, ifGeneration: generation)
            default:
                logger.notice("Session not validated; keeping it", metadata: ["error": .string(error.description)])
            }
        }
    }

    public func changePassword(to newPassword: String, nonce: String?) async throws(AuthError) {
        try CredentialRules.check(newPassword: newPassword)
        try await withSessionCall { token throws(AuthError) in
            try await gateway.updatePassword(accessToken: token, newPassword: newPassword, nonce: nonce)
        }
        logger.notice("Password changed")
    }

    public func requestReauthentication() async throws(AuthError) {
        try await withSessionCall { token throws(AuthError) in
            try await gateway.requestReauthentication(accessToken: token)
        }
        logger.notice("Reauthentication code requested")
    }

    /// Runs a server call with a valid access token; a session the server no longer accepts
    /// ends here (unless a newer one replaced it meanwhile).
    func withSessionCall<T>(_ call: (String) async throws(AuthError) -> T) async throws(AuthError) -> T {
        guard let token = try await validAccessToken() else { throw .notSignedIn }
        let generation = state.withLock { $0.generation }
        do {
            return try await call(token)
        } catch {
            if case .sessionRevoked = error { endSession(reason: .sessionRevoked, ifGeneration: generation) }
            throw error
        }
    }

    /// The user as the server sees them.
    public func fetchUser() async throws(AuthError) -> AuthUser {
        try await withSessionCall { token throws(AuthError) in try await gateway.user(accessToken: token) }
    }
}
