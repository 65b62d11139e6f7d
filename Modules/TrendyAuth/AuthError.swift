import Foundation

/// Why an auth operation failed, in terms a person can act on.
public enum AuthError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The email address is not valid (checked before any request).
    case invalidEmail
    /// The password is too short (checked before any request, and by the server).
    case weakPassword(minimumLength: Int)
    /// The password is longer than bcrypt reads (checked before any request, and by the server).
    case passwordTooLong(maximumBytes: Int)
    /// Wrong email or password.
    case invalidCredentials
    /// An account with this email exists.
    case userAlreadyExists
    /// A new password must differ from the current one.
    case samePassword
    /// The server wants a code mailed to the user before this password change (old session).
    case reauthenticationNeeded
    /// The reauthentication code is wrong, used up or expired.
    case reauthenticationInvalid
    /// No session: sign in first.
    case notSignedIn
    /// Another sign-in or sign-out on this install finished first; this one's result was dropped
    /// (a local race, not a server answer).
    case superseded
    /// The server no longer accepts the session; sign in again.
    case sessionRevoked(code: String)
    /// The server could not be reached; nothing changed locally.
    case network(String)
    /// Too many attempts; try again later.
    case rateLimited(retryAfter: Double?)
    /// Another answer from the server.
    case server(status: Int, code: String?, message: String)

    /// GoTrue codes meaning "this session is gone": they sign the app out.
    public static let sessionGoneCodes: Set<String> = [
        "refresh_token_not_found", "refresh_token_already_used", "session_not_found", "session_expired",
        "bad_jwt", "user_not_found",
    ]

    /// The reason alone, for a sentence that says itself what was (not) changed: a network
    /// failure's detail without "Nothing was changed.", else ``description``.
    public var reason: String {
        if case .network(let detail) = self { return detail.prefix(1).uppercased() + detail.dropFirst() }
        return description
    }

    /// A readable explanation.
    public var description: String {
        switch self {
        case .invalidEmail: return "That is not a valid email address."
        case .weakPassword(let n): return "The password must be at least \(n) characters."
        case .passwordTooLong(let n):
            return "The password must be at most \(n) bytes (characters beyond ASCII count more)."
        case .invalidCredentials: return "Wrong email or password."
        case .userAlreadyExists: return "An account with this email already exists; sign in instead."
        case .samePassword: return "The new password must differ from the current one."
        case .reauthenticationNeeded:
            return "The server wants to confirm it is you: it mails a code for this password change."
        case .reauthenticationInvalid: return "That code is wrong, used up or expired. Nothing was changed."
        case .notSignedIn: return "You are not signed in. Run `trendy login` first."
        case .superseded: return "Another sign-in or sign-out on this device finished first; this one was dropped."
        case .sessionRevoked: return "Your session has ended. Sign in again."
        case .network(let detail): return detail.prefix(1).uppercased() + detail.dropFirst() + ". Nothing was changed."
        case .rateLimited(let after):
            return "Too many attempts."
                + (after.map { " Try again in \(Int($0.rounded(.up))) s." } ?? " Try again later.")
        case .server(let status, let code, let message):
            return "The server refused (\(status)\(code.map { " \($0)" } ?? "")): \(message)"
        }
    }
}

/// Input checks done before any request.
public enum CredentialRules {
    /// The shortest password the app accepts (the server may demand more).
    public static let minimumPasswordLength = 8

    /// Throws when the email is not plausibly an address.
    public static func check(email: String) throws(AuthError) {
        let trimmed = email.trimmingCharacters(in: .whitespaces)
        let parts = trimmed.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."),
            !parts[1].hasSuffix("."), trimmed.count <= 254, !trimmed.contains(where: \.isWhitespace)
        else { throw .invalidEmail }
    }

    /// The longest password in UTF-8 bytes: bcrypt reads no more (GoTrue refuses longer ones).
    public static let maximumPasswordBytes = 72

    /// Throws when the password is too short or too long for signing up or changing to.
    public static func check(newPassword: String) throws(AuthError) {
        guard newPassword.count >= minimumPasswordLength else {
            throw .weakPassword(minimumLength: minimumPasswordLength)
        }
        guard newPassword.utf8.count <= maximumPasswordBytes else {
            throw .passwordTooLong(maximumBytes: maximumPasswordBytes)
        }
    }
}
