import Foundation
import Testing
import TrendyAPITesting
import TrendyServer
import TrendyTestSupport

/// Issue 19, case 1: the real binary says "offline" at once when the server refuses or has no
/// route, and within the budget when it accepts and never answers; it says why in words, exits
/// 69, prints one JSON document, and loses nothing.
@Suite(.timeLimit(.minutes(5)))
struct OfflineCLITests {
    let cli = SyncCLITests()

    /// A signed-in install with one pending event, whose server is then stopped (its port refuses).
    func installWithAPendingEvent(_ dir: TemporaryDirectory) async throws -> String {
        var deadURL = ""
        try await AuthCLITests.withServer { server in
            try await cli.signIn("signup", "off@example.com", dir, server)
            #expect(try await cli.trendy(["types", "add", "Tea"], dir, server).status == 0)
            #expect(try await cli.trendy(["sync"], dir, server).status == 0)
            #expect(try await cli.trendy(["log", "Tea"], dir, server).status == 0)
            deadURL = server.baseURL.absoluteString
        }
        return deadURL
    }

    func timed(_ args: [String], _ dir: TemporaryDirectory) async throws -> (TrendyProcess.Result, Duration) {
        let started = ContinuousClock.now
        let r = try await TrendyProcess.run(args + ["--data-dir", dir.path])
        return (r, ContinuousClock.now - started)
    }

    @Test func aRefusedServerIsOfflineAtOnceWithItsReason() async throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        let url = try await installWithAPendingEvent(dir)
        let host = url.replacingOccurrences(of: "http://", with: "")
        // A long budget: the answer must come from the refusal, not from waiting it out.
        let (sync, took) = try await timed(["sync", "--api-url", url, "--server-timeout", "20"], dir)
        #expect(sync.status == 69, "\(sync.stderr)")
        #expect(took < .seconds(5))
        #expect(sync.stderr.contains("offline: The server at \(host) refused the connection"))
        #expect(sync.stderr.contains("Your changes stay queued"))
        #expect(!sync.stderr.contains("errno"))
        // Progress starts from what the install knows, not "Not synced yet".
        #expect(!sync.stderr.contains("Not synced yet"))

        let status = try await cli.trendy(["status", "--api-url", url], dir, nil)
        #expect(status.stdout.contains("Last error: The server at \(host) refused the connection"))
        #expect(status.stdout.contains("Pending: 1"))

        // One JSON document: the error and the run together.
        let json = try await cli.trendy(["sync", "--json", "--api-url", url], dir, nil)
        #expect(json.status == 69)
        let document = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect((document?["error"] as? [String: Any])?["code"] as? String == "offline")
        #expect((document?["result"] as? [String: Any])?["outcome"] as? String == "offline")

        // The launch shows "Offline" and the pending event, and does not wait for the network.
        let (launch, launchTook) = try await timed(["launch", "--json", "--api-url", url], dir)
        #expect(launch.status == 0, "\(launch.stderr)")
        #expect(launchTook < .seconds(5))
        let report = try JSONSerialization.jsonObject(with: Data(launch.stdout.utf8)) as? [String: Any]
        #expect((report?["banner"] as? String)?.hasPrefix("Offline") == true)
        #expect(report?["pending"] as? Int == 1)
    }

    @Test func aServerThatNeverAnswersCostsOnlyTheBudget() async throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        _ = try await installWithAPendingEvent(dir)
        let silent = try SilentServer()
        let url = silent.url.absoluteString
        let (sync, took) = try await timed(["sync", "--api-url", url, "--server-timeout", "0.5"], dir)
        #expect(sync.status == 69, "\(sync.stderr)")
        #expect(took >= .milliseconds(500))
        #expect(took < .seconds(8))
        #expect(sync.stderr.contains("The server at 127.0.0.1:\(silent.port) did not answer within 0.5 s"))

        // Commands that need the server ask it first, within the same budget (they used to wait
        // for the 10 s idle timeout): sign-in, sign-up, onboarding reset.
        let (login, loginTook) = try await timed(
            ["login", "--email", "off@example.com", "--password-stdin", "--api-url", url, "--server-timeout", "0.5"],
            dir)
        #expect(login.status == 69, "\(login.stderr)")
        #expect(loginTook < .seconds(8))
        #expect(login.stderr.contains("did not answer within 0.5 s. Nothing was changed."))
        let (reset, resetTook) = try await timed(
            ["onboarding", "reset", "--api-url", url, "--server-timeout", "0.5"], dir)
        #expect(reset.status == 69, "\(reset.stderr)")
        #expect(resetTook < .seconds(8))

        // The session check of `whoami` and a whole launch are bounded by the same budget.
        let (whoami, whoamiTook) = try await timed(
            ["whoami", "--api-url", url], dir, environment: ["TRENDY_SERVER_TIMEOUT": "0.5"])
        #expect(whoami.status == 0, "\(whoami.stderr)")
        #expect(
            whoami.stdout.contains(
                "Not verified with the server (The server at 127.0.0.1:\(silent.port) did not answer"),
            "\(whoami.stdout)")
        #expect(whoamiTook < .seconds(8))
        let (launch, launchTook) = try await timed(
            ["launch", "--json", "--api-url", url], dir, environment: ["TRENDY_SERVER_TIMEOUT": "0.5"])
        #expect(launch.status == 0)
        #expect(launchTook < .seconds(8))
        let report = try JSONSerialization.jsonObject(with: Data(launch.stdout.utf8)) as? [String: Any]
        #expect((report?["banner"] as? String)?.hasPrefix("Offline") == true)

        // Signing out here works at once; the warning does not claim nothing changed.
        let (logout, logoutTook) = try await timed(
            ["logout", "--json", "--api-url", url], dir, environment: ["TRENDY_SERVER_TIMEOUT": "0.5"])
        #expect(logout.status == 0)
        #expect(logoutTook < .seconds(8))
        let signedOut = try JSONSerialization.jsonObject(with: Data(logout.stdout.utf8)) as? [String: Any]
        let warning = signedOut?["warning"] as? String ?? ""
        #expect(warning.hasPrefix("The server was not told (The server at 127.0.0.1:\(silent.port)"), "\(warning)")
        #expect(!warning.contains("Nothing was changed"))
    }

    @Test func aURLThatIsNotTheTrendyAPISaysSo() async throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        try await AuthCLITests.withServer { server in
            try await cli.signIn("signup", "wrong@example.com", dir, server)
            let wrong = server.baseURL.absoluteString + "/not-the-api"
            let sync = try await cli.trendy(["sync", "--api-url", wrong], dir, nil)
            #expect(sync.status == 69, "\(sync.stderr)")
            #expect(sync.stderr.contains("answered the health check with HTTP 404"), "\(sync.stderr)")
            #expect(!sync.stderr.contains("http_404"))
        }
    }

    @Test func anUnroutableServerIsOfflineAtOnce() async throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        _ = try await installWithAPendingEvent(dir)
        let (sync, took) = try await timed(
            ["sync", "--api-url", "http://255.255.255.255:9", "--server-timeout", "20"], dir)
        #expect(sync.status == 69, "\(sync.stderr)")
        #expect(took < .seconds(5))
        #expect(sync.stderr.contains("The server at 255.255.255.255:9"))
    }

    @Test func aBadServerTimeoutIsAUsageError() async throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        for value in ["0", "-1", "abc", "nan", "1000"] {
            let r = try await TrendyProcess.run(
                ["status", "--data-dir", dir.path], environment: ["TRENDY_SERVER_TIMEOUT": value])
            #expect(r.status == 64, "\(value): \(r.stderr)")
            #expect(r.stderr.contains("server timeout"))
        }
    }
}

extension OfflineCLITests {
    func timed(
        _ args: [String], _ dir: TemporaryDirectory, environment: [String: String]
    ) async throws -> (TrendyProcess.Result, Duration) {
        let started = ContinuousClock.now
        let r = try await TrendyProcess.run(args + ["--data-dir", dir.path], environment: environment)
        return (r, ContinuousClock.now - started)
    }
}
