import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import TrendyAPI
import TrendyModels

/// A route's answer before it becomes a response: status and JSON bytes, so it can be stored
/// for idempotent replay.
struct APIResult: Sendable {
    var status: Int
    var body: Data

    static func json<T: Encodable>(_ value: T, status: Int = 200) throws -> APIResult {
        APIResult(status: status, body: try TrendyJSON.encoder().encode(value))
    }

    static let noContent = APIResult(status: 204, body: Data())

    func response(headers: HTTPFields = [:]) -> Response {
        if status == 204 { return Response(status: .noContent, headers: headers) }
        return JSONIO.raw(body, status: .init(code: status), headers: headers)
    }
}

/// `Idempotency-Key` handling: scoped by user, method, concrete path and key; the body's hash
/// must match; stored 2xx answers are replayed for 24 hours. Concurrent first requests are kept
/// apart by the claim in the database alone — in one process as across instances.
struct Idempotency: Sendable {
    let store: any IdempotencyStore
    let now: @Sendable () -> Date
    /// How long a request waits for another one holding its key before answering 409.
    var patience: Duration = .seconds(30)
    /// The user's newest feed change, which a successful write's answer names (D60); nil: none.
    var latest: (@Sendable (String) async throws -> LatestCursor)?

    static let header = HTTPField.Name(APIPaths.idempotencyKeyHeader)!
    static let replayHeader = HTTPField.Name(APIPaths.idempotentReplayHeader)!
    static let maxAge: TimeInterval = 86_400

    /// The body compared as a JSON value: the same document with other whitespace or key order is
    /// the same request (clients re-encode a retry); a body that is not JSON is compared as bytes.
    static func canonical(_ body: Data) -> Data {
        guard !body.isEmpty, let canonical = CanonicalJSON.canonical(Array(body)) else { return body }
        return Data(canonical)
    }

    func run(
        _ request: Request, userId: String, body: Data, perform: () async throws -> APIResult
    ) async throws -> Response {
        await marked(try await unmarked(request, userId: userId, body: body, perform: perform), userId: userId)
    }

    static let cursorHeader = HTTPField.Name(APIPaths.writeCursorHeader)!
    static let cursorAtHeader = HTTPField.Name(APIPaths.writeCursorAtHeader)!

    /// A successful write's answer with the user's newest feed change after it (`Trendy-Cursor`,
    /// `Trendy-Cursor-At`, D60). A replay names the newest now: a later change, which a restored
    /// server can only still have if it has this one. A failed read leaves the headers out.
    /// Writes without idempotency keys (the single `DELETE` routes) are marked too: a device
    /// records when the server took its delete, so a server that lost it gets it again (D61).
    func marked(_ response: Response, userId: String) async -> Response {
        guard let latest, (200..<300).contains(response.status.code),
            let newest = try? await latest(userId), newest.cursor > 0, let at = newest.at
        else { return response }
        var response = response
        response.headers[Self.cursorHeader] = String(newest.cursor)
        response.headers[Self.cursorAtHeader] = at
        return response
    }

    private func unmarked(
        _ request: Request, userId: String, body: Data, perform: () async throws -> APIResult
    ) async throws -> Response {
        guard let key = request.headers[Self.header] else { return try await perform().response() }
        guard !key.isEmpty, key.count <= 255 else {
            throw ProblemError.validation([
                FieldIssue(field: "Idempotency-Key", reason: "must be 1 to 255 characters")
            ])
        }
        let method = request.method.rawValue
        let path = request.uri.path
        let hash = SHA256.hash(data: Self.canonical(body)).map { String(format: "%02x", $0) }.joined()
        return try await replayOrPerform(userId, method, path, key, hash, perform)
    }

    /// How long a claim holds a key before another request may take it over (its instance died).
    static let lease: TimeInterval = 60

    private func replayOrPerform(
        _ userId: String, _ method: String, _ path: String, _ key: String, _ hash: String,
        _ perform: () async throws -> APIResult
    ) async throws -> Response {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: patience)
        let token = UUID().uuidString
        while true {
            switch try await store.claimIdempotencyKey(
                userId: userId, method: method, path: path, key: key, bodyHash: hash, token: token, now: now(),
                maxAge: Self.maxAge, lease: Self.lease)
            {
            case .stored(let stored):
                guard stored.bodyHash == hash else {
                    throw ProblemError(
                        422, ProblemCode.idempotencyKeyReused, "Idempotency key reused",
                        detail: "This Idempotency-Key was already used with a different request body.")
                }
                return APIResult(status: stored.status, body: stored.body).response(headers: [
                    Self.replayHeader: "true"
                ])
            case .busy:
                // Another request (here or on another instance) runs the first with this key:
                // its answer is replayed.
                guard clock.now < deadline else {
                    throw ProblemError(
                        409, ProblemCode.conflict, APIProblem.requestInProgressTitle,
                        detail: "A request with this Idempotency-Key is still running; retry it later.")
                }
                try await Task.sleep(for: .milliseconds(20))
            case .claimed:
                let result: APIResult
                do {
                    result = try await perform()
                } catch {
                    try? await store.releaseIdempotencyKey(
                        userId: userId, method: method, path: path, key: key, token: token)
                    throw error
                }
                if (200..<300).contains(result.status) {
                    try await store.storeIdempotentResponse(
                        userId: userId, method: method, path: path, key: key, token: token,
                        response: StoredResponse(bodyHash: hash, status: result.status, body: result.body), now: now())
                } else {
                    try await store.releaseIdempotencyKey(
                        userId: userId, method: method, path: path, key: key, token: token)
                }
                return result.response()
            }
        }
    }
}
