import Foundation

/// The signed-in user, as much of it as the app needs at launch.
public struct AuthUser: Codable, Sendable, Hashable {
    /// The user id.
    public var id: String
    /// The email address.
    public var email: String

    /// Creates a user.
    public init(id: String, email: String) {
        self.id = id
        self.email = email
    }
}

/// A session: tokens, expiry and user. Stored on disk between launches.
public struct AuthSession: Codable, Sendable, Hashable {
    /// The JWT sent with API requests.
    public var accessToken: String
    /// The single-use token that gets the next session.
    public var refreshToken: String
    /// When the access token expires.
    public var expiresAt: Date
    /// Who is signed in.
    public var user: AuthUser

    /// Creates a session.
    public init(accessToken: String, refreshToken: String, expiresAt: Date, user: AuthUser) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.user = user
    }

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case refreshToken = "refresh_token"
        case expiresAt = "expires_at"
        case user
    }

    /// Whether the access token expires within `margin` of `now`.
    public func needsRefresh(now: Date, margin: TimeInterval) -> Bool {
        expiresAt.timeIntervalSince(now) <= margin
    }
}

/// Why the app signed out.
public enum SignOutReason: String, Sendable, Hashable, Codable {
    /// The person signed out.
    case userInitiated = "user_initiated"
    /// The server no longer accepts the session (revoked, expired, refresh token reused).
    case sessionRevoked = "session_revoked"
}

/// Something that happened to the session. Every listener receives every event.
public enum AuthEvent: Sendable, Hashable {
    /// The session at subscription time (nil when signed out); always the first event.
    case initialSession(AuthSession?)
    /// A person signed in (or up).
    case signedIn(AuthSession)
    /// The session ended.
    case signedOut(SignOutReason)
    /// The tokens were refreshed.
    case tokenRefreshed(AuthSession)
    /// The user's details changed.
    case userUpdated(AuthUser)

    /// The session after the event, if any.
    public var session: AuthSession? {
        switch self {
        case .initialSession(let s): return s
        case .signedIn(let s), .tokenRefreshed(let s): return s
        case .signedOut, .userUpdated: return nil
        }
    }
}

/// Which sessions a sign-out ends on the server.
public enum SignOutScope: String, Sendable, CaseIterable {
    /// Every session of the user, on every device.
    case global
    /// This session only.
    case local
    /// Every other session.
    case others
}
