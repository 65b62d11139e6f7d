import Foundation
import Testing
import TrendyApp
import TrendyLogging
import TrendyServer
import TrendyServerTestSupport
import TrendyTestSupport

/// `trendy launch` and `trendy onboarding` as the real binary against the real dev server.
@Suite(.timeLimit(.minutes(5)))
struct LaunchCLITests {
    static func withServer(
        configure: (inout ServerConfiguration) -> Void = { _ in },
        _ body: (TrendyServer, RunningServer) async throws -> Void
    ) async throws {
        try await RunningTestServer.with(.testing(configure)) { test in try await body(test.server, test.running) }
    }

    static let unreachable = "http://127.0.0.1:9"

    func trendy(_ args: [String], _ dir: TemporaryDirectory, api: String?, stdin: String? = nil) async throws
        -> TrendyProcess.Result
    {
        var full = args + ["--data-dir", dir.path]
        if let api { full += ["--api-url", api] }
        return try await TrendyProcess.run(full, stdin: stdin)
    }

    func json(_ r: TrendyProcess.Result) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    func array(_ r: TrendyProcess.Result) -> [[String: Any]] {
        (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]) ?? []
    }

    /// What the server holds for an account, checked the way a user would: a second device signs
    /// in, downloads everything and lists its events.
    func serverEvents(_ email: String, password: String, api: String) async throws -> [[String: Any]] {
        let other = TemporaryDirectory("trendy-it", create: false)
        let login = try await trendy(
            ["login", "--email", email, "--password-stdin"], other, api: api, stdin: password + "\n")
        #expect(login.status == 0, "\(login.stderr)")
        #expect(try await trendy(["sync"], other, api: api).status == 0)
        let list = try await trendy(["events", "list", "--all", "--json"], other, api: api)
        #expect(list.status == 0, "\(list.stderr)")
        return array(list)
    }

    /// Launches with `--json` and returns the frames' routes and the report.
    func launch(_ dir: TemporaryDirectory, api: String?, _ extra: [String] = []) async throws
        -> (routes: [String], frames: [[String: Any]], report: [String: Any])
    {
        let r = try await trendy(["launch", "--json"] + extra, dir, api: api)
        #expect(r.status == 0, "\(r.stderr)")
        let report = json(r)
        let frames = report["frames"] as? [[String: Any]] ?? []
        return (frames.compactMap { $0["route"] as? String }, frames, report)
    }

    /// Signs up and finishes onboarding through the CLI.
    func onboard(_ dir: TemporaryDirectory, _ api: String, email: String) async throws {
        #expect(try await trendy(["onboarding", "next"], dir, api: api).status == 0)
        let signup = try await trendy(
            ["signup", "--email", email, "--password-stdin", "--json"], dir, api: api, stdin: "password-launch-1\n")
        #expect(signup.status == 0, "\(signup.stderr)")
        #expect(json(signup)["onboarding"] as? String == "create_event_type")
        for args in [
            ["--type", "Coffee"], ["--log", "Coffee"], ["--notifications", "allow", "--location", "deny"], [],
        ] {
            let r = try await trendy(["onboarding", "next", "--json"] + args, dir, api: api)
            #expect(r.status == 0, "\(args): \(r.stderr)")
        }
        let status = json(try await trendy(["onboarding", "status", "--json"], dir, api: api))
        #expect(status["completed"] as? Bool == true)
        #expect(status["source"] as? String == "server")
        #expect(
            (status["permissions"] as? [String: String]) == [
                "notifications": "granted", "location": "denied", "health": "skipped",
            ])
        let analytics = (status["analytics"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(analytics == ["onboarding_started", "onboarding_completed"])
        // Refusing location in onboarding is the platform's answer too: geofencing stays off.
        let location = json(try await trendy(["location", "show", "--json"], dir, api: api))
        #expect(location["authorization"] as? String == "denied")
    }

    /// `trendy launch` decides its route before parsing (issue 21): the data directory comes from
    /// the raw arguments by the option's own name, and whatever the launch parser does not take
    /// goes through the whole command tree with its usual messages and exit codes.
    @Test func theLaunchShortcutReadsTheDataDirectoryAndKeepsEveryMessage() async throws {
        #expect(GlobalOptions.dataDirectory(in: ["--data-dir", "/a"]) == "/a")
        #expect(GlobalOptions.dataDirectory(in: ["--no-wait", "--data-dir=/b", "--json"]) == "/b")
        #expect(GlobalOptions.dataDirectory(in: ["--data-dir", "/a", "--data-dir", "/c"]) == "/c")
        #expect(GlobalOptions.dataDirectory(in: ["--", "--data-dir", "/a"]) == nil)
        #expect(GlobalOptions.dataDirectory(in: ["--data-dir"]) == nil)

        let help = try await TrendyProcess.run(["launch", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: trendy launch"))
        let bad = try await TrendyProcess.run(["launch", "--no-such-option"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("Unknown option '--no-such-option'"))
        #expect(bad.stderr.contains("Usage: trendy launch"))
        let badTab = try await TrendyProcess.run(["launch", "--tab", "nowhere"])
        #expect(badTab.status == 64)
        // Both spellings of the data directory launch the same install.
        let dir = TemporaryDirectory("trendy-it", create: false)
        for form in [["--data-dir", dir.path], ["--data-dir=\(dir.path)"]] {
            let r = try await TrendyProcess.run(
                ["launch", "--no-wait", "--json", "--api-url", Self.unreachable] + form)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.contains("onboarding(welcome)"))
        }
    }

    @Test func aFreshInstallShowsWelcomeOnly() async throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        let (routes, frames, report) = try await launch(dir, api: Self.unreachable)
        #expect(routes == ["onboarding(welcome)"])
        #expect((frames.first?["text"] as? String)?.contains("Welcome") == true)
        #expect(report["route_decided_ms"] is Double && report["first_frame_ms"] is Double)
    }

    @Test func aReturningCompletedUserSeesOnlyTheMainScreenAndASignedOutOneOnlyLogin() async throws {
        try await Self.withServer { _, running in
            let api = running.baseURL.absoluteString
            let dir = TemporaryDirectory("trendy-it", create: false)
            try await onboard(dir, api, email: "launch-1@example.com")
            let returning = try await launch(dir, api: api)
            #expect(Set(returning.routes) == ["authenticated"])
            #expect(returning.frames.allSatisfy { $0["screen"] as? String == "dashboard" })
            #expect((returning.frames.last?["banner"] as? String)?.hasPrefix("Up to date") == true)
            // The same with the server unreachable: the cache decides, nothing waits for the network.
            #expect(Set(try await launch(dir, api: Self.unreachable).routes) == ["authenticated"])

            #expect(try await trendy(["logout"], dir, api: api).status == 0)
            #expect(try await launch(dir, api: api).routes == ["login"])
            // Signing in again on this device: the completed account goes straight to the main screen.
            let login = try await trendy(
                ["login", "--email", "launch-1@example.com", "--password-stdin", "--json"], dir, api: api,
                stdin: "password-launch-1\n")
            #expect(json(login)["onboarding"] as? String == "completed")
            #expect(Set(try await launch(dir, api: api).routes) == ["authenticated"])
        }
    }

    /// Issue 19, case 4: a returning user's damaged onboarding cache with the server down used to
    /// show loading for ~13 s and then onboarding step 4 (and queue that step for the server).
    @Test func aDamagedCacheNeverSendsAReturningUserToOnboarding() async throws {
        try await Self.withServer { _, running in
            let api = running.baseURL.absoluteString
            let dir = TemporaryDirectory("trendy-it", create: false)
            try await onboard(dir, api, email: "damaged@example.com")
            let cache = dir.url.appendingPathComponent("onboarding.json")
            try Data("{\"version\": 1, \"state\": {garbage".utf8).write(to: cache)

            // Server down: the main screen at once, no loading frame, and it stays there.
            let started = ContinuousClock.now
            let (routes, _, report) = try await launch(dir, api: Self.unreachable)
            #expect(routes.allSatisfy { $0 == "authenticated" }, "\(routes)")
            #expect(report["final_route"] as? String == "authenticated")
            #expect(ContinuousClock.now - started < .seconds(8))
            // Nothing was queued for the server that would undo the completed onboarding, not even
            // by `onboarding next` offline (it used to rebuild a guessed status and queue it).
            let next = try await trendy(["onboarding", "next"], dir, api: Self.unreachable)
            #expect(next.status == 0, "\(next.stderr)")
            let offline = json(try await trendy(["onboarding", "status", "--json"], dir, api: Self.unreachable))
            #expect(offline["pending_write"] == nil || offline["pending_write"] is NSNull, "\(offline)")
            #expect(offline["completed"] as? Bool == true, "\(offline)")
            #expect((offline["analytics"] as? [Any])?.isEmpty ?? true, "\(offline)")

            // Server up: still the main screen, and the cache is rebuilt from the server.
            let (again, _, _) = try await launch(dir, api: api)
            #expect(again.allSatisfy { $0 == "authenticated" }, "\(again)")
            let repaired = try JSONSerialization.jsonObject(with: Data(contentsOf: cache)) as? [String: Any]
            #expect(repaired?["version"] as? Int == 1)
            let status = json(try await trendy(["onboarding", "status", "--json"], dir, api: Self.unreachable))
            #expect(status["completed"] as? Bool == true, "\(status)")
        }
    }

    @Test func aSecondDeviceWithACompletedAccountSkipsOnboarding() async throws {
        try await Self.withServer { _, running in
            let api = running.baseURL.absoluteString
            try await onboard(TemporaryDirectory("trendy-it", create: false), api, email: "launch-2@example.com")
            let second = TemporaryDirectory("trendy-it", create: false)
            #expect(try await launch(second, api: api).routes == ["onboarding(welcome)"])
            let login = try await trendy(
                ["login", "--email", "launch-2@example.com", "--password-stdin", "--json"], second, api: api,
                stdin: "password-launch-1\n")
            #expect(json(login)["onboarding"] as? String == "completed", "\(login.stderr)")
            let relaunch = try await launch(second, api: api)
            #expect(Set(relaunch.routes) == ["authenticated"])
        }
    }

    @Test func aKilledOnboardingResumesAtItsStepAndTheRulesHold() async throws {
        try await Self.withServer { _, running in
            let api = running.baseURL.absoluteString
            let dir = TemporaryDirectory("trendy-it", create: false)
            #expect(try await trendy(["onboarding", "next"], dir, api: api).status == 0)
            #expect(try await launch(dir, api: api).routes == ["onboarding(auth)"])
            let early = try await trendy(["onboarding", "next"], dir, api: api)
            #expect(early.status == 77)
            #expect(early.stderr.contains("trendy signup"))
            _ = try await trendy(
                ["signup", "--email", "launch-3@example.com", "--password-stdin"], dir, api: api,
                stdin: "password-launch-1\n")
            let noType = try await trendy(["onboarding", "next"], dir, api: api)
            #expect(noType.status == 64)
            #expect(try await trendy(["onboarding", "back"], dir, api: api).status == 1)
            #expect(try await trendy(["onboarding", "skip"], dir, api: api).status == 1)
            #expect(try await trendy(["onboarding", "next", "--type", "Tea"], dir, api: api).status == 0)
            #expect(try await trendy(["onboarding", "next", "--log", "Tea"], dir, api: api).status == 0)
            // The process ends here, mid-onboarding: the next launch resumes at permissions.
            #expect(try await launch(dir, api: api).routes == ["onboarding(permissions)"])
            #expect(try await launch(dir, api: Self.unreachable).routes == ["onboarding(permissions)"])
            let back = try await trendy(["onboarding", "back", "--json"], dir, api: api)
            #expect(json(back)["step"] as? String == "log_first_event")
            _ = try await trendy(["onboarding", "next"], dir, api: api)
            let skipped = json(try await trendy(["onboarding", "skip", "--json"], dir, api: api))
            #expect(skipped["step"] as? String == "finish")
            #expect((skipped["permissions"] as? [String: String])?["location"] == "skipped")
            #expect(try await trendy(["onboarding", "next"], dir, api: api).status == 0)
            #expect(Set(try await launch(dir, api: api).routes) == ["authenticated"])
            // Reset needs the server: offline it fails with 69 and changes nothing here.
            let offlineReset = try await trendy(["onboarding", "reset"], dir, api: Self.unreachable)
            #expect(offlineReset.status == 69)
            #expect(Set(try await launch(dir, api: Self.unreachable).routes) == ["authenticated"])
            let reset = try await trendy(["onboarding", "reset", "--json"], dir, api: api)
            #expect(json(reset)["step"] as? String == "create_event_type")
        }
    }

    @Test func aSlowSessionRestoreNeverShowsLogin() async throws {
        try await Self.withServer { server, running in
            let api = running.baseURL.absoluteString
            let dir = TemporaryDirectory("trendy-it", create: false)
            try await onboard(dir, api, email: "launch-4@example.com")
            var faults = FaultConfiguration()
            faults.latencyMilliseconds = 1_500
            server.faults.update(faults)
            let launch = try await launch(dir, api: api)
            #expect(Set(launch.routes) == ["authenticated"])
            #expect(launch.report["final_route"] as? String == "authenticated")
        }
    }

    @Test func aRejectedSessionGoesToLoginAndKeepsPendingChanges() async throws {
        try await Self.withServer { _, running in
            let api = running.baseURL.absoluteString
            let dir = TemporaryDirectory("trendy-it", create: false)
            try await onboard(dir, api, email: "launch-5@example.com")
            #expect(try await trendy(["sync"], dir, api: api).status == 0)
            #expect(try await trendy(["log", "Coffee", "--note", "keep me"], dir, api: api).status == 0)
            // Another device holding the same session signs out everywhere: the server revokes it.
            let other = TemporaryDirectory("trendy-it", create: false)
            try FileManager.default.createDirectory(at: other.url, withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                at: dir.url.appendingPathComponent("session.json"), to: other.url.appendingPathComponent("session.json")
            )
            #expect(try await trendy(["logout", "--scope", "global"], other, api: api).status == 0)

            let launch = try await launch(dir, api: api)
            // Frames may repeat a route (the banner changes); the route sequence is main screen, then login.
            let sequence = launch.routes.reduce(into: [String]()) { if $0.last != $1 { $0.append($1) } }
            #expect(sequence == ["authenticated", "login"])
            #expect(launch.report["final_route"] as? String == "login")
            let events = try await trendy(["events", "--json"], dir, api: api)
            #expect(events.stdout.contains("keep me"))
            let status = json(try await trendy(["status", "--json"], dir, api: api))
            #expect(status["pending"] as? Int == 1)
        }
    }

    @Test func fiveThousandPendingChangesStillGiveTheMainScreenFirstWithoutTheNetwork() async throws {
        try await Self.withServer { _, running in
            let api = running.baseURL.absoluteString
            let dir = TemporaryDirectory("trendy-it", create: false)
            try await onboard(dir, api, email: "launch-6@example.com")
            #expect(try await trendy(["sync"], dir, api: api).status == 0)
            let csv = dir.url.appendingPathComponent("import.csv")
            var lines = ["type,timestamp,notes"]
            for i in 0..<5_000 {
                lines.append(
                    "Coffee,2026-01-01T" + String(format: "%02d:%02d:%02d", i / 3_600, i / 60 % 60, i % 60) + "Z,n\(i)")
            }
            try lines.joined(separator: "\n").write(to: csv, atomically: true, encoding: .utf8)
            let imported = try await trendy(["import", csv.path], dir, api: Self.unreachable)
            #expect(imported.status == 0, "\(imported.stderr)")

            let offline = try await launch(dir, api: Self.unreachable, ["--no-wait"])
            #expect(offline.routes == ["authenticated"])
            #expect(offline.frames.first?["banner"] as? String == "5,000 pending")
            #expect((offline.frames.first?["text"] as? String)?.contains("Coffee") == true)

            let online = try await launch(dir, api: api)
            #expect(online.frames.first?["banner"] as? String == "5,000 pending")
            #expect(Set(online.routes) == ["authenticated"])
            let banners = online.frames.compactMap { $0["banner"] as? String }
            #expect(banners.contains { $0.hasPrefix("Syncing ") })
            #expect(online.report["pending"] as? Int == 0)
        }
    }
}
