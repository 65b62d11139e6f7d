import Foundation
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
        let p =
            problem
            ?? APIProblem(
                status: status, code: "http_\(status)", title: "HTTP \(status)",
                detail: "the server gave no reason (its answer was not in this API's error format)")
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

/// A request that got no HTTP answer. `server` is the `host:port` the request was for, so the
/// text can say which server it is about.
public enum TransportFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing listens at the address: the connection was refused at once.
    case refused(server: String)
    /// The network has no route to the server (no network, or the address is unroutable), or
    /// its name does not resolve.
    case unreachable(server: String, reason: String)
    /// The server accepted (or never completed) the connection and sent no answer within
    /// `seconds`.
    case notResponding(server: String, seconds: Double)
    /// Another failure to connect (the embedded server did not start, TLS failed…).
    case cannotConnect(String)
    /// The connection closed before the whole answer arrived.
    case connectionLost(String)
    /// The call was cancelled.
    case cancelled

    /// A no-answer failure whose server and wait are not known (test doubles).
    public static let timedOut = TransportFailure.notResponding(server: "", seconds: 0)

    /// A readable sentence (capitalised, no trailing period).
    public var description: String {
        switch self {
        case .refused(let server): return "The server at \(server) refused the connection"
        case .unreachable(let server, let reason): return "The server at \(server) cannot be reached (\(reason))"
        case .notResponding(let server, let seconds):
            let at = server.isEmpty ? "The server" : "The server at \(server)"
            guard seconds > 0 else { return "\(at) did not answer in time" }
            return "\(at) did not answer within \(Self.formatSeconds(seconds))"
        case .cannotConnect(let d): return "Cannot reach the server (\(d))"
        case .connectionLost(let d): return "The connection to the server dropped (\(d))"
        case .cancelled: return "Cancelled"
        }
    }

    /// `2 s`, `0.5 s`, `1.25 s`.
    public static func formatSeconds(_ seconds: Double) -> String {
        if seconds == seconds.rounded() { return "\(Int(seconds)) s" }
        var text = String(format: "%.2f", seconds)
        while text.hasSuffix("0") { text.removeLast() }
        return text + " s"
    }
}
