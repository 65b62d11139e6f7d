import TrendyModels

/// Why an API call failed, decoded from the server's problem document or the transport.
public enum TrendyAPIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 429: wait `retryAfter` seconds (from `Retry-After`) before trying again.
    case rateLimited(retryAfter: Double?, problem: APIProblem)
    /// 400/422 with field errors.
    case validation(issues: [FieldIssue], problem: APIProblem)
    /// 400 malformed request.
    case badRequest(APIProblem)
    /// 401: no valid token; sign in again.
    case unauthorized(APIProblem)
    /// 404: not found (or not yours).
    case notFound(APIProblem)
    /// 409, or 422 for a reused idempotency key.
    case conflict(APIProblem)
    /// 413.
    case payloadTooLarge(APIProblem)
    /// 5xx or another unexpected status.
    case server(status: Int, problem: APIProblem?)
    /// The request never got an answer: offline, refused, timed out, connection dropped.
    case transport(TransportFailure)
    /// The answer could not be read.
    case decoding(String)

    /// Whether trying the same request later may succeed (network, 5xx, 429).
    public var isTransient: Bool {
        switch self {
        case .transport, .rateLimited: return true
        case .server(let status, _): return status >= 500
        default: return false
        }
    }

    /// The problem document, when the server sent one.
    public var problem: APIProblem? {
        switch self {
        case .rateLimited(_, let p), .validation(_, let p), .badRequest(let p), .unauthorized(let p),
            .notFound(let p), .conflict(let p), .payloadTooLarge(let p):
            return p
        case .server(_, let p): return p
        case .transport, .decoding: return nil
        }
    }

    /// A readable explanation.
    public var description: String {
        switch self {
        case .rateLimited(let after, let p):
            return "rate limited" + (after.map { ", retry after \(Int($0.rounded(.up))) s" } ?? "") + " (\(p.code))"
        case .validation(let issues, _): return "invalid: " + issues.map(\.description).joined(separator: "; ")
        case .badRequest(let p), .unauthorized(let p), .notFound(let p), .conflict(let p), .payloadTooLarge(let p):
            return p.description
        case .server(let status, let p): return p?.description ?? "server error \(status)"
        case .transport(let t): return t.description
        case .decoding(let d): return "unreadable response: \(d)"
        }
    }

    /// Maps a status and an optional problem document to an error.
    public static func from(status: Int, problem: APIProblem?, retryAfter: Double?) -> TrendyAPIError {
        let p = problem ?? APIProblem(status: status, code: "http_\(status)", title: "HTTP \(status)")
        switch status {
        case 429: return .rateLimited(retryAfter: retryAfter, problem: p)
        case 401: return .unauthorized(p)
        case 404: return .notFound(p)
        case 409: return .conflict(p)
        case 413: return .payloadTooLarge(p)
        case 400, 422:
            if p.code == ProblemCode.idempotencyKeyReused { return .conflict(p) }
            if let errors = p.errors, !errors.isEmpty { return .validation(issues: errors, problem: p) }
            return status == 422
                ? .validation(issues: [FieldIssue(field: "", reason: p.detail ?? p.title)], problem: p) : .badRequest(p)
        default: return .server(status: status, problem: problem)
        }
    }
}

/// A request that got no HTTP answer.
public enum TransportFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing listens at the address, or the host is unreachable.
    case cannotConnect(String)
    /// No answer within the timeout.
    case timedOut
    /// The connection closed before the whole answer arrived.
    case connectionLost(String)
    /// The call was cancelled.
    case cancelled

    /// A readable explanation.
    public var description: String {
        switch self {
        case .cannotConnect(let d): return "cannot reach the server (\(d))"
        case .timedOut: return "the server did not answer in time"
        case .connectionLost(let d): return "the connection dropped (\(d))"
        case .cancelled: return "cancelled"
        }
    }
}
