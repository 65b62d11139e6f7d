import Foundation
import TrendyModels

/// Peak memory of the real program: `trendy import` of a 1,000,000-row CSV, then `trendy sync`
/// of everything to the dev server running as a separate process. The figure is the largest
/// resident set of the two child processes (`getrusage(RUSAGE_CHILDREN)`), i.e. what a person's
/// machine would see.
enum MemoryBenchmarks {
    static func run(smoke: Bool, size: Int?) async throws -> [BenchResult] {
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let trendy = here.appendingPathComponent("trendy")
        guard FileManager.default.isExecutableFile(atPath: trendy.path), let server = SyncBenchmarks.serverBinary()
        else {
            print("memory: skipped — build the trendy and trendy-server products next to trendy-bench first")
            return []
        }
        let rows = smoke ? 2_000 : (size ?? 1_000_000)
        let dir = BenchHarness.temporaryDirectory("memory")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (process, url) = try SyncBenchmarks.spawnServer(server, db: dir.appendingPathComponent("server.sqlite"))
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let data = dir.appendingPathComponent("data")
        let common = ["--data-dir", data.path, "--api-url", url.absoluteString]
        _ = try child(
            trendy, ["signup", "--email", "memory@example.com", "--password-stdin"] + common,
            stdin: "memory-password-1\n")

        // A CSV of `rows` events over two types, one a minute.
        let csv = dir.appendingPathComponent("events.csv")
        _ = FileManager.default.createFile(atPath: csv.path, contents: nil)
        let handle = try FileHandle(forWritingTo: csv)
        var text = "type,timestamp,notes\n"
        let start = Date(timeIntervalSince1970: 1_500_000_000)
        for i in 0..<rows {
            let t = ISO8601.format(start.addingTimeInterval(Double(i) * 60))
            text += "\(i % 2 == 0 ? "Walk" : "Coffee"),\(t),row \(i)\n"
            if text.utf8.count > 1 << 20 {
                handle.write(Data(text.utf8))
                text = ""
            }
        }
        handle.write(Data(text.utf8))
        try handle.close()

        let clock = ContinuousClock()
        let t0 = clock.now
        let imported = try child(trendy, ["import", csv.path] + common)
        let importSeconds = BenchHarness.seconds(clock.now - t0)
        let importRSS = childrenPeakKilobytes()
        let t1 = clock.now
        let synced = try child(trendy, ["sync"] + common)
        let syncSeconds = BenchHarness.seconds(clock.now - t1)
        let peakMB = Double(childrenPeakKilobytes()) / 1024
        guard imported == 0, synced == 0 else {
            print("memory: import exited \(imported), sync exited \(synced)")
            return []
        }
        return [
            BenchResult(
                suite: "memory",
                name: String(
                    format: "peak_rss_import_then_sync_%d_events (import %.0f s, sync %.0f s, import alone %.0f MB)",
                    rows, importSeconds, syncSeconds, Double(importRSS) / 1024),
                value: peakMB, unit: "MB", baseline: nil, ratio: nil, target: "≤ 150 MB", met: peakMB <= 150)
        ]
    }

    /// Runs `binary` to completion with output discarded; returns its exit status.
    static func child(_ binary: URL, _ arguments: [String], stdin: String? = nil) throws -> Int32 {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let input = Pipe()
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// The largest resident set of any child waited for so far, in KB.
    static func childrenPeakKilobytes() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage)
        return Int(usage.ru_maxrss)
    }
}
