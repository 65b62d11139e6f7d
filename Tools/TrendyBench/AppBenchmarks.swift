import Foundation
import GRDB
import TrendyModels
import TrendyServer
import TrendySync
import TrendySyncLive

#if canImport(Glibc)
    import Glibc
#endif

/// `trendy app` responsiveness through a pseudo-terminal: the time from a keystroke (a tab switch)
/// to the redrawn screen reaching the terminal, while the app is idle and while it pushes 5,000
/// events to a real server, and idle on an install of a million events (`--size`). Each key waits
/// for its redraw before the next is typed.
enum AppBenchmarks {
    static func run(smoke: Bool, size: Int?) async throws -> [BenchResult] {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("trendy")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            print("app: skipped — build the trendy product next to trendy-bench first")
            return []
        }
        let keys = smoke ? 40 : 300
        let pending = smoke ? 500 : 5_000
        let big = size ?? (smoke ? 2_000 : 1_000_000)
        let root = BenchHarness.temporaryDirectory("app")
        defer { try? FileManager.default.removeItem(at: root) }
        let (server, running) = try await BenchHarness.startServer(in: root)
        _ = server
        let url = running.baseURL.absoluteString
        return try await BenchHarness.ensuring(
            {
                let idleDir = root.appendingPathComponent("idle")
                try await prepare(binary, idleDir, api: url, pending: 0)
                let idle = try await measure(binary, idleDir, api: url, keys: keys, untilSynced: false)
                let busyDir = root.appendingPathComponent("busy")
                try await prepare(binary, busyDir, api: url, pending: pending)
                let busy = try await measure(binary, busyDir, api: url, keys: keys, untilSynced: true)
                let bigDir = root.appendingPathComponent("big")
                try await prepare(binary, bigDir, api: url, pending: 0, local: big)
                let large = try await measure(binary, bigDir, api: url, keys: keys, untilSynced: false)
                func results(_ name: String, _ samples: [Double], baseline: [Double]?) -> [BenchResult] {
                    let p99 = BenchHarness.percentile(samples, 99)
                    let max = samples.max() ?? 0
                    let base = baseline.map { BenchHarness.percentile($0, 99) }
                    return [
                        BenchResult(
                            suite: "app", name: "\(name)_keystroke_to_redraw_p50",
                            value: BenchHarness.percentile(samples, 50), unit: "ms", target: "report", met: nil),
                        BenchResult(
                            suite: "app", name: "\(name)_keystroke_to_redraw_p99", value: p99, unit: "ms",
                            baseline: base, ratio: base.map { p99 / $0 }, target: "≤ 16 ms (\(samples.count) keys)",
                            met: p99 <= 16),
                        BenchResult(
                            suite: "app", name: "\(name)_keystroke_to_redraw_max", value: max, unit: "ms",
                            target: "≤ 50 ms", met: max <= 50),
                    ]
                }
                return results("idle", idle.samples, baseline: nil)
                    + results("during_\(pending)_event_sync", busy.samples, baseline: idle.samples)
                    + results("idle_on_\(big)_events", large.samples, baseline: idle.samples)
                    + [
                        BenchResult(
                            suite: "app", name: "keys_typed_while_syncing", value: Double(busy.duringSync),
                            unit: "keys",
                            target: "report (keys answered before the sync finished)", met: nil)
                    ]
            }, cleanup: { await running.stop() })
    }

    /// An onboarded account on the server with `pending` local events not yet pushed, or with
    /// `local` events stored here as synced (a big install; the server need not hold them to
    /// measure the screens).
    static func prepare(_ binary: URL, _ dir: URL, api: String, pending: Int, local: Int = 0) async throws {
        let common = ["--data-dir", dir.path, "--api-url", api]
        let email = "app-bench-\(UUID().uuidString.prefix(8))@example.com"
        for (args, stdin) in [
            (["signup", "--email", email, "--password-stdin"], "password-1\n"),
            (["onboarding", "next", "--type", "Coffee"], nil), (["onboarding", "next", "--log", "Coffee"], nil),
            (["onboarding", "skip"], nil), (["onboarding", "next"], nil), (["sync"], nil),
        ] as [([String], String?)] {
            try await run(binary, args + common, stdin: stdin)
        }
        guard pending > 0 || local > 0 else { return }
        let (store, pool) = try SyncBenchmarks.makeStore(dir, name: "trendy.sqlite")
        guard let type = try await store.eventType(named: "Coffee")?.value else { return }
        try await SyncBenchmarks.fill(
            pool, type: type.id, events: max(pending, local), pending: pending, ids: UUIDv7Generator())
        try pool.close()
    }

    static func run(_ binary: URL, _ arguments: [String], stdin: String?) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread.detachNewThread {
                let process = Process()
                process.executableURL = binary
                process.arguments = arguments
                let input = Pipe()
                process.standardInput = input
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                do {
                    try process.run()
                    if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
                    try input.fileHandleForWriting.close()
                    process.waitUntilExit()
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    struct Measurement {
        var samples: [Double]
        var duringSync: Int
    }

    /// Starts `trendy app` on a pseudo-terminal and types `keys` tab switches, timing each to its
    /// redraw; with `untilSynced`, keeps typing until the banner says the sync finished (at most
    /// `keys` keys either way).
    static func measure(_ binary: URL, _ dir: URL, api: String, keys: Int, untilSynced: Bool) async throws
        -> Measurement
    {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                do {
                    continuation.resume(returning: try measureBlocking(binary, dir, api: api, keys: keys, untilSynced))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func measureBlocking(_ binary: URL, _ dir: URL, api: String, keys: Int, _ untilSynced: Bool) throws
        -> Measurement
    {
        var (master, slave): (Int32, Int32) = (0, 0)
        var size = winsize(ws_row: 40, ws_col: 100, ws_xpixel: 0, ws_ypixel: 0)
        guard openpty(&master, &slave, nil, nil, &size) == 0 else { throw Failure(description: "no pseudo-terminal") }
        defer { close(master) }
        let process = Process()
        process.executableURL = binary
        process.arguments = ["app", "--data-dir", dir.path, "--api-url", api, "--sync-interval", "0"]
        let tty = FileHandle(fileDescriptor: slave, closeOnDealloc: true)
        process.standardInput = tty
        process.standardOutput = tty
        process.standardError = FileHandle.nullDevice
        try process.run()
        try tty.close()
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        var seen = ""
        var buffer = [UInt8](repeating: 0, count: 65_536)
        /// Reads until `marker` appears in what arrives after `from`, or 5 s pass.
        func readUntil(_ marker: String, from: String.Index? = nil) -> Bool {
            let deadline = ContinuousClock.now + .seconds(5)
            var start = from ?? seen.endIndex
            while ContinuousClock.now < deadline {
                if seen[start...].contains(marker) { return true }
                var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 50) > 0 else { continue }
                let n = read(master, &buffer, buffer.count)
                guard n > 0 else { return false }
                let count = seen.count
                seen += String(decoding: buffer[0..<n], as: UTF8.self)
                if from == nil, count == 0 { start = seen.startIndex }
            }
            return seen[start...].contains(marker)
        }
        guard readUntil("Dashboard", from: seen.startIndex) else {
            throw Failure(description: "the app drew no dashboard: \(seen.suffix(300))")
        }
        var samples: [Double] = []
        var duringSync = 0
        var tab = 1
        for _ in 0..<keys {
            tab = tab == 1 ? 2 : 1
            let marker = tab == 2 ? "[2 Events]" : "[1 Dashboard]"
            let mark = seen.endIndex
            let start = ContinuousClock.now
            _ = write(master, tab == 2 ? "2" : "1", 1)
            guard readUntil(marker, from: mark) else { throw Failure(description: "no redraw for tab \(tab)") }
            samples.append(BenchHarness.seconds(ContinuousClock.now - start) * 1_000)
            // The banner as last drawn (the first frames may still show the previous sync's).
            let synced =
                seen.range(of: "⟳ ", options: .backwards).map { seen[$0.upperBound...].hasPrefix("Up to date") }
                ?? false
            if untilSynced, !synced { duringSync += 1 }
            if untilSynced, synced, duringSync > 0 { break }
            usleep(5_000)
        }
        _ = write(master, "q", 1)
        return Measurement(samples: samples, duringSync: duringSync)
    }
}
