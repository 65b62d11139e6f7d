import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import TrendyAPI
import TrendyAuth
import TrendyHTTP
import TrendyLogging
import TrendyModels

/// ``AuthGateway`` over GoTrue's HTTP API (`/auth/v1`): works against the dev server and a real
/// Supabase project (set `apiKey` to the project's anon key; it is sent as `apikey`). Reads
/// every GoTrue error shape.
public final class GoTrueAuthGateway: AuthGateway {
    /// Where the auth API is.
    public struct Configuration: Sendable {
        /// The auth root, e.g. `http://127.0.0.1:8080/auth/v1`.
        public var endpoint: ServiceEndpoint
        /// The anon key for Supabase projects.
        public var apiKey: String?
        /// How long requests may take (the HTTP client should be made for the same budget).
        public var budget: NetworkBudget

        /// Creates a configuration.
        public init(baseURL: URL, apiKey: String? = nil, budget: NetworkBudget = .standard) {
            self.init(endpoint: .fixed(baseURL), apiKey: apiKey, budget: budget)
        }

        /// Creates a configuration whose server is resolved per request.
        public init(endpoint: ServiceEndpoint, apiKey: String? = nil, budget: NetworkBudget = .standard) {
            self.endpoint = endpoint
            self.apiKey = apiKey
            self.budget = budget
        }
    }

    let configuration: Configuration
    let http: HTTPClient
    let logger: Logger

    /// Creates a gateway; the caller owns `http`.
    public init(configuration: Configuration, http: HTTPClient, logger: Logger) {
        self.configuration = configuration
        self.http = http
        self.logger = logger
    }

    struct Reply {
        var status: Int
        var body: Data
    }

    /// Sends one request. `quick` requests (verifying a session, signing out on the server) are
    /// checks a screen or command waits on: they get the short ``NetworkBudget/respond`` deadline
    /// instead of ``NetworkBudget/request``, so a hung server costs seconds, not the idle timeout.
    func send(
        _ method: HTTPMethod, _ path: String, body: Data?, token: String? = nil, quick: Bool = false
    ) async throws(AuthError) -> Reply {
        let base: String
        do {
            base = try await configuration.endpoint.baseString()
        } catch {
            throw .network("the embedded server did not start: \(error)")
        }
        let url = base + path
        let deadline = quick ? configuration.budget.respond : configuration.budget.request
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "X-Supabase-Api-Version", value: "2024-01-01")
        // One id per request, in our log and the server's: a failure is found on both sides.
        let requestId = UUID().uuidString.lowercased()
        request.headers.add(name: APIPaths.requestIdHeader, value: requestId)
        if let apiKey = configuration.apiKey { request.headers.add(name: "apikey", value: apiKey) }
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        do {
            let response = try await http.execute(request, timeout: .nanoseconds(deadline.nanoseconds))
            let bytes = try await response.body.collect(upTo: 1 << 20)
            let reply = Reply(status: Int(response.status.code), body: Data(bytes.readableBytesView))
            logger.debug(
                "\(method.rawValue) \(path)",
                metadata: ["request_id": .string(requestId), "status": .int(reply.status)])
            if reply.status == 429 {
                let after = response.headers.first(name: "Retry-After").flatMap(Double.init)
                throw AuthError.rateLimited(retryAfter: after)
            }
            return reply
        } catch let error as AuthError {
            throw error
        } catch {
            logger.debug(
                "\(method.rawValue) \(path) failed",
                metadata: ["request_id": .string(requestId), "error": .string(String(describing: error))])
            let failure = HTTPTransport.failure(error, url: url, deadline: deadline, budget: configuration.budget)
            throw .network(failure.description)
        }
    }

    /// Maps a non-2xx answer to an ``AuthError``.
    static func error(from reply: Reply) -> AuthError {
        let body = try? JSONDecoder().decode(GoTrueErrorBody.self, from: reply.body)
        let code = body?.errorCode
        switch code {
        case "invalid_credentials", "invalid_grant": return .invalidCredentials
        case "user_already_exists", "email_exists": return .userAlreadyExists
        case "weak_password": return .weakPassword(minimumLength: CredentialRules.minimumPasswordLength)
        case "same_password": return .samePassword
        case "reauthentication_needed": return .reauthenticationNeeded
        case "reauthentication_not_valid": return .reauthenticationInvalid
        case "email_address_invalid": return .invalidEmail
        case "over_request_rate_limit", "over_email_send_rate_limit": return .rateLimited(retryAfter: nil)
        case let c? where AuthError.sessionGoneCodes.contains(c): return .sessionRevoked(code: c)
        case "validation_failed" where body?.message.lowercased().contains("email") == true: return .invalidEmail
        case "validation_failed" where body?.message.lowercased().contains("password cannot be longer") == true:
            return .passwordTooLong(maximumBytes: CredentialRules.maximumPasswordBytes)
        default:
            if reply.status == 401 || reply.status == 403 {
                return .sessionRevoked(code: code ?? "http_\(reply.status)")
            }
            return .server(status: reply.status, code: code, message: body?.message ?? "HTTP \(reply.status)")
        }
    }

    func session(from reply: Reply) throws(AuthError) -> AuthSession {
        guard (200..<300).contains(reply.status) else { throw Self.error(from: reply) }
        do {
            let s = try TrendyJSON.decoder().decode(GoTrueSession.self, from: reply.body)
            return AuthSession(
                accessToken: s.accessToken, refreshToken: s.refreshToken,
                expiresAt: Date(timeIntervalSince1970: TimeInterval(s.expiresAt)),
                user: AuthUser(id: s.user.id, email: s.user.email))
        } catch {
            throw .server(status: reply.status, code: "unreadable", message: "the session could not be read")
        }
    }

    func credentials(_ email: String, _ password: String) throws(AuthError) -> Data {
        do {
            return try JSONEncoder().encode(GoTrueCredentials(email: email, password: password))
        } catch {
            throw .server(status: 0, code: "encoding", message: "the credentials could not be encoded")
        }
    }

    public func signUp(email: String, password: String) async throws(AuthError) -> AuthSession {
        try session(from: await send(.POST, "/signup", body: credentials(email, password)))
    }

    public func signIn(email: String, password: String) async throws(AuthError) -> AuthSession {
        let reply = try await send(.POST, "/token?grant_type=password", body: credentials(email, password))
        if reply.status == 400 {
            let body = try? JSONDecoder().decode(GoTrueErrorBody.self, from: reply.body)
            if body?.errorCode == "invalid_credentials" || body?.errorCode == "invalid_grant" {
                throw .invalidCredentials
            }
        }
        return try session(from: reply)
    }

    public func refresh(refreshToken: String) async throws(AuthError) -> AuthSession {
        let body: Data
        do { body = try JSONEncoder().encode(GoTrueRefreshRequest(refreshToken: refreshToken)) } catch {
            throw .server(status: 0, code: nil, message: "cannot encode")
        }
        let reply = try await send(.POST, "/token?grant_type=refresh_token", body: body)
        if reply.status == 400 || reply.status == 401 || reply.status == 403 {
            let parsed = try? JSONDecoder().decode(GoTrueErrorBody.self, from: reply.body)
            // Any refusal of a refresh token means the session is over.
            throw .sessionRevoked(code: parsed?.errorCode ?? "refresh_refused")
        }
        return try session(from: reply)
    }

    public func user(accessToken: String) async throws(AuthError) -> AuthUser {
        let reply = try await send(.GET, "/user", body: nil, token: accessToken, quick: true)
        guard (200..<300).contains(reply.status) else { throw Self.error(from: reply) }
        guard let user = try? TrendyJSON.decoder().decode(GoTrueUser.self, from: reply.body) else {
            throw .server(status: reply.status, code: "unreadable", message: "the user could not be read")
        }
        return AuthUser(id: user.id, email: user.email)
    }

    public func updatePassword(accessToken: String, newPassword: String, nonce: String?) async throws(AuthError) {
        var fields = ["password": newPassword]
        if let nonce { fields["nonce"] = nonce }
        let body: Data
        do { body = try JSONEncoder().encode(fields) } catch {
            throw .server(status: 0, code: "encoding", message: "the password could not be encoded")
        }
        let reply = try await send(.PUT, "/user", body: body, token: accessToken)
        guard (200..<300).contains(reply.status) else { throw Self.error(from: reply) }
    }

    public func requestReauthentication(accessToken: String) async throws(AuthError) {
        let reply = try await send(.GET, "/reauthenticate", body: nil, token: accessToken)
        guard (200..<300).contains(reply.status) else { throw Self.error(from: reply) }
    }

    public func signOut(accessToken: String, scope: SignOutScope) async throws(AuthError) {
        let reply = try await send(
            .POST, "/logout?scope=\(scope.rawValue)", body: nil, token: accessToken, quick: true)
        // A session the server already forgot is signed out all the same.
        guard (200..<300).contains(reply.status) || reply.status == 401 || reply.status == 403 || reply.status == 404
        else { throw Self.error(from: reply) }
    }
}
