import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import JWTKit
import Logging
import NIOFoundationEssentialsCompat
import TrendyAPI
import TrendyLogging
import TrendyModels

/// The account's own changes: `PUT /user` (email, password, metadata) and the reauthentication
/// code a password change needs.
extension AuthRoutes {
    /// The `data` member of a signup or user update: GoTrue's `user_metadata` changes.
    static func metadata(_ value: Any?) throws -> [String: JSONValue]? {
        guard let value, !(value is NSNull) else { return nil }
        guard JSONSerialization.isValidJSONObject([value]), value is [String: Any],
            let bytes = try? JSONSerialization.data(withJSONObject: value),
            let object = try? JSONDecoder().decode([String: JSONValue].self, from: bytes)
        else { throw GoTrueError(statusCode: 400, code: "bad_json", message: "Could not parse request body as JSON") }
        guard bytes.count <= maximumMetadataBytes else { throw metadataTooLarge }
        return object
    }

    /// A new password's checks, in GoTrue's order and words.
    func checkStrength(_ password: String) throws {
        // bcrypt reads 72 bytes: a longer password would be cut silently (GoTrue refuses it).
        guard password.utf8.count <= Passwords.maximumBytes else {
            throw GoTrueError(
                statusCode: 400, code: "validation_failed",
                message: "Password cannot be longer than \(Passwords.maximumBytes) characters")
        }
        guard password.count >= configuration.minimumPasswordLength else {
            throw GoTrueError(
                statusCode: 422, code: "weak_password",
                message: "Password should be at least \(configuration.minimumPasswordLength) characters.",
                weakPasswordReasons: ["length"])
        }
    }

    /// The hash of a reauthentication code: codes are stored only as this, bound to the email.
    static func codeHash(email: String, code: String) -> String {
        SHA256.hash(data: Data((email + ":" + code).utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// `PUT /user`: GoTrue's user update. `data` is merged into `user_metadata` (a `null` value
    /// removes its key). The password can change (strength and length checked, `same_password`
    /// refused, the other sessions end, as in GoTrue); with reauthentication required, a session
    /// older than 24 hours must also send the `nonce` from `GET /reauthenticate`. Changing the
    /// email or adding a phone number is not supported (422).
    func updateUser(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        try checkRate(context)
        let claims = try await claims(request)
        guard var user = try await store.user(id: claims.sub.value) else { throw GoTrueError.sessionNotFound }
        let buffer = try await JSONIO.body(request, context: context)
        guard let object = try? JSONSerialization.jsonObject(with: Data(buffer: buffer)) as? [String: Any] else {
            throw GoTrueError(statusCode: 400, code: "bad_json", message: "Could not parse request body as JSON")
        }
        func text(_ key: String) throws -> String? {
            guard let value = object[key], !(value is NSNull) else { return nil }
            guard let text = value as? String else {
                throw GoTrueError(statusCode: 400, code: "bad_json", message: "Could not parse request body as JSON")
            }
            return text
        }
        let password = try text("password")
        let nonce = try text("nonce") ?? ""
        let metadata = try Self.metadata(object["data"])
        if let email = try text("email"), !email.isEmpty, email.lowercased() != user.email {
            throw GoTrueError(
                statusCode: 422, code: "validation_failed",
                message: "Changing the email is not supported by this server")
        }
        if let phone = try text("phone"), !phone.isEmpty {
            throw GoTrueError(
                statusCode: 422, code: "validation_failed", message: "Phone numbers are not supported by this server")
        }
        if object["app_metadata"] != nil {
            throw GoTrueError(
                statusCode: 403, code: "not_admin", message: "Updating app_metadata requires admin privileges")
        }
        let at = now()
        if let password {
            try checkStrength(password)
            try await checkReauthentication(user: user, sessionId: claims.sessionId, nonce: nonce, now: at)
            if await passwords.verify(password, hash: user.passwordHash) {
                throw GoTrueError(
                    statusCode: 422, code: "same_password",
                    message: "New password should be different from the old password.")
            }
            guard
                let updated = try await store.updatePassword(
                    userId: user.id, passwordHash: await passwords.hash(password), now: at)
            else { throw GoTrueError.sessionNotFound }
            user = updated
            try await store.revokeSessions(
                userId: user.id, scope: .others, currentSession: claims.sessionId, now: at)
            logger.info("Password changed; other sessions ended", metadata: ["user_id": .string(user.id)])
        }
        if let metadata {
            do {
                guard
                    let updated = try await store.updateUserMetadata(
                        userId: user.id, metadata, maximumBytes: Self.maximumMetadataBytes, now: at)
                else { throw GoTrueError.sessionNotFound }
                user = updated
            } catch StoreError.validation {
                throw Self.metadataTooLarge
            }
        }
        return try JSONIO.response(user.goTrueUser)
    }

    /// GoTrue's rule: with reauthentication required, a password change in a session that
    /// started more than 24 hours ago needs the code last sent by `GET /reauthenticate`; the code
    /// is used up by a match, and after five wrong ones.
    func checkReauthentication(user: StoredUser, sessionId: String, nonce: String, now: Date) async throws {
        guard configuration.passwordChangeRequiresReauthentication else { return }
        if let started = try await store.sessionStart(sessionId), now.timeIntervalSince(started) <= 24 * 3_600 {
            return
        }
        guard !nonce.isEmpty else {
            throw GoTrueError(
                statusCode: 400, code: "reauthentication_needed", message: "Password update requires reauthentication")
        }
        let valid = try await store.consumeReauthentication(
            userId: user.id, codeHash: Self.codeHash(email: user.email, code: nonce), now: now,
            lifetime: configuration.reauthenticationCodeLifetime.asSeconds, maximumFailures: 5)
        guard valid else {
            throw GoTrueError(
                statusCode: 422, code: "reauthentication_not_valid", message: "Nonce has expired or is invalid")
        }
    }

    /// `GET /reauthenticate`: GoTrue's "send me a code": a six-digit code to the user's email,
    /// at most one a minute; it replaces the previous one and is valid for an hour.
    func reauthenticate(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        try checkRate(context)
        let claims = try await claims(request)
        guard let user = try await store.user(id: claims.sub.value) else { throw GoTrueError.sessionNotFound }
        guard let directory = configuration.mailDirectory else {
            throw GoTrueError(
                statusCode: 422, code: "validation_failed",
                message: "This server sends no email; start it with --mail-dir to receive reauthentication codes")
        }
        var generator = SystemRandomNumberGenerator()
        let code = String(format: "%06d", Int.random(in: 0..<1_000_000, using: &generator))
        let at = now()
        let start = try await store.startReauthentication(
            userId: user.id, codeHash: Self.codeHash(email: user.email, code: code), now: at, minimumInterval: 60)
        if case .tooSoon(let wait) = start {
            throw GoTrueError(
                statusCode: 429, code: "over_email_send_rate_limit",
                message: "For security purposes, you can only request this after \(wait) seconds.")
        }
        do {
            try DevMailbox(directory: URL(fileURLWithPath: directory)).send(
                to: user.email, subject: "Confirm reauthentication",
                body: "Enter the code: \(code)\nIt is valid for one hour.", now: at)
        } catch {
            // No mail, no code: asking again at once must work (not wait out the minute).
            try await store.cancelReauthentication(userId: user.id)
            logger.error("Cannot write the reauthentication mail", metadata: ["error": .error(error)])
            throw GoTrueError(
                statusCode: 500, code: "unexpected_failure", message: "Error sending reauthentication email")
        }
        logger.info("Reauthentication code sent", metadata: ["user_id": .string(user.id)])
        return JSONIO.raw(Data("{}".utf8), status: .ok, headers: [:])
    }
}
