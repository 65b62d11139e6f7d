import Foundation
import TrendyAuth
import TrendyAuthLive
import TrendyLogging

/// The launch-time session read: `FileSessionStore.load()` (open, read, decode, check) against a
/// raw read of the same file's bytes in the same process.
enum AuthBenchmarks {
    static func run(smoke: Bool) -> [BenchResult] {
        let samples = smoke ? 200 : 20_000
        let dir = BenchHarness.temporaryDirectory("auth")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("session.json")
        let store = FileSessionStore(file: file, logger: LogSystem.disabled().logger(.auth))
        let session = AuthSession(
            accessToken: String(repeating: "a", count: 600), refreshToken: String(repeating: "r", count: 43),
            expiresAt: Date().addingTimeInterval(3_600),
            user: AuthUser(id: UUID().uuidString.lowercased(), email: "bench@example.com"))
        try? store.save(session)

        func timeEach(_ body: () -> Void) -> [Double] {
            for _ in 0..<100 { body() }
            var out: [Double] = []
            out.reserveCapacity(samples)
            let clock = ContinuousClock()
            for _ in 0..<samples {
                let t0 = clock.now
                body()
                out.append(BenchHarness.seconds(clock.now - t0) * 1e6)
            }
            return out
        }
        var bytesRead = 0
        let raw = timeEach {
            let fd = open(file.path, O_RDONLY)
            var buffer = [UInt8](repeating: 0, count: 4096)
            bytesRead &+= read(fd, &buffer, buffer.count)
            close(fd)
        }
        var found = 0
        let load = timeEach { if store.load() != nil { found += 1 } }
        precondition(found == load.count + 100, "the session did not load")
        let p50 = BenchHarness.percentile(load, 50)
        let rawP50 = BenchHarness.percentile(raw, 50)
        return [
            BenchResult(
                suite: "auth", name: "session_load_p50", value: p50, unit: "µs", baseline: rawP50, ratio: p50 / rawP50,
                target: "≤ 100 µs, ratio ≤ 3", met: p50 <= 100 && p50 / rawP50 <= 3),
            BenchResult(
                suite: "auth", name: "session_load_p99", value: BenchHarness.percentile(load, 99), unit: "µs",
                baseline: BenchHarness.percentile(raw, 99), ratio: nil, target: "report", met: nil),
        ]
    }
}
