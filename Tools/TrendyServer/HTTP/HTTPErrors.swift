import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import TrendyAPI
import TrendyModels

/// An API error that renders as RFC 9457 `application/problem+json`.
struct ProblemError: Error, HTTPResponseError {
    var problem: APIProblem
    var headers: HTTPFields = [:]

    var status: HTTPResponse.Status { .init(code: problem.status) }

    init(
        _ status: Int, _ code: String, _ title: String, detail: String? = nil, errors: [FieldIssue]? = nil,
        headers: HTTPFields = [:]
    ) {
        problem = APIProblem(status: status, code: code, title: title, detail: detail, errors: errors)
        self.headers = headers
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var p = problem
        p.instance = request.uri.path
        if let ctx = context as? ServerRequestContext { p.requestId = ctx.requestId }
        var fields = headers
        fields[.contentType] = APIProblem.mediaType
        let data = (try? TrendyJSON.encoder().encode(p)) ?? Data()
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func validation(_ issues: [FieldIssue], detail: String = "One or more fields are invalid.") -> ProblemError {
        ProblemError(422, ProblemCode.validationFailed, "Validation failed", detail: detail, errors: issues)
    }

    static func malformed(_ detail: String) -> ProblemError {
        ProblemError(400, ProblemCode.malformedRequest, "Malformed request", detail: detail)
    }

    static func notFound(_ what: String) -> ProblemError {
        ProblemError(404, ProblemCode.notFound, "Not found", detail: "No such \(what).")
    }

    static func conflict(_ detail: String) -> ProblemError {
        ProblemError(409, ProblemCode.conflict, "Conflict", detail: detail)
    }

    static let unauthorized = ProblemError(
        401, ProblemCode.unauthorized, "Unauthorized", detail: "A valid bearer token is required.",
        headers: [.wwwAuthenticate: "Bearer"])

    static func from(_ error: StoreError) -> ProblemError {
        switch error {
        case .notFound(let what): return .notFound(what)
        case .conflict(let detail): return .conflict(detail)
        case .validation(let issues): return .validation(issues)
        case .emailTaken: return .conflict("email taken")
        case .gone(let what):
            return ProblemError(
                410, ProblemCode.gone, "Gone",
                detail: "The \(what) was deleted; the change is kept as a conflict (see the change feed).")
        case .deletedId(let id, let version):
            var error = ProblemError(
                410, ProblemCode.gone, "Gone",
                detail: "The id \(id) was deleted: nothing was created (a deleted id never comes back; "
                    + "send it under a new id to bring it back).")
            error.problem.deletedVersion = version
            return error
        case .unavailable:
            // The reason is for the server's log; the client learns only to retry.
            return ProblemError(
                503, ProblemCode.unavailable, "Service unavailable",
                detail:
                    "The database does not answer right now. Retry shortly (with the same Idempotency-Key, a retry is safe).",
                headers: [.retryAfter: "1"])
        }
    }
}

/// A GoTrue-shaped auth error: legacy `{code, error_code, msg}`, or `{code, message}` when the
/// request sends `X-Supabase-Api-Version` ≥ 2024-01-01.
struct GoTrueError: Error, HTTPResponseError {
    var statusCode: Int
    var code: String
    var message: String
    /// `weak_password.reasons` (`length`, `characters`, `pwned`): sent with `weak_password`.
    var weakPasswordReasons: [String]? = nil

    var status: HTTPResponse.Status { .init(code: statusCode) }

    static let versionHeader = HTTPField.Name("X-Supabase-Api-Version")!
    /// The API versions GoTrue knows besides the initial one.
    static let version20240101 = "2024-01-01"

    /// GoTrue's rule: the closest known version not after the one asked for; a missing or
    /// unreadable header is the initial version (nil).
    static func apiVersion(_ request: Request) -> String? {
        guard let text = request.headers[versionHeader], text.utf8.count == 10,
            let asked = ISO8601.parse(text + "T00:00:00Z"), let known = ISO8601.parse(version20240101 + "T00:00:00Z"),
            asked >= known
        else { return nil }
        return version20240101
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let version = Self.apiVersion(request)
        var object: [String: Any] =
            version != nil
            ? ["code": code, "message": message]
            : ["code": statusCode, "error_code": code, "msg": message]
        if let weakPasswordReasons { object["weak_password"] = ["reasons": weakPasswordReasons] }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        var headers: HTTPFields = [.contentType: "application/json"]
        // Like GoTrue, the version the answer follows is echoed when it is not the initial one:
        // official clients read `code` only when they see it.
        if let version { headers[Self.versionHeader] = version }
        if statusCode == 401 { headers[.wwwAuthenticate] = "Bearer" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// Hummingbird's own errors and the API's problems, for a request under `/auth/v1`.
    static func from(_ error: any Error) -> GoTrueError {
        let status: Int
        let detail: String
        if let http = error as? HTTPError {
            (status, detail) = (Int(http.status.code), http.status.reasonPhrase)
        } else if let problem = (error as? ProblemError)?.problem {
            (status, detail) = (problem.status, problem.detail ?? problem.title)
        } else {
            return GoTrueError(
                statusCode: 500, code: "unexpected_failure",
                message: "Unexpected failure, please check server logs for more information")
        }
        switch status {
        case 404: return GoTrueError(statusCode: 404, code: "not_found", message: "Not Found")
        case 405: return GoTrueError(statusCode: 405, code: "method_not_allowed", message: "Method Not Allowed")
        case 413: return GoTrueError(statusCode: 413, code: "request_too_large", message: "Request body too large")
        case 400 where error is ProblemError: return GoTrueError(statusCode: 400, code: "bad_json", message: detail)
        default: return GoTrueError(statusCode: status, code: "unknown", message: detail)
        }
    }

    static let invalidCredentials = GoTrueError(
        statusCode: 400, code: "invalid_credentials", message: "Invalid login credentials")
    static let noAuthorization = GoTrueError(
        statusCode: 401, code: "no_authorization", message: "This endpoint requires a Bearer token")
    static let badJWT = GoTrueError(
        statusCode: 403, code: "bad_jwt", message: "invalid JWT: unable to parse or verify signature")
    static let sessionNotFound = GoTrueError(
        statusCode: 403, code: "session_not_found", message: "Session from session_id claim in JWT does not exist")
    static let refreshTokenNotFound = GoTrueError(
        statusCode: 400, code: "refresh_token_not_found", message: "Invalid Refresh Token: Refresh Token Not Found")
    static let refreshTokenAlreadyUsed = GoTrueError(
        statusCode: 400, code: "refresh_token_already_used", message: "Invalid Refresh Token: Already Used")
}
