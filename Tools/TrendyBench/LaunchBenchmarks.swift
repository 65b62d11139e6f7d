import Foundation
import TrendyAPI
import TrendyAuth
import TrendyAuthLive
import TrendyLogging
import TrendyModels
import TrendyOnboarding
import TrendyOnboardingLive
import TrendySync
import TrendySyncLive

/// Cold launches of the real `trendy` binary (`trendy launch --json --no-wait`, network
/// unreachable) on a returning user's install: the time from `main` to the route decision and to
/// the first frame, for an empty database and a big one with a tenth of it pending.
enum LaunchBenchmarks {
    static func run(smoke: Bool, size: Int?) async throws -> [BenchResult] {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("trendy")
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            print("launch: skipped — build the trendy product next to trendy-bench first")
            return []
        }
        let total = smoke ? 10_000 : (size ?? 1_000_000)
        let pending = smoke ? 1_000 : min(100_000, total)
        let runs = smoke ? 3 : 21
        let root = BenchHarness.temporaryDirectory("launch")
        defer { try? FileManager.default.removeItem(at: root) }
        let empty = try await install(root.appendingPathComponent("empty"), events: 0, pending: 0)
        let big = try await install(root.appendingPathComponent("big"), events: total, pending: pending)

        // Alternate the two installs so machine noise hits both alike.
        var samples: [String: [Sample]] = [:]
        for _ in 0..<runs {
            for (name, dir) in [("empty", empty), ("big", big)] {
                samples[name, default: []].append(try launch(binary, dir))
            }
        }
        func median(_ name: String, _ key: (Sample) -> Double) -> Double {
            BenchHarness.median(samples[name, default: []].map(key))
        }
        let decideEmpty = median("empty") { $0.route - $0.command }
        let decideBig = median("big") { $0.route - $0.command }
        let routeEmpty = median("empty") { $0.route }
        let routeBig = median("big") { $0.route }
        let frameEmpty = median("empty") { $0.frame }
        let frameBig = median("big") { $0.frame }
        let wallEmpty = median("empty") { $0.wall }
        let wallBig = median("big") { $0.wall }
        return [
            BenchResult(
                suite: "launch", name: "route_decision_\(total)_events", value: decideBig, unit: "ms",
                baseline: decideEmpty, ratio: decideBig / decideEmpty,
                target: "≤ 1 ms, ratio vs empty ≤ 1.1 (command start → route)",
                met: decideBig <= 1 && decideBig / decideEmpty <= 1.1),
            BenchResult(
                suite: "launch", name: "main_to_route_decided_\(total)_events", value: routeBig, unit: "ms",
                baseline: routeEmpty, ratio: routeBig / routeEmpty,
                target: "≤ 2 ms (decided before argument parsing)", met: routeBig <= 2),
            BenchResult(
                suite: "launch", name: "main_to_first_frame_\(pending)_pending", value: frameBig, unit: "ms",
                baseline: frameEmpty, ratio: frameBig / frameEmpty, target: "≤ 50 ms", met: frameBig <= 50),
            BenchResult(
                suite: "launch", name: "process_wall_no_wait_\(total)_events", value: wallBig, unit: "ms",
                baseline: wallEmpty, ratio: wallBig / wallEmpty, target: "report (exec → exit)", met: nil),
        ]
    }

    /// A returning, onboarded user's install with `events` events, the last `pending` unsynced.
    static func install(_ dir: URL, events: Int, pending: Int) async throws -> URL {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let logs = LogSystem.disabled()
        let user = AuthUser(id: "00000000-0000-4000-8000-000000000001", email: "bench@example.com")
        try FileSessionStore(file: dir.appendingPathComponent("session.json"), logger: logs.logger(.auth)).save(
            AuthSession(
                accessToken: "bench", refreshToken: "bench", expiresAt: Date().addingTimeInterval(86_400), user: user))
        var status = OnboardingStatus.initial
        status.completed = true
        status.currentStep = .finish
        var state = OnboardingCacheState.empty
        state.deviceSawCompletedUser = true
        state.users[user.id] = OnboardingUserRecord(status: status)
        try FileOnboardingCache(file: dir.appendingPathComponent("onboarding.json"), logger: logs.logger(.onboarding))
            .save(state)
        let (store, pool) = try SyncBenchmarks.makeStore(dir, name: "trendy.sqlite")
        let type = EventType(id: UUIDv7Generator().next(), name: "Coffee")
        try await store.createEventType(type)
        if events > 0 {
            try await SyncBenchmarks.fill(pool, type: type.id, events: events, pending: pending, ids: UUIDv7Generator())
        }
        try await store.claim(for: user.id)
        return dir
    }

    /// One cold launch: the figures the program reports, and the wall time around the process.
    struct Sample {
        var command: Double
        var route: Double
        var frame: Double
        var wall: Double
    }

    static func launch(_ binary: URL, _ dir: URL) throws -> Sample {
        let process = Process()
        process.executableURL = binary
        process.arguments = [
            "launch", "--json", "--no-wait", "--data-dir", dir.path, "--api-url", "http://127.0.0.1:9",
        ]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        let start = ContinuousClock.now
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let wall = BenchHarness.seconds(ContinuousClock.now - start) * 1_000
        guard let report = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let command = report["command_started_ms"] as? Double, let route = report["route_decided_ms"] as? Double,
            let frame = report["first_frame_ms"] as? Double
        else { throw LaunchFailure(output: String(decoding: data, as: UTF8.self)) }
        return Sample(command: command, route: route, frame: frame, wall: wall)
    }

    struct LaunchFailure: Error, CustomStringConvertible {
        let output: String
        var description: String { "trendy launch printed no report: \(output.prefix(500))" }
    }
}
