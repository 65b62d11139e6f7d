import Foundation
import TrendyAPITesting
import TrendyLogging
import TrendyServer

/// How fast the real `trendy` says "offline" (issue 19): the wall time of `trendy sync` to its
/// exit (69) and the time from `main` to the launch's first "Offline" frame, with the server
/// refusing, unroutable and hung (accepts, never answers), against the same command with the
/// server up (exit 0, "Up to date"). Cases alternate run by run so noise hits them alike.
enum OfflineBenchmarks {
    struct Case {
        var name: String
        var url: String
        var syncExit: Int32
        var banner: String
        var target: Double?
    }

    static func run(smoke: Bool) async throws -> [BenchResult] {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("trendy")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            print("offline: skipped — build the trendy product next to trendy-bench first")
            return []
        }
        let runs = smoke ? 2 : 11
        let root = BenchHarness.temporaryDirectory("offline")
        defer { try? FileManager.default.removeItem(at: root) }
        let running = try await BenchHarness.startServer(in: root).running
        return try await BenchHarness.ensuring(
            {
                let up = running.baseURL.absoluteString
                let dir = root.appendingPathComponent("install")
                _ = try process(
                    binary,
                    [
                        "signup", "--email", "offline@example.com", "--password-stdin", "--data-dir", dir.path,
                        "--api-url", up,
                    ], stdin: "offline-pass-1\n", expect: 0)
                // Through onboarding to the main screen, then one change waiting.
                for step in [["--type", "Tea"], ["--log", "Tea"], ["--health", "skip"], []] {
                    _ = try process(
                        binary, ["onboarding", "next"] + step + ["--data-dir", dir.path, "--api-url", up], expect: 0)
                }
                _ = try process(binary, ["log", "Tea", "--data-dir", dir.path], expect: 0)
                // A port that was listening and is closed again: it refuses.
                let refusedPort = try { () throws -> Int in try SilentServer().port }()
                let hung = try SilentServer()
                let cases = [
                    Case(name: "up", url: up, syncExit: 0, banner: "Up to date", target: nil),
                    Case(
                        name: "refused", url: "http://127.0.0.1:\(refusedPort)", syncExit: 69, banner: "Offline",
                        target: 0.2),
                    Case(
                        name: "unroutable", url: "http://255.255.255.255:9", syncExit: 69, banner: "Offline",
                        target: 0.2),
                    Case(name: "hung", url: hung.url.absoluteString, syncExit: 69, banner: "Offline", target: 2.5),
                ]
                var sync: [String: [Double]] = [:]
                var frame: [String: [Double]] = [:]
                for _ in 0..<runs {
                    for c in cases {
                        let common = ["--data-dir", dir.path, "--api-url", c.url]
                        sync[c.name, default: []].append(
                            try process(binary, ["sync"] + common, expect: c.syncExit).wall)
                        let launch = try process(binary, ["launch", "--json"] + common, expect: 0)
                        frame[c.name, default: []].append(try firstFrame(launch.stdout, banner: c.banner))
                    }
                }
                withExtendedLifetime(hung) {}
                let syncUp = BenchHarness.median(sync["up"] ?? [])
                let frameUp = BenchHarness.median(frame["up"] ?? [])
                var results: [BenchResult] = []
                for c in cases where c.target != nil {
                    let s = BenchHarness.median(sync[c.name] ?? [])
                    let f = BenchHarness.median(frame[c.name] ?? []) / 1000
                    let target = c.target!
                    results.append(
                        BenchResult(
                            suite: "offline", name: "sync_to_exit_69_\(c.name)", value: s, unit: "s", baseline: syncUp,
                            ratio: s / syncUp, target: "≤ \(target) s (baseline: the same sync with the server up)",
                            met: s <= target))
                    results.append(
                        BenchResult(
                            suite: "offline", name: "launch_to_offline_frame_\(c.name)", value: f, unit: "s",
                            baseline: frameUp / 1000, ratio: f / (frameUp / 1000),
                            target: "≤ \(target) s (baseline: main → the pass's 'Up to date' frame, server up)",
                            met: f <= target))
                }
                return results
            }, cleanup: { await running.stop() })
    }

    struct Run {
        var status: Int32
        var stdout: Data
        var wall: Double
    }

    /// Runs `trendy` once; `wall` is exec → exit in seconds.
    static func process(_ binary: URL, _ arguments: [String], stdin: String? = nil, expect: Int32) throws -> Run {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let out = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        process.standardInput = input
        let start = ContinuousClock.now
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let wall = BenchHarness.seconds(ContinuousClock.now - start)
        guard process.terminationStatus == expect else {
            throw Unexpected(
                description:
                    "trendy \(arguments.prefix(2).joined(separator: " ")) exited \(process.terminationStatus), "
                    + "expected \(expect)")
        }
        return Run(status: process.terminationStatus, stdout: data, wall: wall)
    }

    /// Milliseconds from `main` to the first frame after the launch's pass began ("Connecting…")
    /// whose banner starts with `banner`: the pass's answer, not the banner the last run left.
    static func firstFrame(_ report: Data, banner: String) throws -> Double {
        guard let object = try JSONSerialization.jsonObject(with: report) as? [String: Any],
            let frames = object["frames"] as? [[String: Any]],
            let connecting = frames.firstIndex(where: { ($0["banner"] as? String)?.hasPrefix("Connecting") == true }),
            let frame = frames[connecting...].first(where: { ($0["banner"] as? String)?.hasPrefix(banner) == true }),
            let ms = frame["elapsed_ms"] as? Double
        else { throw Unexpected(description: "the launch showed no '\(banner)' frame") }
        return ms
    }

    struct Unexpected: Error, CustomStringConvertible {
        var description: String
    }
}
