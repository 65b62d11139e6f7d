import TrendyModels

/// An RFC 9457 problem document (`application/problem+json`), as every API error is sent.
public struct APIProblem: Codable, Sendable, Hashable, Error, CustomStringConvertible {
    /// The media type of problem documents.
    public static let mediaType = "application/problem+json"

    /// A URI naming the problem kind (`urn:trendy:problem:<code>`).
    public var type: String
    /// A short summary of the kind.
    public var title: String
    /// The HTTP status.
    public var status: Int
    /// What went wrong this time, for a person.
    public var detail: String?
    /// The request path.
    public var instance: String?
    /// The request id, for finding the server's log lines.
    public var requestId: String?
    /// A stable machine-readable code (`validation_failed`, `rate_limited`, ...).
    public var code: String
    /// Every invalid field, for validation problems.
    public var errors: [FieldIssue]?
    /// For a create of a deleted id (`410`): the account's change-feed cursor when it was deleted
    /// (a create queued at an older cursor is a late resend; one queued at it or later brings the
    /// entity back under a new id, D37). Absent for an id deleted before servers kept it.
    public var deletedVersion: Int64?

    /// The title of the `409` a request gets while another request with its `Idempotency-Key` is
    /// still running: not a refusal of the change, the same change not yet answered.
    public static let requestInProgressTitle = "Request in progress"

    /// Creates a problem; `type` is derived from `code`.
    public init(
        status: Int, code: String, title: String, detail: String? = nil, instance: String? = nil,
        requestId: String? = nil, errors: [FieldIssue]? = nil
    ) {
        self.type = "urn:trendy:problem:\(code)"
        self.title = title
        self.status = status
        self.detail = detail
        self.instance = instance
        self.requestId = requestId
        self.code = code
        self.errors = errors
    }

    enum CodingKeys: String, CodingKey {
        case type, title, status, detail, instance, code, errors
        case requestId = "request_id"
        case deletedVersion = "deleted_version"
    }

    /// `409 conflict: an event type named "Coffee" already exists`.
    public var description: String {
        // A problem made up for an answer without one says its status once ("HTTP 400: …"), not
        // "400 http_400" (an outsider's doubt).
        var text = code == "http_\(status)" ? "HTTP \(status)" : "\(status) \(code)"
        if let detail { text += ": \(detail)" }
        if let errors, !errors.isEmpty { text += " (" + errors.map(\.description).joined(separator: "; ") + ")" }
        return text
    }
}

/// Stable problem codes used by the server and understood by the client.
public enum ProblemCode {
    /// The body is not valid JSON or does not have the expected shape.
    public static let malformedRequest = "malformed_request"
    /// One or more fields are invalid; see `errors`.
    public static let validationFailed = "validation_failed"
    /// No valid bearer token.
    public static let unauthorized = "unauthorized"
    /// The entity does not exist (or belongs to someone else).
    public static let notFound = "not_found"
    /// The request conflicts with stored data (duplicate name, id in use).
    public static let conflict = "conflict"
    /// The entity was deleted; the change was kept as a conflict (410).
    public static let gone = "gone"
    /// `GET /changes?since=` beyond the account's latest change: the server lost changes a
    /// device had (restored from a backup). The device downloads everything again and sends what
    /// the server lacks.
    public static let cursorAhead = "cursor_ahead"
    /// The same idempotency key was used with a different body.
    public static let idempotencyKeyReused = "idempotency_key_reused"
    /// The body is larger than the server accepts.
    public static let payloadTooLarge = "payload_too_large"
    /// Too many requests; see `Retry-After`.
    public static let rateLimited = "rate_limited"
    /// The method is not allowed on this path.
    public static let methodNotAllowed = "method_not_allowed"
    /// The server failed.
    public static let internalError = "internal_error"
    /// The server is temporarily unable to answer.
    public static let unavailable = "service_unavailable"
}
