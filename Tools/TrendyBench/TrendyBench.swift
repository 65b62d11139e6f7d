import ArgumentParser
import Foundation

/// `trendy-bench`: runs the benchmarks and prints each figure with its baseline and ratio.
///
/// Run the real figures in release: `swift run -c release trendy-bench`.
/// `--smoke` runs every suite with tiny sizes (CI uses it to keep the benchmarks working).
@main
struct TrendyBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trendy-bench", abstract: "Run Trendy Core's benchmarks.")

    @Argument(help: "Suites to run (default: all): \(TrendyBench.suites.joined(separator: ", ")).")
    var selected: [String] = []

    @Flag(help: "Tiny sizes: checks the benchmarks run, measures nothing meaningful.")
    var smoke = false

    @Flag(help: "Print results as JSON.")
    var json = false

    @Flag(help: "Run beside two CPU-bound processes (started and stopped here), as on a phone that is never idle.")
    var busy = false

    @Option(help: "Load: simultaneous clients (default 50).")
    var clients: Int?

    @Option(help: "Server/load: sqlite, postgres or both (default: both when a PostgreSQL database is known).")
    var store: String?

    @Option(
        help: ArgumentHelp(
            "Server/load: a PostgreSQL database (postgres://…); each run uses a fresh schema.",
            discussion: "Default: TRENDY_BENCH_DATABASE_URL, else TRENDY_TEST_DATABASE_URL."))
    var database: String?

    @Option(help: "Load on PostgreSQL: instance counts to compare, comma-separated (default 1,2).")
    var instances: String?

    @Option(help: "Sync/launch: events in the big store (default 1,000,000); push/pull use at most 20,000.")
    var size: Int?

    static let suites = [
        "logging", "auth", "server", "sync", "updates", "launch", "app", "offline", "geofence", "memory", "load",
        "search", "export", "insights",
    ]

    func validate() throws {
        for s in selected where !Self.suites.contains(s) {
            throw ValidationError("unknown suite '\(s)'; available: \(Self.suites.joined(separator: ", "))")
        }
    }

    func run() async throws {
        let chosen = selected.isEmpty ? Self.suites : selected
        let stores = try BenchStore.chosen(store, database: database)
        let counts = try instances.map { text in
            try text.split(separator: ",").map { part in
                guard let n = Int(part), (1...8).contains(n) else {
                    throw ValidationError("--instances: counts of 1 to 8, comma-separated")
                }
                return n
            }
        }
        var results: [BenchResult] = []
        let load = busy ? try BusyLoad(processes: 2) : nil
        defer { load?.stop() }
        for suite in chosen {
            var r: [BenchResult]
            switch suite {
            case "logging": r = LoggingBenchmarks.run(smoke: smoke)
            case "auth": r = AuthBenchmarks.run(smoke: smoke)
            case "server": r = try await ServerBenchmarks.run(smoke: smoke, stores: stores)
            case "sync": r = try await SyncBenchmarks.run(smoke: smoke, size: size)
            case "updates": r = try await UpdateBenchmarks.run(smoke: smoke)
            case "launch": r = try await LaunchBenchmarks.run(smoke: smoke, size: size)
            case "app": r = try await AppBenchmarks.run(smoke: smoke, size: size)
            case "offline": r = try await OfflineBenchmarks.run(smoke: smoke)
            case "geofence": r = try await GeofenceBenchmarks.run(smoke: smoke)
            case "memory": r = try await MemoryBenchmarks.run(smoke: smoke, size: size)
            case "search": r = try await SearchBenchmarks.run(smoke: smoke, size: size)
            case "export": r = try await ExportBenchmarks.run(smoke: smoke, size: size)
            case "insights": r = try await InsightBenchmarks.run(smoke: smoke, size: size)
            case "load":
                r = try await LoadBenchmarks.run(smoke: smoke, clients: clients, stores: stores, instances: counts)
            default: r = []
            }
            if smoke {
                // Smoke sizes (and debug builds) say nothing about targets.
                for i in r.indices { r[i].met = nil }
            }
            if busy {
                for i in r.indices { r[i].name += " [busy]" }
            }
            if !json {
                for result in r { print(BenchHarness.format(result)) }
            }
            results += r
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(results), as: UTF8.self))
        }
    }
}
