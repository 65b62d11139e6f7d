import AsyncHTTPClient
import Foundation
import Logging
import NIOHTTP1
import PostgresNIO
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyAuthGoTrue
import TrendyLogging
import TrendyModels
import TrendyServer
import TrendyServerTestSupport
import TrendyTestSupport

/// What an operator relies on (issue 23): metrics in Prometheus' format, readiness that includes
/// the database, and one request id in the client's log and the server's.
@Suite(.timeLimit(.minutes(5)))
struct OperationsTests {
    /// Polls `condition` every 100 ms for up to 20 s.
    static func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        try await TrendyTestSupport.eventually(condition)
    }

    /// The value of the first sample whose line starts with `prefix` (labels included).
    static func sample(_ text: String, _ prefix: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(prefix) }
            .flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }
    }

    @Test func metricsCountRequestsByRouteTemplateBatchesFeedPagesAndRateLimits() async throws {
        let configuration = ServerConfiguration.testing {
            $0.apiRateLimit = RateLimit(capacity: 12, refillPerSecond: 0.01)
        }
        try await ServerHarness.with(configuration) { h in
            let (api, session) = try await h.newUserClient()
            let type = try await h.makeType(api)
            _ = try await api.createEvents(
                (0..<7).map { h.event(type, at: h.clock.now.addingTimeInterval(-60 - Double($0))) }, idempotencyKey: nil
            )
            _ = try await api.changes(since: 0, limit: 100)
            let auth = [("Authorization", "Bearer \(session.accessToken)")]
            for _ in 0..<3 {
                #expect(try await h.raw(.GET, "/api/v1/events/\(h.ids.next())", headers: auth).status == 404)
            }
            var limited = 0
            for _ in 0..<12 where try await h.raw(.GET, "/api/v1/event-types", headers: auth).status == 429 {
                limited += 1
            }
            #expect(limited > 0)
            let metrics = try await h.raw(.GET, "/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.headers.first(name: "Content-Type")?.hasPrefix("text/plain") == true)
            let text = String(decoding: metrics.body, as: UTF8.self)
            // One series per route template, not per id.
            #expect(
                Self.sample(text, #"trendy_http_requests_total{method="GET",route="/api/v1/events/{id}",status="404"}"#)
                    == 3)
            #expect(!text.contains(#"route="/api/v1/events/0"#))
            #expect(
                Self.sample(
                    text, #"trendy_http_request_duration_seconds_count{method="POST",route="/api/v1/events/batch"}"#)
                    == 1)
            #expect(Self.sample(text, "trendy_batch_events_sum") == 7)
            #expect(Self.sample(text, "trendy_feed_page_changes_sum") == 8)  // the type and 7 events
            #expect(Self.sample(text, "trendy_feed_delivery_lag_seconds_count") == 1)
            #expect(Self.sample(text, #"trendy_rate_limited_total{scope="api"}"#) == Double(limited))
            #expect(Self.sample(text, "trendy_database_up") == 1)
            if TestDatabase.serversUsePostgres {
                #expect(Self.sample(text, #"trendy_db_pool_connections{state="max"}"#) == 10)
            }
            let ready = try await h.raw(.GET, "/api/v1/ready")
            #expect(ready.status == 200)
            #expect(ready.json["status"] as? String == "ready" && ready.json["database"] as? String == "ok")
        }
    }

    @Test func aMetricsTokenKeepsScrapersOut() async throws {
        let configuration = ServerConfiguration.testing { $0.metricsToken = "scrape-secret" }
        try await ServerHarness.with(configuration) { h throws in
            #expect(try await h.raw(.GET, "/metrics").status == 401)
            #expect(try await h.raw(.GET, "/metrics", headers: [("Authorization", "Bearer wrong")]).status == 401)
            #expect(
                try await h.raw(.GET, "/metrics", headers: [("Authorization", "Bearer scrape-secret")]).status == 200)
        }
    }

    /// The id the client sends is the one the server logs: a failure is found on both sides, for
    /// the API client and the auth gateway alike.
    @Test func oneRequestIdInTheClientsLogAndTheServers() async throws {
        try await ServerHarness.with { h in
            let session = try await h.signUp()
            let sink = InMemoryLogSink()
            let logs = LogSystem(configuration: .init(defaultLevel: .debug), sinks: [sink])
            let client = LiveTrendyAPIClient(
                configuration: .init(baseURL: h.baseURL, budget: .forTests()), http: h.http,
                tokens: StaticTokenProvider(session.accessToken), logger: logs.logger(.api))
            _ = try await client.listEventTypes()
            let gateway = GoTrueAuthGateway(
                configuration: .init(
                    baseURL: h.baseURL.appendingPathComponent("auth/v1"), budget: .forTests()),
                http: h.http, logger: logs.logger(.auth))
            _ = try await gateway.signIn(email: session.user.email, password: "password-123")
            let sent = sink.records.compactMap { $0.metadata["request_id"].map { "\($0)" } }
            #expect(sent.count == 2)
            let logged = Set(h.logs.records.compactMap { $0.metadata["request_id"].map { "\($0)" } })
            for id in sent { #expect(logged.contains(id), "the server logged \(id)") }
        }
    }

    /// A user's feed lock held by a stalled instance (here: a transaction that took it and does
    /// nothing) makes that user's writes 503 after the 10 s lock timeout — the writer does not wait
    /// for ever holding a pool connection — while other users write on; once the lock is gone,
    /// writes go through again.
    @Test(.enabled(if: TestDatabase.url != nil, "needs TRENDY_TEST_DATABASE_URL"))
    func aStalledLockHolderCostsOneUserA503NotAHang() async throws {
        let base = try PostgresLocation(url: try #require(TestDatabase.url))
        let fresh = try #require(TestDatabase.freshURL())
        try await RunningTestServer.with(.testing { $0.databaseURL = fresh }) { test in
            let stuck = try await test.signUp()
            let other = try await test.signUp()
            let held = AsyncStream.makeStream(of: Void.self)
            let release = AsyncStream.makeStream(of: Void.self)
            let holder = Task {
                let connection = try await PostgresConnection.connect(
                    on: PostgresClient.defaultEventLoopGroup.next(),
                    configuration: .init(
                        host: base.host, port: base.port, username: base.user, password: base.password,
                        database: base.database, tls: .disable), id: 1, logger: Logger(label: "test-holder")
                ).get()
                try await connection.query("BEGIN", logger: Logger(label: "test-holder"))
                try await connection.query(
                    "SELECT pg_advisory_xact_lock(hashtextextended(\(stuck.user.id), 46))",
                    logger: Logger(label: "test-holder"))
                held.continuation.yield()
                for await _ in release.stream { break }
                try await connection.query("ROLLBACK", logger: Logger(label: "test-holder"))
                try await connection.close()
            }
            for await _ in held.stream { break }
            let clock = ContinuousClock()
            let start = clock.now
            let blocked = try await test.raw(
                .POST, "/api/v1/event-types", body: #"{"name":"Blocked"}"#,
                headers: [("Authorization", "Bearer \(stuck.accessToken)")])
            let waited = clock.now - start
            #expect(blocked.status == 503)
            // The lease timeout (10 s), not for ever; the upper bound leaves room for a suite whose
            // hundreds of tests start at once on two cores (their backlog delayed timers by 20 s).
            #expect(waited >= .seconds(9) && waited < .seconds(60), "waited \(waited)")
            let free = try await test.raw(
                .POST, "/api/v1/event-types", body: #"{"name":"Free"}"#,
                headers: [("Authorization", "Bearer \(other.accessToken)")])
            #expect(free.status == 201)
            release.continuation.yield()
            try await holder.value
            let after = try await test.raw(
                .POST, "/api/v1/event-types", body: #"{"name":"Blocked"}"#,
                headers: [("Authorization", "Bearer \(stuck.accessToken)")])
            #expect(after.status == 201)
        }
    }

    /// Readiness follows the database: a database that refuses new connections makes the instance
    /// unready (503) within seconds — not a check that hangs — and ready again when it is back.
    @Test(.enabled(if: TestDatabase.url != nil, "needs TRENDY_TEST_DATABASE_URL"))
    func readinessFollowsTheDatabase() async throws {
        let baseURL = try #require(TestDatabase.url)
        let base = try PostgresLocation(url: baseURL)
        let admin = PostgresClient(
            configuration: .init(
                host: base.host, port: base.port, username: base.user, password: base.password,
                database: base.database, tls: .disable),
            backgroundLogger: Logger(label: "test-admin"))
        let runner = Task { await admin.run() }
        defer { runner.cancel() }
        let role = "r_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        try await admin.query(PostgresQuery(unsafeSQL: "CREATE ROLE \(role) LOGIN"))
        try await admin.query(PostgresQuery(unsafeSQL: "GRANT CREATE ON DATABASE \(base.database) TO \(role)"))
        let fresh = try #require(TestDatabase.freshURL())
        var parts = try #require(URLComponents(string: fresh))
        parts.user = role
        let url = try #require(parts.string)
        try await RunningTestServer.with(.testing { $0.databaseURL = url }) { test in
            #expect(try await test.raw(.GET, "/api/v1/ready").status == 200)
            let session = try await test.signUp()
            let auth = [("Authorization", "Bearer \(session.accessToken)")]
            try await admin.query(PostgresQuery(unsafeSQL: "ALTER ROLE \(role) NOLOGIN"))
            try await admin.query(
                PostgresQuery(
                    unsafeSQL: "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '\(role)'"))
            let down = try await Self.eventually { try await test.raw(.GET, "/api/v1/ready").status == 503 }
            #expect(down)
            let answer = try await test.raw(.GET, "/api/v1/ready")
            #expect(answer.json["database"] as? String == "unreachable")
            let metrics = String(decoding: try await test.raw(.GET, "/metrics").body, as: UTF8.self)
            #expect(Self.sample(metrics, "trendy_database_up") == 0)
            // Requests fail at once with 503 and Retry-After (the client retries), not after the
            // pool's minute of reconnecting with a 500; auth answers in GoTrue's shape.
            let clock = ContinuousClock()
            let start = clock.now
            let api = try await test.raw(.GET, "/api/v1/me/sync", headers: auth)
            #expect(api.status == 503)
            #expect(api.json["code"] as? String == ProblemCode.unavailable)
            #expect(api.headers.first(name: "Retry-After") == "1")
            let login = try await test.raw(
                .POST, "/auth/v1/token?grant_type=password",
                body: #"{"email":"\#(session.user.email)","password":"password-1"}"#)
            #expect(login.status == 503)
            // GoTrue's legacy shape (no API-version header): the status, a code, and the retry advice.
            #expect(login.json["code"] as? Int == 503)
            #expect(login.json["error_code"] as? String == "unknown")
            #expect((login.json["msg"] as? String)?.contains("Retry shortly") == true)
            // Within the lease timeout (10 s), not the pool's minute, with room for a busy start.
            #expect(clock.now - start < .seconds(45), "both answered well before the pool's minute")
            try await admin.query(PostgresQuery(unsafeSQL: "ALTER ROLE \(role) LOGIN"))
            let back = try await Self.eventually { try await test.raw(.GET, "/api/v1/ready").status == 200 }
            #expect(back)
        }
        try await admin.query(PostgresQuery(unsafeSQL: "DROP OWNED BY \(role) CASCADE"))
        try await admin.query(PostgresQuery(unsafeSQL: "REVOKE ALL ON DATABASE \(base.database) FROM \(role)"))
        try await admin.query(PostgresQuery(unsafeSQL: "DROP ROLE \(role)"))
    }
}
