import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import TrendyAPI
import TrendyLogging

/// Request id, access log and the last line of error handling: every error leaves as a
/// problem document (auth routes excepted: they have GoTrue's shapes).
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let logger: Logger
    let maxBodySize: Int
    /// Which methods each path has, so a wrong method is 405 with `Allow`, not 404.
    var methods = MethodTable([])
    /// Where each answer is counted and timed, by route template.
    var metrics: ServerMetrics?

    static let requestIdHeader = HTTPField.Name(APIPaths.requestIdHeader)!

    func handle(
        _ request: Request, context: ServerRequestContext,
        next: (Request, ServerRequestContext) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.maxBodySize = maxBodySize
        let incoming = request.headers[Self.requestIdHeader].flatMap { $0.count <= 128 && !$0.isEmpty ? $0 : nil }
        context.requestId = incoming ?? UUID().uuidString.lowercased()
        let start = ContinuousClock.now
        var response: Response
        do {
            do {
                response = try await next(request, context)
            } catch let error as StoreError {
                // A store error no route turned into an answer (the database is unavailable,
                // say): answered like the routes answer it, never as a 500.
                if case .unavailable(let reason) = error {
                    logger.warning(
                        "Database unavailable",
                        metadata: ["request_id": .string(context.requestId), "reason": "\(reason)"])
                }
                throw ProblemError.from(error)
            }
        } catch let error as any HTTPResponseError {
            // A path that exists with other methods is 405 with `Allow` (Hummingbird says 404).
            let allow = (error as? HTTPError)?.status.code == 404 ? methods.allowed(request.uri.path) : []
            let failure: any HTTPResponseError =
                allow.isEmpty
                ? error
                : ProblemError(
                    405, ProblemCode.methodNotAllowed, "Method not allowed",
                    detail: "\(request.method.rawValue) is not allowed here; use \(allow.joined(separator: ", ")).")
            if request.uri.path.hasPrefix("/auth/v1"), !(failure is GoTrueError), !(failure is GoTrueRateLimited) {
                // Everything under /auth/v1 answers in GoTrue's shape, Hummingbird's own errors too.
                response = try GoTrueError.from(failure).response(from: request, context: context)
            } else if let http = failure as? HTTPError {
                response = try Self.problem(for: http).response(from: request, context: context)
            } else {
                response = try failure.response(from: request, context: context)
            }
            if !allow.isEmpty { response.headers[.allow] = allow.joined(separator: ", ") }
        } catch let error as ConnectionDropped {
            throw error
        } catch {
            logger.error(
                "Unhandled error", metadata: ["request_id": .string(context.requestId), "error": .error(error)])
            response = try ProblemError(500, ProblemCode.internalError, "Internal server error")
                .response(from: request, context: context)
        }
        response.headers[Self.requestIdHeader] = context.requestId
        let elapsed = ContinuousClock.now - start
        metrics?.request(
            method: request.method.rawValue, route: methods.template(request.uri.path) ?? "unmatched",
            status: Int(response.status.code), duration: elapsed)
        logger.info(
            "\(request.method) \(request.uri.path)",
            metadata: [
                "request_id": .string(context.requestId), "status": .int(Int(response.status.code)),
                "elapsed": .duration(elapsed),
            ])
        return response
    }

    /// Hummingbird's own errors (404 for unknown routes, 405, 413) in problem form.
    static func problem(for error: HTTPError) -> ProblemError {
        switch error.status.code {
        case 404: return ProblemError(404, ProblemCode.notFound, "Not found", detail: "No such route.")
        case 405: return ProblemError(405, ProblemCode.methodNotAllowed, "Method not allowed")
        case 413: return ProblemError(413, ProblemCode.payloadTooLarge, "Payload too large")
        default:
            return ProblemError(
                Int(error.status.code), "http_\(error.status.code)", error.status.reasonPhrase, detail: error.body)
        }
    }
}

/// The methods each route path has (`{id}` matches one segment), for 405 answers.
struct MethodTable: Sendable {
    let routes: [(method: String, segments: [Substring])]

    init(_ routes: [(String, String)]) {
        self.routes = routes.map { ($0.0, $0.1.split(separator: "/")) }
    }

    /// The route template that serves `path` (`/api/v1/events/{id}`): the metrics' `route` label,
    /// whose values stay few whatever the paths clients send.
    func template(_ path: String) -> String? {
        best(path.split(separator: "/")).first.map { "/" + $0.segments.joined(separator: "/") }
    }

    /// The methods of the route template that serves `path` (sorted; empty for no route). Like
    /// the router, a literal segment wins over a parameter: `/events/batch` is the batch route
    /// (POST only), never `/events/{id}`.
    func allowed(_ path: String) -> [String] {
        Set(best(path.split(separator: "/")).map(\.method)).sorted()
    }

    /// The routes of the most specific template matching `parts`: literal where the others have
    /// a parameter, first difference first.
    private func best(_ parts: [Substring]) -> [(method: String, segments: [Substring])] {
        func isParameter(_ segment: Substring) -> Bool { segment.hasPrefix("{") && segment.hasSuffix("}") }
        let matching = routes.filter { route in
            route.segments.count == parts.count
                && zip(route.segments, parts).allSatisfy { template, part in isParameter(template) || template == part }
        }
        let specificity = { (segments: [Substring]) in segments.map { isParameter($0) ? "0" : "1" }.joined() }
        guard let best = matching.map({ specificity($0.segments) }).max() else { return [] }
        return matching.filter { specificity($0.segments) == best }
    }
}

/// Thrown after the connection was closed on purpose (fault injection).
struct ConnectionDropped: Error {}

/// Injects the configured faults into `/api/v1` and `/auth/v1` (not health, readiness, metrics or admin).
struct FaultMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext
    let faults: FaultInjector

    func handle(
        _ request: Request, context: ServerRequestContext,
        next: (Request, ServerRequestContext) async throws -> Response
    ) async throws -> Response {
        let path = request.uri.path
        guard ![APIPaths.health, APIPaths.ready, APIPaths.metrics].contains(path), !path.hasPrefix("/admin/") else {
            return try await next(request, context)
        }
        var cut = false
        for action in faults.actions() {
            switch action {
            case .none: break
            case .delay(let seconds): try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            case .fail:
                throw ProblemError(503, ProblemCode.unavailable, "Service unavailable", detail: "Injected fault.")
            case .tooManyRequests(let after):
                throw ProblemError(
                    429, ProblemCode.rateLimited, "Too many requests", detail: "Injected rate limit.",
                    headers: [.retryAfter: String(after)])
            case .drop:
                try? await context.channel.close(mode: .all)
                throw ConnectionDropped()
            case .cutAfterWork:
                cut = true
            }
        }
        let response = try await next(request, context)
        if cut {
            try? await context.channel.close(mode: .all)
            throw ConnectionDropped()
        }
        return response
    }
}
