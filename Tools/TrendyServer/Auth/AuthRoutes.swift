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

/// The GoTrue-compatible subset under `/auth/v1`.
struct AuthRoutes: Sendable {
    let store: any AccountStore
    let tokens: TokenIssuer
    let passwords: Passwords
    let limiter: RateLimiter
    let faults: FaultInjector
    let configuration: ServerConfiguration
    let now: @Sendable () -> Date
    let logger: Logger

    func register(on group: RouterGroup<ServerRequestContext>) {
        group.post("signup") { request, context in try await signup(request, context) }
        group.post("token") { request, context in try await token(request, context) }
        group.get("user") { request, context in try await user(request, context) }
        group.post("logout") { request, context in try await logout(request, context) }
    }

    static func randomToken() -> String {
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        return bytes.base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func isPlausibleEmail(_ email: String) -> Bool {
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."),
            !parts[1].hasSuffix("."), email.count <= 254
        else { return false }
        return !email.contains(where: { $0.isWhitespace || $0 == "," || $0 == "<" || $0 == ">" })
    }

    func checkRate(_ context: ServerRequestContext) throws {
        let decision = limiter.check("addr:\(context.remoteAddress)")
        guard decision.allowed else {
            throw GoTrueRateLimited(retryAfter: Int(decision.retryAfter.rounded(.up)))
        }
    }

    /// The email and password of a signup or password sign-in, and the whole body.
    func credentials(_ request: Request, _ context: ServerRequestContext) async throws
        -> (GoTrueCredentials, [String: Any])
    {
        let buffer = try await JSONIO.body(request, context: context)
        let data = Data(buffer: buffer)
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw GoTrueError(
                statusCode: 400, code: "bad_json", message: "Could not parse request body as JSON")
        }
        guard let creds = try? TrendyJSON.decoder().decode(GoTrueCredentials.self, from: data) else {
            throw GoTrueError(statusCode: 400, code: "validation_failed", message: "Email and password are required")
        }
        return (creds, object)
    }

    func session(for user: StoredUser, sessionId: String, refreshToken: String) async throws -> Response {
        let lifetime = TimeInterval(
            faults.configuration.accessTokenLifetimeSeconds
                ?? Int(configuration.accessTokenLifetime.components.seconds))
        let issued = try await tokens.sign(
            userId: user.id, email: user.email, sessionId: sessionId, now: now(), lifetime: lifetime)
        let body = GoTrueSession(
            accessToken: issued.token, expiresIn: Int(lifetime), expiresAt: Int(issued.expiresAt.timeIntervalSince1970),
            refreshToken: refreshToken, user: user.goTrueUser)
        return try JSONIO.response(body)
    }

    func signup(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        try checkRate(context)
        let (creds, object) = try await credentials(request, context)
        let metadata = try Self.metadata(object["data"]) ?? [:]
        let email = creds.email.trimmingCharacters(in: .whitespaces).lowercased()
        guard Self.isPlausibleEmail(email) else {
            throw GoTrueError(
                statusCode: 400, code: "validation_failed", message: "Unable to validate email address: invalid format")
        }
        try checkStrength(creds.password)
        if try await store.user(email: email) != nil {
            throw GoTrueError(statusCode: 422, code: "user_already_exists", message: "User already registered")
        }
        let hash = await passwords.hash(creds.password)
        let at = now()
        var user: StoredUser
        do {
            user = try await store.createUser(
                id: UUID().uuidString.lowercased(), email: email, passwordHash: hash, userMetadata: metadata,
                now: at)
        } catch StoreError.emailTaken {
            throw GoTrueError(statusCode: 422, code: "user_already_exists", message: "User already registered")
        }
        try await store.recordSignIn(userId: user.id, now: at)
        user.lastSignInAt = at
        let refresh = Self.randomToken()
        let sessionId = try await store.createSession(userId: user.id, refreshToken: refresh, now: at)
        logger.info("Signed up", metadata: ["user_id": .string(user.id), "email": .string(email)])
        return try await session(for: user, sessionId: sessionId, refreshToken: refresh)
    }

    func token(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        try checkRate(context)
        switch request.uri.queryParameters.get("grant_type") {
        case "password":
            let (creds, _) = try await credentials(request, context)
            let email = creds.email.trimmingCharacters(in: .whitespaces).lowercased()
            let stored = try await store.user(email: email)
            // An unknown email costs one bcrypt of the same cost as a known one (timing says
            // nothing about which emails have accounts); an over-long password never matches.
            let hash = stored?.passwordHash
            let ok = await passwords.verify(creds.password, hash: hash)
            guard var user = stored, ok else { throw GoTrueError.invalidCredentials }
            let at = now()
            try await store.recordSignIn(userId: user.id, now: at)
            user.lastSignInAt = at
            let refresh = Self.randomToken()
            let sessionId = try await store.createSession(userId: user.id, refreshToken: refresh, now: at)
            logger.info("Signed in", metadata: ["user_id": .string(user.id)])
            return try await session(for: user, sessionId: sessionId, refreshToken: refresh)
        case "refresh_token":
            let buffer = try await JSONIO.body(request, context: context)
            guard
                let body = try? TrendyJSON.decoder().decode(GoTrueRefreshRequest.self, from: Data(buffer: buffer)),
                !body.refreshToken.isEmpty
            else {
                throw GoTrueError(statusCode: 400, code: "validation_failed", message: "refresh_token is required")
            }
            let outcome = try await store.rotateRefreshToken(
                body.refreshToken, newToken: Self.randomToken(),
                reuseInterval: TimeInterval(configuration.refreshReuseInterval.components.seconds), now: now())
            switch outcome {
            case .rotated(let sessionId, let userId, let newToken), .reused(let sessionId, let userId, let newToken):
                guard let user = try await store.user(id: userId) else { throw GoTrueError.refreshTokenNotFound }
                return try await session(for: user, sessionId: sessionId, refreshToken: newToken)
            case .alreadyUsed:
                logger.warning("Refresh token reused outside the window; session revoked")
                throw GoTrueError.refreshTokenAlreadyUsed
            case .notFound:
                throw GoTrueError.refreshTokenNotFound
            }
        default:
            throw GoTrueError(
                statusCode: 400, code: "unsupported_grant_type",
                message: "grant_type must be password or refresh_token")
        }
    }

    /// The verified claims of the request's bearer token, with GoTrue's errors.
    func claims(_ request: Request) async throws -> AccessClaims {
        guard let token = BearerToken.from(request) else { throw GoTrueError.noAuthorization }
        let claims: AccessClaims
        do {
            claims = try await tokens.verify(token, now: now())
        } catch {
            throw GoTrueError.badJWT
        }
        guard try await store.isSessionActive(claims.sessionId, userId: claims.sub.value) else {
            throw GoTrueError.sessionNotFound
        }
        return claims
    }

    func user(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        try checkRate(context)
        let claims = try await claims(request)
        guard let user = try await store.user(id: claims.sub.value) else { throw GoTrueError.sessionNotFound }
        return try JSONIO.response(user.goTrueUser)
    }

    /// The largest `user_metadata` kept, as JSON (GoTrue sets no limit; every token refresh and
    /// user answer carries it, so the dev server keeps it small).
    static let maximumMetadataBytes = 16 * 1024
    static let metadataTooLarge = GoTrueError(
        statusCode: 422, code: "validation_failed",
        message: "User metadata cannot be larger than \(maximumMetadataBytes) bytes")

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

    /// `GET /settings`: what this server offers, in GoTrue's shape.
    func settings(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let external: [String: Bool] = [
            "email": true, "phone": false, "anonymous_users": false, "apple": false, "google": false, "github": false,
        ]
        let body: [String: Any] = [
            "external": external, "disable_signup": false, "mailer_autoconfirm": true, "phone_autoconfirm": false,
            "sms_provider": "", "saml_enabled": false,
        ]
        return JSONIO.raw(
            try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]), status: .ok, headers: [:])
    }

    /// `GET /health`: GoTrue's health answer.
    func health(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let body = [
            "version": TrendyServer.version, "name": "GoTrue",
            "description": "GoTrue is a user registration and authentication API (Trendy dev server)",
        ]
        return JSONIO.raw(
            try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]), status: .ok, headers: [:])
    }

    func logout(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        try checkRate(context)
        let scopeText = request.uri.queryParameters.get("scope") ?? "global"
        guard let scope = LogoutScope(rawValue: scopeText) else {
            throw GoTrueError(
                statusCode: 400, code: "validation_failed", message: "scope must be global, local or others")
        }
        guard let token = BearerToken.from(request) else { throw GoTrueError.noAuthorization }
        let verified: AccessClaims
        do {
            verified = try await tokens.verify(token, now: now())
        } catch .expired {
            // An expired token still names its session; logging out with it is allowed.
            guard let unverified = try? await tokens.keys.verify(token, as: AccessClaims.self) else {
                throw GoTrueError.badJWT
            }
            verified = unverified
        } catch {
            throw GoTrueError.badJWT
        }
        try await store.revokeSessions(
            userId: verified.sub.value, scope: scope, currentSession: verified.sessionId, now: now())
        logger.info("Signed out", metadata: ["user_id": .string(verified.sub.value), "scope": .string(scopeText)])
        return JSONIO.noContent()
    }
}

/// GoTrue's 429 (`over_request_rate_limit`) with `Retry-After`.
struct GoTrueRateLimited: Error, HTTPResponseError {
    let retryAfter: Int
    var status: HTTPResponse.Status { .tooManyRequests }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try GoTrueError(
            statusCode: 429, code: "over_request_rate_limit", message: "Request rate limit reached"
        ).response(from: request, context: context)
        response.headers[.retryAfter] = String(max(1, retryAfter))
        return response
    }
}

/// Reads `Authorization: Bearer <token>`.
enum BearerToken {
    static func from(_ request: Request) -> String? {
        guard let header = request.headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}
