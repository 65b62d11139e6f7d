import AsyncHTTPClient
import Foundation
import GRDB
import TrendyAPI
import TrendyAPILive
import TrendyLogging
import TrendyModels
import TrendySync
import TrendySyncLive

/// The server under many clients at once (servers in their own processes): each client has its
/// own account, local database and sync engine, and all push their events and pull at the same
/// time; then all read the change feed at once, for request latencies. Any non-ok pass or wrong
/// count is an error. On PostgreSQL the same load runs against 1 and against 2 instances
/// sharing the database (clients spread over them), in one run.
enum LoadBenchmarks {
    static func run(smoke: Bool, clients: Int?, stores: [BenchStore], instances: [Int]?) async throws
        -> [BenchResult]
    {
        guard let binary = SyncBenchmarks.serverBinary() else {
            print("load: skipped — build the trendy-server product next to trendy-bench first")
            return []
        }
        var results: [BenchResult] = []
        for store in stores {
            // Counts may repeat (`1,2,1,2`): the comparison is of the medians, so a noisy moment
            // of the shared machine counts once.
            var throughput: [Int: [Double]] = [:]
            for count in store.isSQLite ? [1] : (instances ?? [1, 2]) {
                let measured = try await run(
                    smoke: smoke, clients: clients, store: store, instances: count, binary: binary)
                throughput[count, default: []] += measured.first.map { [$0.value] } ?? []
                results += measured
            }
            if let one = throughput[1].map(BenchHarness.median), let two = throughput[2].map(BenchHarness.median) {
                let runs = throughput[2]?.count ?? 0
                results.append(
                    BenchResult(
                        suite: "load", name: "\(store) 2 instances vs 1 (same run, median of \(runs))",
                        value: two / one,
                        unit: "×", baseline: nil, ratio: nil, target: "≥ 1", met: two / one >= 1))
            }
        }
        return results
    }

    static func run(smoke: Bool, clients: Int?, store: BenchStore, instances: Int, binary: URL) async throws
        -> [BenchResult]
    {
        let n = clients ?? (smoke ? 5 : 50)
        let perClient = smoke ? 50 : 1_000
        let dir = BenchHarness.temporaryDirectory("load")
        defer { try? FileManager.default.removeItem(at: dir) }
        // The database gets the same 20 connections however many instances share them, as an
        // operator sizes a fleet against `max_connections` (docs/server.md).
        let place = store.fresh(in: dir, name: "server", poolSize: max(2, 20 / instances))
        var servers: [(process: Process, url: URL)] = []
        defer {
            for server in servers {
                server.process.terminate()
                server.process.waitUntilExit()
            }
        }
        for _ in 0..<instances { servers.append(try SyncBenchmarks.spawnServer(binary, database: place.arguments)) }
        let label = "\(store) \(instances) instance\(instances == 1 ? "" : "s")"
        return try await BenchHarness.withHTTPClient { http in
            let logger = LogSystem.disabled().logger(.sync)

            struct Client: Sendable {
                let api: LiveTrendyAPIClient
                let store: SQLiteLocalStore
                let engine: OutboxSyncEngine
            }
            var built: [Client] = []
            for i in 0..<n {
                let url = servers[i % servers.count].url
                let session = try await ServerBenchmarks.signUp(http, url)
                let api = LiveTrendyAPIClient(
                    configuration: .init(baseURL: url, budget: NetworkBudget(request: .seconds(120))), http: http,
                    tokens: StaticTokenProvider(session.accessToken), logger: LogSystem.disabled().logger(.api))
                let (store, _) = try SyncBenchmarks.makeStore(dir, name: "client-\(i).sqlite")
                _ = try await store.claim(for: session.user.id)
                let type = EventType(id: UUIDv7Generator().next(), name: "Load")
                try await store.createEventType(type)
                let ids = UUIDv7Generator()
                _ = try await store.insertEvents(
                    SyncBenchmarks.events(perClient, type: type.id, ids: ids, start: Date().addingTimeInterval(-1e7)))
                let userId = session.user.id
                built.append(
                    Client(
                        api: api, store: store,
                        engine: OutboxSyncEngine(store: store, api: api, identity: { userId }, logger: logger)))
            }
            let clientsList = built

            // Everyone syncs at once; where the CPU goes meanwhile says what limits the figure.
            let serverPids = servers.map { String($0.process.processIdentifier) }
            func cpu() -> [Double] {
                [
                    CPUSnapshot.processSeconds("self"), serverPids.reduce(0) { $0 + CPUSnapshot.processSeconds($1) },
                    CPUSnapshot.seconds(ofProcessesNamed: "postgres"), CPUSnapshot.machineBusy().busy,
                ]
            }
            let cpuBefore = cpu()
            let clock = ContinuousClock()
            let t0 = clock.now
            let passes = await withTaskGroup(of: (Double, SyncOutcome, Int).self) { group in
                for c in clientsList {
                    group.addTask {
                        let s = clock.now
                        let run = await c.engine.sync(full: false)
                        return (BenchHarness.seconds(clock.now - s), run.outcome, run.pushed)
                    }
                }
                return await group.reduce(into: [(Double, SyncOutcome, Int)]()) { $0.append($1) }
            }
            let wall = BenchHarness.seconds(clock.now - t0)
            let used = zip(cpu(), cpuBefore).map { ($0 - $1) / wall }
            let cores = CPUSnapshot.machineBusy().cores
            let failures = passes.filter { $0.1 != .ok || $0.2 != perClient + 1 }.count
            let throughput = Double(n * perClient) / wall

            // Then everyone reads the feed at once, 10 pages each: request latencies.
            let latencies = await withTaskGroup(of: [Double].self) { group in
                for c in clientsList {
                    group.addTask {
                        var out: [Double] = []
                        for _ in 0..<10 {
                            let s = clock.now
                            _ = try? await c.api.changes(since: 0, limit: 500)
                            out.append(BenchHarness.seconds(clock.now - s) * 1_000)
                        }
                        return out
                    }
                }
                return await group.reduce(into: [Double]()) { $0 += $1 }
            }
            return [
                BenchResult(
                    suite: "load",
                    name: "\(label): \(n)_clients_sync_\(perClient)_events_each (\(failures) failed passes)",
                    value: throughput, unit: "events/s", baseline: nil, ratio: nil, target: "no errors; report",
                    met: failures == 0),
                BenchResult(
                    suite: "load",
                    name: String(
                        format: "%@: cores busy during the sync (clients %.2f, servers %.2f, PostgreSQL %.2f)", label,
                        used[0], used[1], used[2]),
                    value: used[3], unit: "of \(cores) cores", baseline: nil, ratio: nil, target: "report", met: nil),
                BenchResult(
                    suite: "load", name: "\(label): \(n)_clients_pass_duration_p99",
                    value: BenchHarness.percentile(passes.map(\.0), 99),
                    unit: "s", baseline: BenchHarness.median(passes.map(\.0)), ratio: nil,
                    target: "report (baseline: median)",
                    met: nil),
                BenchResult(
                    suite: "load", name: "\(label): \(n)_clients_feed_page_latency_p99",
                    value: BenchHarness.percentile(latencies, 99),
                    unit: "ms", baseline: BenchHarness.median(latencies), ratio: nil,
                    target: "report (baseline: median)",
                    met: nil),
            ]
        }
    }
}
