import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import TrendyAPI
import TrendyAPILive
import TrendyLogging
import TrendyModels
import TrendyServer

/// Backend throughput: events/s through `POST /events/batch` (500 per batch) from one client on
/// loopback, with per-batch latency, against a same-run baseline of the same events written
/// straight into the store; then change-feed reads. Once per store asked for (`--store`): with
/// both, PostgreSQL's ingest is also given as a ratio of SQLite's from the same run.
enum ServerBenchmarks {
    static func run(smoke: Bool, stores: [BenchStore]) async throws -> [BenchResult] {
        var results: [BenchResult] = []
        var ingest: [String: Double] = [:]
        var feed: [String: Double] = [:]
        for store in stores {
            let measured = try await run(smoke: smoke, store: store)
            ingest[store.description] = measured.first?.value
            feed[store.description] = measured.first { $0.name.hasPrefix("change_feed_read") }?.value
            results += measured
        }
        // PostgreSQL against SQLite in the same run (issue 35: ingest ≥ 0.8, feed ≥ 0.5).
        for (name, figures, target) in [("batch_ingest", ingest, 0.8), ("change_feed_read", feed, 0.5)] {
            guard let sqlite = figures["sqlite"], let postgres = figures["postgres"] else { continue }
            results.append(
                BenchResult(
                    suite: "server", name: "\(name) postgres vs sqlite (same run)", value: postgres / sqlite,
                    unit: "×", baseline: nil, ratio: nil, target: "≥ \(target)", met: postgres / sqlite >= target))
        }
        return results
    }

    static func run(smoke: Bool, store: BenchStore) async throws -> [BenchResult] {
        let total = smoke ? 1_000 : 50_000
        let batchSize = 500
        let dir = BenchHarness.temporaryDirectory("server")
        defer { try? FileManager.default.removeItem(at: dir) }

        let (server, running) = try await BenchHarness.startServer(
            in: dir, configure: store.fresh(in: dir, name: "inproc").configure)
        return try await BenchHarness.ensuring(
            {
                try await BenchHarness.withHTTPClient { http in
                    let session = try await signUp(http, running.baseURL)
                    let api = LiveTrendyAPIClient(
                        configuration: .init(baseURL: running.baseURL, budget: NetworkBudget(request: .seconds(60))),
                        http: http,
                        tokens: StaticTokenProvider(session.accessToken), logger: LogSystem.disabled().logger(.api))
                    let ids = UUIDv7Generator()
                    let type = try await api.createEventType(
                        EventTypeCreate(id: ids.next(), name: "Bench"), idempotencyKey: nil)
                    let start = Date().addingTimeInterval(-Double(total) * 2)
                    func makeEvents(_ offset: Int) -> [Event] {
                        (0..<total).map { i in
                            Event(
                                id: ids.next(), eventTypeId: type.value.id,
                                timestamp: start.addingTimeInterval(Double(i + offset) * 0.5), notes: "bench \(i)",
                                sourceType: .imported)
                        }
                    }

                    // Baseline: the same work straight into the store, no HTTP, no JSON.
                    let baselineEvents = makeEvents(total)
                    let clock = ContinuousClock()
                    let baselineStart = clock.now
                    for chunk in stride(from: 0, to: total, by: batchSize) {
                        _ = try await server.store.createEvents(
                            userId: session.user.id, Array(baselineEvents[chunk..<min(chunk + batchSize, total)]),
                            device: nil, now: Date())
                    }
                    let baselineSeconds = BenchHarness.seconds(clock.now - baselineStart)

                    // The HTTP figures go to the server in its own process when it is built next to this
                    // binary (the client then gets its own core, as a phone would); else to this one.
                    var external: Process?
                    var target = api
                    var placement = "in process"
                    if let binary = SyncBenchmarks.serverBinary() {
                        let (process, url) = try SyncBenchmarks.spawnServer(
                            binary, database: store.fresh(in: dir, name: "external").arguments)
                        external = process
                        let remote = try await signUp(http, url)
                        target = LiveTrendyAPIClient(
                            configuration: .init(baseURL: url, budget: NetworkBudget(request: .seconds(60))),
                            http: http,
                            tokens: StaticTokenProvider(remote.accessToken), logger: LogSystem.disabled().logger(.api))
                        _ = try await target.createEventType(
                            EventTypeCreate(id: type.value.id, name: "Bench"), idempotencyKey: nil)
                        placement = "separate process"
                    }
                    defer {
                        external?.terminate()
                        external?.waitUntilExit()
                    }
                    let events = makeEvents(0)
                    var latencies: [Double] = []
                    let ingestStart = clock.now
                    for chunk in stride(from: 0, to: total, by: batchSize) {
                        let t0 = clock.now
                        let response = try await target.createEvents(
                            Array(events[chunk..<min(chunk + batchSize, total)]), idempotencyKey: UUID().uuidString)
                        latencies.append(BenchHarness.seconds(clock.now - t0) * 1000)
                        if let failed = response.results.first(where: { $0.status == .failed }) {
                            throw SyncBenchmarks.BenchError.batchFailed("\(failed)")
                        }
                    }
                    let ingestSeconds = BenchHarness.seconds(clock.now - ingestStart)
                    let eventsPerSecond = Double(total) / ingestSeconds
                    let baselinePerSecond = Double(total) / baselineSeconds

                    // Change feed: read everything back in pages of 500.
                    var cursor: Int64 = 0
                    var changes = 0
                    let feedStart = clock.now
                    while true {
                        let page = try await target.changes(since: cursor, limit: 500)
                        changes += page.changes.count
                        cursor = page.nextCursor
                        if !page.hasMore { break }
                    }
                    let feedPerSecond = Double(changes) / BenchHarness.seconds(clock.now - feedStart)

                    return [
                        BenchResult(
                            suite: "server", name: "batch_ingest \(store) (server in \(placement))",
                            value: eventsPerSecond,
                            unit: "events/s",
                            baseline: baselinePerSecond, ratio: eventsPerSecond / baselinePerSecond,
                            target: store.isSQLite ? "≥ 20,000 events/s" : "report (ratio to SQLite below)",
                            met: store.isSQLite ? eventsPerSecond >= 20_000 : nil),
                        BenchResult(
                            suite: "server", name: "batch_latency_p50 \(store)",
                            value: BenchHarness.percentile(latencies, 50),
                            unit: "ms/batch of 500", baseline: nil, ratio: nil, target: "report", met: nil),
                        BenchResult(
                            suite: "server", name: "batch_latency_p99 \(store)",
                            value: BenchHarness.percentile(latencies, 99),
                            unit: "ms/batch of 500", baseline: nil, ratio: nil, target: "report", met: nil),
                        BenchResult(
                            suite: "server", name: "change_feed_read \(store) (server in \(placement))",
                            value: feedPerSecond,
                            unit: "changes/s", baseline: nil,
                            ratio: nil, target: "report", met: nil),
                    ]
                }
            }, cleanup: { await running.stop() })
    }

    static func signUp(_ http: HTTPClient, _ base: URL) async throws -> GoTrueSession {
        var request = HTTPClientRequest(url: base.absoluteString + "/auth/v1/signup")
        request.method = .POST
        request.body = .bytes(
            .init(string: #"{"email":"bench-\#(UUID().uuidString.prefix(8))@example.com","password":"bench-password"}"#)
        )
        let response = try await http.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        return try TrendyJSON.decoder().decode(GoTrueSession.self, from: Data(body.readableBytesView))
    }
}
