import Foundation
import Testing
import TrendyAPI
import TrendyServer
import TrendyTestSupport

/// Sessions misbehaving during long syncs, with the real binary and server: access tokens that
/// live two seconds, and a session revoked from another device in the middle of a sync.
@Suite(.timeLimit(.minutes(5)))
struct AuthChaosTests {
    let cli = LaunchCLITests()

    static func withServer(_ body: (TrendyServer, RunningServer) async throws -> Void) async throws {
        try await LaunchCLITests.withServer(
            configure: { c in
                // Three seconds, not one or two: on a saturated 2-core runner a request could queue
                // for seconds, so a freshly refreshed token sometimes expired before the server read
                // the retry (one second: once in ~10 full runs; two: twice in a row in full runs
                // at a load average of 14). The push still outlives several tokens.
                c.accessTokenLifetime = .seconds(3)
                c.refreshReuseInterval = .seconds(0)
                c.apiRateLimit = RateLimit(capacity: 100_000, refillPerSecond: 100_000)
                c.authRateLimit = RateLimit(capacity: 10_000, refillPerSecond: 10_000)
            }, body)
    }

    func trendy(_ args: [String], _ dir: TemporaryDirectory, _ api: String, stdin: String? = nil) async throws
        -> TrendyProcess.Result
    {
        try await cli.trendy(args, dir, api: api, stdin: stdin)
    }

    func importEvents(_ n: Int, _ dir: TemporaryDirectory, _ api: String) async throws {
        var text = "type,timestamp\n"
        let base = Date(timeIntervalSince1970: 1_750_000_000)
        for i in 0..<n {
            text += "Run,\(ISO8601DateFormatter().string(from: base.addingTimeInterval(Double(i) * 60)))\n"
        }
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        let file = dir.url.appendingPathComponent("runs.csv")
        try text.write(to: file, atomically: true, encoding: .utf8)
        #expect(try await trendy(["import", file.path], dir, api).status == 0)
    }

    func serverCount(_ email: String, _ api: String) async throws -> Int {
        try await cli.serverEvents(email, password: "chaos-pass-1", api: api).count
    }

    @Test func shortLivedTokensDuringALongSyncAreRefreshedAndNothingIsSentTwice() async throws {
        try await Self.withServer { server, running in
            let api = running.baseURL.absoluteString
            let dir = TemporaryDirectory("trendy-it", create: false)
            let signup = try await trendy(
                ["signup", "--email", "short@example.com", "--password-stdin"], dir, api, stdin: "chaos-pass-1\n")
            #expect(signup.status == 0, "\(signup.stderr)")
            try await importEvents(15_000, dir, api)
            var faults = FaultConfiguration()
            faults.latencyMilliseconds = 150  // 30 batches of 500 × 150 ms ≈ 4.5 s: tokens expire during the push
            server.faults.update(faults)
            let sync = try await trendy(["sync", "--json"], dir, api)
            #expect(sync.status == 0, "\(sync.stdout) \(sync.stderr)")
            server.faults.update(FaultConfiguration())
            #expect(cli.json(try await trendy(["status", "--json"], dir, api))["pending"] as? Int == 0)
            #expect(try await serverCount("short@example.com", api) == 15_000)
        }
    }

    @Test func aSessionRevokedMidSyncSignsOutKeepsLocalDataAndResumesAfterSignIn() async throws {
        try await Self.withServer { server, running in
            let api = running.baseURL.absoluteString
            let dir = TemporaryDirectory("trendy-it", create: false)
            let signup = try await trendy(
                ["signup", "--email", "revoked@example.com", "--password-stdin"], dir, api, stdin: "chaos-pass-1\n")
            #expect(signup.status == 0, "\(signup.stderr)")
            try await importEvents(20_000, dir, api)
            var faults = FaultConfiguration()
            faults.latencyMilliseconds = 150  // 40 batches of 500 ≈ 6 s: room for another device to sign in and out
            server.faults.update(faults)
            async let longSync = trendy(["sync"], dir, api)
            // Mid-sync: once the server holds some of the events (a signal, not a guess at how
            // long the binary takes to start on a busy machine).
            let user = try #require(try await server.store.user(email: "revoked@example.com"))
            // Up to a minute: on a loaded machine (the whole suite on two cores) 30 s ran out once.
            let started = try await eventually(attempts: 6_000, every: .milliseconds(10)) {
                try await server.store.syncSummary(userId: user.id).eventCount > 0
            }
            #expect(started, "the sync never reached the server")
            // Another device signs every session of the account out.
            let other = TemporaryDirectory("trendy-it", create: false)
            #expect(
                try await trendy(
                    ["login", "--email", "revoked@example.com", "--password-stdin"], other, api,
                    stdin: "chaos-pass-1\n"
                ).status == 0)
            #expect(try await trendy(["logout", "--scope", "global"], other, api).status == 0)
            let interrupted = try await longSync
            server.faults.update(FaultConfiguration())
            #expect(interrupted.status != 0, "the sync finished before the revocation took effect")

            // Under a loaded machine the interrupted pass can end on a transient failure (the
            // refresh itself timing out) before it learns of the revocation; the session is then
            // rightly kept, and the next pass learns it.
            if try await trendy(["whoami", "--offline"], dir, api).status == 0 {
                #expect(try await trendy(["sync"], dir, api).status != 0)
            }
            // Signed out here, with every local event kept and the unsent ones still queued.
            let who = try await trendy(["whoami", "--offline"], dir, api)
            #expect(
                who.status == 77,
                "\(who.stdout) — the interrupted sync said: \(interrupted.stdout) \(interrupted.stderr)")
            let list = try await trendy(["events", "list", "--limit", "100000", "--json"], dir, api)
            #expect(((try? JSONSerialization.jsonObject(with: Data(list.stdout.utf8))) as? [Any])?.count == 20_000)
            let pending = cli.json(try await trendy(["status", "--json"], dir, api))["pending"] as? Int ?? 0
            #expect(pending > 0)

            // Signing in again resumes: everything reaches the server once.
            let login = try await trendy(
                ["login", "--email", "revoked@example.com", "--password-stdin"], dir, api, stdin: "chaos-pass-1\n")
            #expect(login.status == 0, "\(login.stderr)")
            #expect(try await trendy(["sync"], dir, api).status == 0)
            #expect(cli.json(try await trendy(["status", "--json"], dir, api))["pending"] as? Int == 0)
            #expect(try await serverCount("revoked@example.com", api) == 20_000)
        }
    }
}
