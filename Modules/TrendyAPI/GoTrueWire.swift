import Foundation

/// A GoTrue user object (the subset Trendy reads and the dev server writes).
public struct GoTrueUser: Codable, Sendable, Hashable {
    /// The user id (a UUID).
    public var id: String
    /// Audience, `authenticated`.
    public var aud: String
    /// Role, `authenticated`.
    public var role: String
    /// The email address.
    public var email: String
    /// When the email was confirmed (the dev server auto-confirms).
    public var emailConfirmedAt: Date?
    /// When the user last signed in.
    public var lastSignInAt: Date?
    /// When the user was created.
    public var createdAt: Date
    /// When the user last changed.
    public var updatedAt: Date
    /// Provider facts.
    public var appMetadata: [String: JSONValue]
    /// Free-form data the user set.
    public var userMetadata: [String: JSONValue]
    /// Whether the user is anonymous.
    public var isAnonymous: Bool

    /// Creates a user.
    public init(
        id: String, email: String, emailConfirmedAt: Date?, lastSignInAt: Date?, createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.aud = "authenticated"
        self.role = "authenticated"
        self.email = email
        self.emailConfirmedAt = emailConfirmedAt
        self.lastSignInAt = lastSignInAt
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.appMetadata = ["provider": .string("email"), "providers": .array([.string("email")])]
        self.userMetadata = [:]
        self.isAnonymous = false
    }

    enum CodingKeys: String, CodingKey {
        case id, aud, role, email
        case emailConfirmedAt = "email_confirmed_at"
        case lastSignInAt = "last_sign_in_at"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
        case appMetadata = "app_metadata"
        case userMetadata = "user_metadata"
        case isAnonymous = "is_anonymous"
    }

    /// Decodes tolerantly: fields GoTrue may omit get defaults.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        aud = try c.decodeIfPresent(String.self, forKey: .aud) ?? "authenticated"
        role = try c.decodeIfPresent(String.self, forKey: .role) ?? "authenticated"
        email = try c.decodeIfPresent(String.self, forKey: .email) ?? ""
        emailConfirmedAt = try c.decodeIfPresent(Date.self, forKey: .emailConfirmedAt)
        lastSignInAt = try c.decodeIfPresent(Date.self, forKey: .lastSignInAt)
        createdAt = try c.decode(Date.self, forKey: .createdAt)
        updatedAt = try c.decodeIfPresent(Date.self, forKey: .updatedAt) ?? createdAt
        appMetadata = try c.decodeIfPresent([String: JSONValue].self, forKey: .appMetadata) ?? [:]
        userMetadata = try c.decodeIfPresent([String: JSONValue].self, forKey: .userMetadata) ?? [:]
        isAnonymous = try c.decodeIfPresent(Bool.self, forKey: .isAnonymous) ?? false
    }
}

/// A GoTrue session: what signup and both token grants return.
public struct GoTrueSession: Codable, Sendable, Hashable {
    /// The signed JWT for API calls.
    public var accessToken: String
    /// Always `bearer`.
    public var tokenType: String
    /// Seconds the access token lives.
    public var expiresIn: Int
    /// Unix time the access token expires.
    public var expiresAt: Int
    /// The single-use refresh token.
    public var refreshToken: String
    /// The signed-in user.
    public var user: GoTrueUser

    /// Creates a session.
    public init(accessToken: String, expiresIn: Int, expiresAt: Int, refreshToken: String, user: GoTrueUser) {
        self.accessToken = accessToken
        self.tokenType = "bearer"
        self.expiresIn = expiresIn
        self.expiresAt = expiresAt
        self.refreshToken = refreshToken
        self.user = user
    }

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case expiresAt = "expires_at"
        case refreshToken = "refresh_token"
        case user
    }
}

/// `POST /signup` and `POST /token?grant_type=password` bodies.
public struct GoTrueCredentials: Codable, Sendable, Hashable {
    /// The email address.
    public var email: String
    /// The password.
    public var password: String
    /// Creates a body.
    public init(email: String, password: String) {
        self.email = email
        self.password = password
    }
}

/// `POST /token?grant_type=refresh_token` body.
public struct GoTrueRefreshRequest: Codable, Sendable, Hashable {
    /// The refresh token to exchange.
    public var refreshToken: String
    /// Creates a body.
    public init(refreshToken: String) { self.refreshToken = refreshToken }
    enum CodingKeys: String, CodingKey { case refreshToken = "refresh_token" }
}

/// A GoTrue error in any of its shapes: legacy `{code: 400, error_code, msg}`, 2024-01-01
/// `{code: "…", message}`, or OAuth `{error, error_description}`.
public struct GoTrueErrorBody: Codable, Sendable, Hashable {
    /// The machine-readable code (`invalid_credentials`, `refresh_token_already_used`, ...).
    public var errorCode: String?
    /// The message for people.
    public var message: String
    /// The HTTP status the body claims (legacy shape only).
    public var httpCode: Int?

    /// Creates a body.
    public init(errorCode: String?, message: String, httpCode: Int? = nil) {
        self.errorCode = errorCode
        self.message = message
        self.httpCode = httpCode
    }

    enum Keys: String, CodingKey {
        case code, msg, message, error
        case errorCode = "error_code"
        case errorDescription = "error_description"
    }

    /// Reads any of the three shapes.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        if let numeric = try? c.decode(Int.self, forKey: .code) {
            httpCode = numeric
            errorCode = try c.decodeIfPresent(String.self, forKey: .errorCode)
        } else {
            httpCode = nil
            errorCode =
                try (try? c.decode(String.self, forKey: .code)) ?? c.decodeIfPresent(String.self, forKey: .errorCode)
                ?? c.decodeIfPresent(String.self, forKey: .error)
        }
        message =
            try c.decodeIfPresent(String.self, forKey: .msg) ?? c.decodeIfPresent(String.self, forKey: .message)
            ?? c.decodeIfPresent(String.self, forKey: .errorDescription) ?? errorCode ?? "unknown error"
    }

    /// Writes the legacy shape (`code`, `error_code`, `msg`).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(httpCode ?? 400, forKey: .code)
        try c.encodeIfPresent(errorCode, forKey: .errorCode)
        try c.encode(message, forKey: .msg)
    }
}

/// Any JSON value (for GoTrue's free-form metadata).
public enum JSONValue: Codable, Sendable, Hashable {
    /// A string.
    case string(String)
    /// A number.
    case number(Double)
    /// A boolean.
    case bool(Bool)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])
    /// `null`.
    case null

    /// Decodes any JSON value.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let n = try? c.decode(Double.self) {
            self = .number(n)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let a = try? c.decode([JSONValue].self) {
            self = .array(a)
        } else {
            self = .object(try c.decode([String: JSONValue].self))
        }
    }

    /// Encodes the value.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .string(let s): try c.encode(s)
        case .number(let n): try c.encode(n)
        case .bool(let b): try c.encode(b)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        case .null: try c.encodeNil()
        }
    }
}
