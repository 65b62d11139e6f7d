import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Synchronization
import TrendyAPI
import TrendyHTTP
import TrendyLogging
import TrendyModels

/// ``TrendyAPIClient`` over HTTP (AsyncHTTPClient): bearer tokens from an injected provider,
/// per-request timeouts, idempotency keys, and problem documents decoded into
/// ``TrendyAPIError``. The caller owns the `HTTPClient` and shuts it down.
public final class LiveTrendyAPIClient: TrendyAPIClient {
    /// Where the API is and how to call it.
    public struct Configuration: Sendable {
        /// The server root, e.g. `http://127.0.0.1:8080` (paths start at `/api/v1`).
        public var endpoint: ServiceEndpoint
        /// How long requests may take; the HTTP client should be made for the same budget
        /// (``HTTPTransport/makeClient(budget:)``) so failures name the right wait.
        public var budget: NetworkBudget
        /// Sent as `apikey` (Supabase projects require it); nil for the dev server.
        public var apiKey: String?

        /// Time allowed for one whole request (``NetworkBudget/request``).
        public var timeout: Duration { budget.request }

        /// Creates a configuration.
        public init(baseURL: URL, budget: NetworkBudget = .standard, apiKey: String? = nil) {
            self.init(endpoint: .fixed(baseURL), budget: budget, apiKey: apiKey)
        }

        /// Creates a configuration whose server is resolved per request.
        public init(endpoint: ServiceEndpoint, budget: NetworkBudget = .standard, apiKey: String? = nil) {
            self.endpoint = endpoint
            self.budget = budget
            self.apiKey = apiKey
        }
    }

    let configuration: Configuration
    let http: HTTPClient
    let tokens: any AccessTokenProvider
    let logger: Logger
    /// Where large answers are decoded: a change-feed or download page takes milliseconds to
    /// read, and on Swift's cooperative pool (two threads here) that long a job holds up every
    /// other task's resumption, the main actor's included.
    let decoding = DispatchQueue(label: "trendy.api.decode", qos: .utility)
    /// The newest `Trendy-Cursor` a write's answer carried, until taken (D60).
    let writeMark = Mutex<LatestCursor?>(nil)
    /// Answers at least this big are decoded on ``decoding``; smaller ones are cheaper to decode
    /// in place than to hand over.
    static let offPoolBytes = 16 * 1024

    /// Creates a client.
    public init(configuration: Configuration, http: HTTPClient, tokens: any AccessTokenProvider, logger: Logger) {
        self.configuration = configuration
        self.http = http
        self.tokens = tokens
        self.logger = logger
    }

    struct Empty: Codable {}

    /// Sends one request and decodes the answer; every failure becomes a ``TrendyAPIError``.
    func send<T: Decodable & Sendable>(
        _ method: HTTPMethod, _ path: String, query: [(String, String)] = [], body: Data? = nil,
        idempotencyKey: String? = nil, authorized: Bool = true, answersOn extraStatuses: Set<Int> = [],
        deadline: Duration? = nil, as type: T.Type, fastDecode: (@Sendable (Data) -> T?)? = nil, isRetry: Bool = false
    ) async throws(TrendyAPIError) -> (value: T, status: Int) {
        let (request, url, requestId, sentToken) = try await self.request(
            method, path, query: query, body: body, idempotencyKey: idempotencyKey, authorized: authorized)
        let start = ContinuousClock.now
        let status: Int
        let bytes: ByteBuffer
        let headers: HTTPHeaders
        let deadline = deadline ?? configuration.budget.request
        do {
            let response = try await http.execute(request, timeout: .nanoseconds(deadline.nanoseconds))
            status = Int(response.status.code)
            headers = response.headers
            bytes = try await response.body.collect(upTo: 64 * 1024 * 1024)
        } catch {
            let failure = HTTPTransport.failure(error, url: url, deadline: deadline, budget: configuration.budget)
            logger.debug(
                "\(method.rawValue) \(path) failed",
                metadata: ["request_id": .string(requestId), "error": .string(failure.description)])
            throw .transport(failure)
        }
        logger.debug(
            "\(method.rawValue) \(path)",
            metadata: [
                "request_id": .string(requestId), "status": .int(status),
                "elapsed": .duration(ContinuousClock.now - start),
            ])
        let data = Data(bytes.readableBytesView)
        if extraStatuses.contains(status), let answer = try? TrendyJSON.decoder().decode(T.self, from: data) {
            return (answer, status)
        }
        if status == 401, let sentToken, !isRetry {
            // The server refused the token (expired by its clock, or revoked): refresh once, retry once.
            await tokens.accessTokenRejected(sentToken)
            return try await send(
                method, path, query: query, body: body, idempotencyKey: idempotencyKey, authorized: authorized,
                answersOn: extraStatuses, deadline: deadline, as: type, fastDecode: fastDecode, isRetry: true)
        }
        guard (200..<300).contains(status) else {
            let problem = try? TrendyJSON.decoder().decode(APIProblem.self, from: data)
            let retryAfter = headers.first(name: "Retry-After").flatMap(Self.parseRetryAfter)
            throw TrendyAPIError.from(status: status, problem: problem, retryAfter: retryAfter)
        }
        if let mark = Self.mark(in: headers) {
            writeMark.withLock { if ($0?.cursor ?? 0) < mark.cursor { $0 = mark } }
        }
        if T.self == Empty.self, let empty = Empty() as? T { return (empty, status) }
        return (try await decoded(data, as: T.self, fastDecode: fastDecode, from: "\(method.rawValue) \(path)"), status)
    }

    /// The request `send` makes: the URL with its query, the request id, the token (when
    /// `authorized`), the idempotency key, the change's base (PATCH and DELETE) and the body.
    func request(
        _ method: HTTPMethod, _ path: String, query: [(String, String)], body: Data?, idempotencyKey: String?,
        authorized: Bool
    ) async throws(TrendyAPIError) -> (HTTPClientRequest, url: String, requestId: String, sentToken: String?) {
        let base: String
        do {
            base = try await configuration.endpoint.baseString()
        } catch {
            throw .transport(.cannotConnect("the embedded server did not start: \(error)"))
        }
        var url = base + path
        if !query.isEmpty {
            var components = URLComponents()
            components.queryItems = query.map { URLQueryItem(name: $0.0, value: $0.1) }
            url += "?" + (components.percentEncodedQuery ?? "")
        }
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "Accept", value: "application/json")
        let requestId = UUID().uuidString.lowercased()
        request.headers.add(name: APIPaths.requestIdHeader, value: requestId)
        if let apiKey = configuration.apiKey { request.headers.add(name: "apikey", value: apiKey) }
        var sentToken: String?
        if authorized {
            let token: String?
            do {
                token = try await tokens.accessToken()
            } catch let error as TrendyAPIError {
                throw error
            } catch {
                throw .transport(.connectionLost("no access token: \(error)"))
            }
            guard let token else {
                throw .unauthorized(
                    APIProblem(
                        status: 401, code: ProblemCode.unauthorized, title: "Not signed in", detail: "Sign in first."))
            }
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            sentToken = token
        }
        if let idempotencyKey { request.headers.add(name: APIPaths.idempotencyKeyHeader, value: idempotencyKey) }
        if let base = ChangeBase.current {
            // A create names its device too (its pulls leave it out, D57); only an edit has a base.
            if method == .PATCH || method == .DELETE {
                request.headers.add(name: APIPaths.baseVersionHeader, value: String(base.version))
            }
            request.headers.add(name: APIPaths.deviceIdHeader, value: base.deviceId)
        }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        return (request, url, requestId, sentToken)
    }

    /// An answer's body decoded: `fastDecode` first, else the JSON decoder, off the pool for a
    /// large body (`offPoolBytes`).
    func decoded<T: Decodable & Sendable>(
        _ data: Data, as type: T.Type, fastDecode: (@Sendable (Data) -> T?)?, from what: String
    ) async throws(TrendyAPIError) -> T {
        let decode: @Sendable () -> Result<T, TrendyAPIError> = {
            if let fastDecode, let value = fastDecode(data) { return .success(value) }
            do {
                return .success(try TrendyJSON.decoder().decode(T.self, from: data))
            } catch {
                return .failure(.decoding("\(T.self) from \(what): \(error)"))
            }
        }
        guard data.count >= Self.offPoolBytes else { return try decode().get() }
        let decoded = await withCheckedContinuation { continuation in
            decoding.async { continuation.resume(returning: decode()) }
        }
        return try decoded.get()
    }

    func encode<T: Encodable>(_ value: T) throws(TrendyAPIError) -> Data {
        do { return try TrendyJSON.encoder().encode(value) } catch {
            throw .decoding("cannot encode request: \(error)")
        }
    }

    /// The newest feed change a write's answer named since the last call (D60).
    public func takeWriteMark() -> LatestCursor? {
        writeMark.withLock { mark in
            defer { mark = nil }
            return mark
        }
    }

    /// The mark a write's answer names (`Trendy-Cursor`, `Trendy-Cursor-At`, D60); nil unless it
    /// is a positive cursor and a date — a stored mark that is not is sent back as `since_at`, and
    /// every pull after it failed `422` until `--full` (an outsider's hostile server).
    static func mark(in headers: HTTPHeaders) -> LatestCursor? {
        guard let text = headers.first(name: APIPaths.writeCursorHeader), let cursor = Int64(text), cursor > 0,
            let at = headers.first(name: APIPaths.writeCursorAtHeader), ISO8601.parse(at) != nil
        else { return nil }
        return LatestCursor(cursor: cursor, at: at)
    }

    /// `Retry-After` as seconds: delta-seconds or an HTTP date.
    static func parseRetryAfter(_ text: String) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(trimmed), seconds >= 0 { return seconds }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: trimmed) else { return nil }
        return max(0, date.timeIntervalSinceNow)
    }
}
