import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import TrendyAPI
import TrendyAPILive
import TrendyLogging
import TrendyModels
import TrendyServer

/// The real dev server on an ephemeral loopback port with one HTTP client, for tests that need
/// the real thing: started, handed to the test, and shut down (client first) whether the test
/// passed or threw. One copy for every test target that runs against the server.
///
/// ```swift
/// try await RunningTestServer.with(.testing()) { server in
///     let (api, session) = try await server.signedUpClient()
///     ...
/// }
/// ```
public struct RunningTestServer: Sendable {
    /// The server (its faults, its configuration).
    public let server: TrendyServer
    /// Where it listens.
    public let running: RunningServer
    /// The client every helper uses.
    public let http: HTTPClient

    /// The server's base URL.
    public var baseURL: URL { running.baseURL }

    /// Starts a server with `configuration` (its clock is `now`), runs `body`, and stops both.
    public static func with<T>(
        _ configuration: ServerConfiguration, logs: LogSystem = .disabled(),
        now: @escaping @Sendable () -> Date = Date.init, _ body: (RunningTestServer) async throws -> T
    ) async throws -> T {
        let server = try await TrendyServer(configuration: configuration.onTestStore(), logs: logs, now: now)
        let running = try await server.start()
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let result: T
        do {
            result = try await body(RunningTestServer(server: server, running: running, http: http))
        } catch {
            try? await http.shutdown()
            await running.stop()
            throw error
        }
        try await http.shutdown()
        await running.stop()
        return result
    }

    /// How long a test's request to a test server may take unless the test says otherwise: timing
    /// is not what these tests check, and the whole suite beside two CPU-bound processes once took
    /// more than 10 s to answer a sign-up on loopback.
    public static let patience: Duration = .seconds(60)

    /// One raw HTTP exchange with this server: for auth routes, headers and malformed bodies.
    public func raw(
        _ method: HTTPMethod, _ path: String, body: String? = nil, bodyData: Data? = nil,
        headers: [(String, String)] = []
    ) async throws -> RawResponse {
        var request = HTTPClientRequest(url: baseURL.absoluteString + path)
        request.method = method
        for (k, v) in headers { request.headers.add(name: k, value: v) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        if let bodyData { request.body = .bytes(ByteBuffer(bytes: bodyData)) }
        let response = try await http.execute(request, timeout: .seconds(Self.patience.components.seconds))
        let bytes = try await response.body.collect(upTo: 64 * 1024 * 1024)
        return RawResponse(
            status: Int(response.status.code), headers: response.headers, body: Data(bytes.readableBytesView))
    }

    /// Signs up a new account (a random email unless given) and returns its session.
    public func signUp(
        _ email: String = "user-\(UUID().uuidString.prefix(8).lowercased())@example.com",
        password: String = "password-1"
    ) async throws -> GoTrueSession {
        var request = HTTPClientRequest(url: baseURL.absoluteString + "/auth/v1/signup")
        request.method = .POST
        request.body = .bytes(ByteBuffer(string: #"{"email":"\#(email)","password":"\#(password)"}"#))
        let response = try await http.execute(request, timeout: .seconds(Self.patience.components.seconds))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard response.status == .ok else {
            throw SignUpFailed(status: Int(response.status.code), body: String(buffer: body))
        }
        return try TrendyJSON.decoder().decode(GoTrueSession.self, from: Data(body.readableBytesView))
    }

    /// A live API client that sends `token` (none: unauthenticated), with a request budget.
    public func client(_ token: String?, request: Duration = RunningTestServer.patience) -> LiveTrendyAPIClient {
        LiveTrendyAPIClient(
            configuration: .init(baseURL: baseURL, budget: .forTests(request: request)), http: http,
            tokens: StaticTokenProvider(token), logger: LogSystem.disabled().logger(.api))
    }

    /// A new account and a client signed in to it.
    public func signedUpClient(request: Duration = RunningTestServer.patience) async throws -> (
        client: LiveTrendyAPIClient, session: GoTrueSession
    ) {
        let session = try await signUp()
        return (client(session.accessToken, request: request), session)
    }
}

/// A raw HTTP answer.
public struct RawResponse: Sendable {
    /// The status code.
    public var status: Int
    /// The headers.
    public var headers: HTTPHeaders
    /// The body.
    public var body: Data
    /// The body as a JSON object (empty when it is not one).
    public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body) as? [String: Any]) ?? [:] }
}

/// A sign-up the test server refused.
public struct SignUpFailed: Error, CustomStringConvertible {
    /// The HTTP status.
    public let status: Int
    /// The answer's body.
    public let body: String
    /// A readable summary.
    public var description: String { "sign-up failed with HTTP \(status): \(body)" }
}

extension ServerConfiguration {
    /// ``ServerConfiguration/testing()`` (in memory, an ephemeral port, cheap hashing, rate limits
    /// out of the way) with `change` applied.
    public static func testing(_ change: (inout ServerConfiguration) -> Void) -> ServerConfiguration {
        var c = ServerConfiguration.testing()
        change(&c)
        return c
    }
}

extension NetworkBudget {
    /// A budget for clients of a test server on loopback: timing is not what their tests check,
    /// and on a busy machine (the suite's own parallel tests, a CI neighbour) the server can take
    /// longer than the 2 s a person's device allows to connect or answer its health check — the
    /// client would then judge it offline. 15 s to respond; `request` for a whole request
    /// (``RunningTestServer/patience`` unless a test names less).
    public static func forTests(request: Duration = RunningTestServer.patience) -> NetworkBudget {
        NetworkBudget(respond: .seconds(15), idle: max(request, .seconds(15)), request: max(request, .seconds(15)))
    }
}
