import AsyncHTTPClient
import Foundation
import NIOHTTP1
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyHTTP
import TrendyModels
import TrendyServer
import TrendyServerTestSupport
import TrendyTestSupport

@Suite(.timeLimit(.minutes(5)))
struct ErrorAndFaultTests {
    @Test func everyErrorIsAProblemDocument() async throws {
        try await ServerHarness.with(.testing { $0.maxBodySize = 1_024 }) { h in
            let (_, session) = try await h.newUserClient()
            let auth = [("Authorization", "Bearer \(session.accessToken)"), ("X-Request-ID", "req-42")]
            let malformed = try await h.raw(.POST, "/api/v1/event-types", body: "{not json", headers: auth)
            #expect(malformed.status == 400)
            #expect(malformed.headers.first(name: "Content-Type") == "application/problem+json")
            #expect(malformed.json["type"] as? String == "urn:trendy:problem:malformed_request")
            #expect(malformed.json["title"] is String)
            #expect(malformed.json["status"] as? Int == 400)
            #expect(malformed.json["request_id"] as? String == "req-42")
            #expect(malformed.json["instance"] as? String == "/api/v1/event-types")
            #expect(malformed.headers.first(name: "X-Request-ID") == "req-42")
            let missing = try await h.raw(.POST, "/api/v1/event-types", body: ##"{"color":"#123456"}"##, headers: auth)
            #expect((missing.json["detail"] as? String)?.contains("name") == true)
            let big = try await h.raw(
                .POST, "/api/v1/event-types", body: #"{"name":""# + String(repeating: "x", count: 2_000) + #""}"#,
                headers: auth)
            #expect(big.status == 413)
            #expect(big.json["code"] as? String == "payload_too_large")
            let route = try await h.raw(.GET, "/api/v1/nothing-here", headers: auth)
            #expect(route.status == 404)
            #expect(route.json["code"] as? String == "not_found")
            let badId = try await h.raw(.GET, "/api/v1/events/not-an-id", headers: auth)
            #expect(badId.status == 404)
            let generated = try await h.raw(.GET, "/api/v1/health")
            #expect(generated.headers.first(name: "X-Request-ID")?.isEmpty == false)
            // An impossible date is refused, not rolled over into the next month.
            for impossible in ["2026-02-30T10:00:00Z", "2026-04-31T23:00:00Z", "2026-11-22T10:00:60Z"] {
                let body =
                    #"{"id":"01a20b03-f01d-7122-a20d-e9d1ae4eaaaa","event_type_id":"01a20b03-f01d-7122-a20d-e9d1ae4eaaab","timestamp":""#
                    + impossible + #""}"#
                let rolled = try await h.raw(.POST, "/api/v1/events", body: body, headers: auth)
                #expect(rolled.status == 400, "\(impossible)")
                #expect((rolled.json["detail"] as? String)?.contains(impossible) == true)
            }
        }
    }

    @Test func badTokensAreRejected() async throws {
        try await ServerHarness.with { h in
            let (_, session) = try await h.newUserClient()
            let parts = session.accessToken.split(separator: ".").map(String.init)
            // A token signed with another secret.
            let otherSecret = try await ServerHarnessForeignToken.token()
            // The header swapped for alg "none" with no signature.
            let noneHeader = Data(#"{"alg":"none","typ":"JWT"}"#.utf8).base64EncodedString()
                .replacingOccurrences(of: "=", with: "")
            let tokens = [
                "garbage", parts[0] + "." + parts[1] + ".AAAA", noneHeader + "." + parts[1] + ".", otherSecret,
                parts[0] + "." + parts[1].dropLast(3) + "abc" + "." + parts[2],
                // The signature stripped, or the third part gone.
                parts[0] + "." + parts[1] + ".", parts[0] + "." + parts[1],
            ]
            for token in tokens {
                let r = try await h.raw(.GET, "/api/v1/events", headers: [("Authorization", "Bearer \(token)")])
                #expect(r.status == 401, "accepted \(token)")
                #expect(r.headers.first(name: "WWW-Authenticate") == "Bearer")
            }
            h.clock.advance(3_601)
            let expired = try await h.raw(
                .GET, "/api/v1/events", headers: [("Authorization", "Bearer \(session.accessToken)")])
            #expect(expired.status == 401)
            #expect((expired.json["detail"] as? String)?.contains("expired") == true)
        }
    }

    @Test func rateLimitAnswers429WithRetryAfterAndRecovers() async throws {
        try await ServerHarness.with(.testing { $0.apiRateLimit = .init(capacity: 3, refillPerSecond: 0.5) }) { h in
            let (api, _) = try await h.newUserClient()
            for _ in 0..<3 { _ = try await api.listEventTypes() }
            let error = await apiError { () throws(TrendyAPIError) in _ = try await api.listEventTypes() }
            guard case .rateLimited(let after, let problem) = error else {
                Issue.record("expected 429")
                return
            }
            #expect(after == 2)
            #expect(problem.code == "rate_limited")
            h.clock.advance(2)
            _ = try await api.listEventTypes()
        }
    }

    @Test func injectedFaultsReachTheClient() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            var faults = FaultConfiguration()
            faults.forced429Count = 2
            faults.retryAfterSeconds = 7
            h.server.faults.update(faults)
            for _ in 0..<2 {
                let e = await apiError { () throws(TrendyAPIError) in _ = try await api.listEventTypes() }
                guard case .rateLimited(let after, _) = e else {
                    Issue.record("expected 429, got \(String(describing: e))")
                    return
                }
                #expect(after == 7)
            }
            _ = try await api.listEventTypes()
            faults = FaultConfiguration()
            faults.errorRate = 1
            h.server.faults.update(faults)
            let failed = await apiError { () throws(TrendyAPIError) in _ = try await api.listEventTypes() }
            #expect(failed?.isTransient == true)
            #expect(failed?.problem?.status == 503)
            #expect(try await api.health().status == "ok")
            faults = FaultConfiguration()
            faults.dropRate = 1
            h.server.faults.update(faults)
            let dropped = await apiError { () throws(TrendyAPIError) in _ = try await api.listEventTypes() }
            guard case .transport = dropped else {
                Issue.record("expected a transport failure, got \(String(describing: dropped))")
                return
            }
            h.server.faults.update(FaultConfiguration())
            _ = try await api.listEventTypes()
        }
    }

    @Test func adminFaultSwitchesNeedTheAdminToken() async throws {
        try await ServerHarness.with(.testing { $0.adminToken = "admin-secret" }) { h in
            let denied = try await h.raw(.PUT, "/admin/v1/faults", body: #"{"error_rate":1}"#)
            #expect(denied.status == 401)
            let bad = try await h.raw(
                .PUT, "/admin/v1/faults", body: #"{"error_rate":2}"#,
                headers: [("Authorization", "Bearer admin-secret")])
            #expect(bad.status == 422)
            let ok = try await h.raw(
                .PUT, "/admin/v1/faults", body: #"{"forced_429_count":1,"latency_ms":5}"#,
                headers: [("Authorization", "Bearer admin-secret")])
            #expect(ok.status == 200)
            #expect(h.server.faults.configuration.forced429Count == 1)
            #expect(h.server.faults.configuration.latencyMilliseconds == 5)
        }
        try await ServerHarness.with { h in
            let absent = try await h.raw(.GET, "/admin/v1/faults", headers: [("Authorization", "Bearer x")])
            #expect(absent.status == 404)
            // Every method: a 405 naming GET and PUT told an outsider the routes exist.
            for method in [HTTPMethod.POST, .PATCH, .DELETE, .OPTIONS] {
                let r = try await h.raw(method, "/admin/v1/faults")
                #expect(r.status == 404, "\(method)")
                #expect(r.headers.first(name: "Allow") == nil)
            }
        }
    }

    @Test func unreachableServerIsATransportError() async throws {
        let http = HTTPTransport.makeClient(budget: .standard)
        let client = LiveTrendyAPIClientFactory.make(http: http, url: URL(string: "http://127.0.0.1:1")!)
        let error = await apiError { () throws(TrendyAPIError) in _ = try await client.health() }
        guard case .transport(let failure) = error else {
            Issue.record("expected transport")
            try await http.shutdown()
            return
        }
        #expect(error?.isTransient == true)
        guard case .refused(server: "127.0.0.1:1") = failure else {
            Issue.record("expected refused, got \(failure)")
            try await http.shutdown()
            return
        }
        try await http.shutdown()
    }
}
