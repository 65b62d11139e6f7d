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
