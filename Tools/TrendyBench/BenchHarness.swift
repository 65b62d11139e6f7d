import AsyncHTTPClient
import Foundation
import TrendyLogging
import TrendyModels
import TrendyServer
import TrendySyncLive

/// One measured figure, with its same-run baseline where there is one.
struct BenchResult: Encodable {
    var suite: String
    var name: String
    var value: Double
    var unit: String
    var baseline: Double?
    var ratio: Double?
    var target: String
    var met: Bool?
}

/// Times closures with the monotonic clock and keeps the median of several rounds, so one
/// noisy round on a shared machine does not decide the figure.
enum BenchHarness {
    /// Median nanoseconds per operation over `rounds` rounds of `iterations` operations.
    static func nanosecondsPerOperation(iterations: Int, rounds: Int = 5, _ body: (Int) -> Void) -> Double {
        var perOp: [Double] = []
        body(min(iterations, 1_000))  // warm-up
        for _ in 0..<rounds {
            let clock = ContinuousClock()
            let start = clock.now
            body(iterations)
            let elapsed = clock.now - start
            perOp.append(seconds(elapsed) * 1e9 / Double(iterations))
        }
        return median(perOp)
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    static func median(_ values: [Double]) -> Double {
        let s = values.sorted()
        guard !s.isEmpty else { return 0 }
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        let s = values.sorted()
        guard !s.isEmpty else { return 0 }
        let index = min(s.count - 1, max(0, Int((p / 100 * Double(s.count)).rounded(.up)) - 1))
        return s[index]
    }

    /// Runs `body`, then `cleanup` however `body` ended (Swift has no async `defer`). A cleanup
    /// error counts only when `body` succeeded; otherwise `body`'s error is the one reported.
    static func ensuring<T>(_ body: () async throws -> T, cleanup: () async throws -> Void) async throws -> T {
        let value: T
        do {
            value = try await body()
        } catch {
            try? await cleanup()
            throw error
        }
        try await cleanup()
        return value
    }

    /// Runs `body` with an HTTP client that is shut down however `body` ends. A client released
    /// without a shutdown traps, and that trap used to hide a benchmark's own error in CI.
    static func withHTTPClient<T>(_ body: (HTTPClient) async throws -> T) async throws -> T {
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        return try await ensuring({ try await body(http) }, cleanup: { try await http.shutdown() })
    }

    /// Starts the dev server in this process on a free port with its database in `dir` (cheap
    /// bcrypt; `configure` adjusts the rest). Stop it with `RunningServer.stop()`.
    static func startServer(
        in dir: URL, configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws -> (server: TrendyServer, running: RunningServer) {
        var c = ServerConfiguration()
        c.port = 0
        c.databasePath = dir.appendingPathComponent("server.sqlite").path
        c.bcryptCost = 4
        c.jwtSecret = String(repeating: "b", count: 40)
        configure(&c)
        let server = try await TrendyServer(configuration: c, logs: LogSystem.disabled())
        return (server, try await server.start())
    }

    static func temporaryDirectory(_ name: String) -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "trendy-bench-\(name)-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func format(_ r: BenchResult) -> String {
        var line = "\(r.suite)/\(r.name): \(String(format: "%.3f", r.value)) \(r.unit)"
        if let b = r.baseline { line += "  baseline \(String(format: "%.3f", b)) \(r.unit)" }
        if let ratio = r.ratio { line += "  ratio \(String(format: "%.2f", ratio))" }
        line += "  target \(r.target)"
        if let met = r.met { line += met ? "  ✓" : "  ✗ MISSED" }
        return line
    }
}

/// CPU accounting from `/proc` (Linux; zeros elsewhere): what a figure cost each process, and
/// how much of the machine the hypervisor took meanwhile (steal), so a noisy moment shows.
struct CPUSnapshot {
    /// Seconds of CPU used by this process and by `other` (the server), and the machine's busy,
    /// steal and total CPU seconds.
    var own: Double
    var other: Double
    var steal: Double
    var total: Double

    static func take(other pid: Int32? = nil) -> CPUSnapshot {
        CPUSnapshot(
            own: processSeconds("self"), other: pid.map { processSeconds(String($0)) } ?? 0,
            steal: machine().steal, total: machine().total)
    }

    /// The difference `later - self`.
    func until(_ later: CPUSnapshot) -> CPUSnapshot {
        CPUSnapshot(
            own: later.own - own, other: later.other - other, steal: later.steal - steal, total: later.total - total)
    }

    /// Several intervals added up.
    static func sum(_ intervals: [CPUSnapshot]) -> CPUSnapshot {
        intervals.reduce(CPUSnapshot(own: 0, other: 0, steal: 0, total: 0)) { a, b in
            CPUSnapshot(
                own: a.own + b.own, other: a.other + b.other, steal: a.steal + b.steal, total: a.total + b.total)
        }
    }

    /// The processes' CPU in microseconds per item, for an interval that handled `items`.
    func perItem(_ items: Int) -> (own: Double, other: Double) {
        (own * 1e6 / Double(max(1, items)), other * 1e6 / Double(max(1, items)))
    }

    /// Steal as a percentage of all CPU time in the interval.
    var stealPercent: Double { total > 0 ? steal / total * 100 : 0 }

    private static let ticks = 100.0  // USER_HZ: /proc reports clock ticks of 1/100 s

    /// CPU seconds used so far by the process `pid` ("self" for this one).
    static func processSeconds(_ pid: String) -> Double {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return 0 }
        // After "pid (comm) ": state is field 3; utime and stime are fields 14 and 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / ticks
    }

    /// CPU seconds used so far by every process whose name is `name` (PostgreSQL's backends).
    static func seconds(ofProcessesNamed name: String) -> Double {
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return pids.filter { $0.allSatisfy(\.isNumber) }.reduce(0) { sum, pid in
            let comm = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? ""
            return comm.trimmingCharacters(in: .whitespacesAndNewlines) == name ? sum + processSeconds(pid) : sum
        }
    }

    /// The machine's busy CPU seconds so far (all but idle and iowait) and its cores.
    static func machineBusy() -> (busy: Double, cores: Int) {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return (0, 1) }
        let lines = text.split(separator: "\n")
        let cores = lines.filter { $0.hasPrefix("cpu") && !$0.hasPrefix("cpu ") }.count
        guard let line = lines.first, line.hasPrefix("cpu ") else { return (0, max(1, cores)) }
        let values = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard values.count >= 8 else { return (0, max(1, cores)) }
        return ((values.prefix(8).reduce(0, +) - values[3] - values[4]) / ticks, max(1, cores))
    }

    private static func machine() -> (steal: Double, total: Double) {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = text.split(separator: "\n").first, line.hasPrefix("cpu ")
        else { return (0, 0) }
        let values = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard values.count >= 8 else { return (0, 0) }
        // user nice system idle iowait irq softirq steal (guest times are inside user already).
        return (values[7] / ticks, values.prefix(8).reduce(0, +) / ticks)
    }
}

extension BenchHarness {
    /// Logs `count` events made by `make`, alternately into `a` and `b` (the even ones into `a`),
    /// and each store's write times in milliseconds: a baseline in the same run, sharing the
    /// machine's noise.
    static func alternatingWrites(
        _ a: SQLiteLocalStore, _ b: SQLiteLocalStore, count: Int, make: (Int) -> Event
    ) async throws -> (a: [Double], b: [Double]) {
        let clock = ContinuousClock()
        var first: [Double] = []
        var second: [Double] = []
        for i in 0..<count {
            let event = make(i)
            let store = i % 2 == 0 ? a : b
            let t0 = clock.now
            try await store.createEvent(event)
            let elapsed: Duration = clock.now - t0
            let ms = BenchHarness.seconds(elapsed) * 1000
            if i % 2 == 0 { first.append(ms) } else { second.append(ms) }
        }
        return (first, second)
    }
}
