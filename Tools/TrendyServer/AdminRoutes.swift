import Foundation
import Hummingbird
import NIOCore
import TrendyModels

/// `/admin/v1`: the fault switches, for torture tests against a separate server process.
/// Enabled only when the server has an admin token; absent otherwise (404).
struct AdminRoutes: Sendable {
    let server: TrendyServer

    func authorize(_ request: Request) throws {
        guard let expected = server.configuration.adminToken else { throw ProblemError.notFound("route") }
        guard BearerToken.from(request) == expected else { throw ProblemError.unauthorized }
    }

    func getFaults(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        try authorize(request)
        return try JSONIO.response(server.faults.configuration)
    }

    func putFaults(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        try authorize(request)
        let buffer = try await JSONIO.body(request, context: context)
        let faults = try JSONIO.decode(FaultConfiguration.self, from: buffer)
        var issues: [FieldIssue] = []
        for (field, rate) in [
            ("error_rate", faults.errorRate), ("drop_rate", faults.dropRate), ("cut_rate", faults.cutRate),
        ]
        where !(0...1).contains(rate) {
            issues.append(FieldIssue(field: field, reason: "must be between 0 and 1"))
        }
        if faults.latencyMilliseconds < 0 || faults.jitterMilliseconds < 0 || faults.forced429Count < 0 {
            issues.append(FieldIssue(field: "latency_ms", reason: "latency, jitter and counts cannot be negative"))
        }
        if !issues.isEmpty { throw ProblemError.validation(issues) }
        server.faults.update(faults)
        return try JSONIO.response(faults)
    }

    /// `GET /metrics`: Prometheus' text format. Open unless the server has a metrics token, in
    /// which case the scraper sends it as a bearer token.
    func metrics(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        if let expected = server.configuration.metricsToken,
            !Passwords.constantTimeEqual(BearerToken.from(request) ?? "", expected)
        {
            throw ProblemError.unauthorized
        }
        let body = server.metrics.exposition(pool: server.store.poolUsage, databaseUp: await server.store.isReady())
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
