import Foundation
import Testing
import TrendyAPITesting
import TrendyTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// `trendy app` as a person uses it: the real binary on the embedded backend, driven by keys on
/// its input (a pipe, or a pseudo-terminal) and by signals, judged by what it draws and logs.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct AppProcessTests {
    /// An install with an onboarded account, one type and one event, set up with the CLI.
    static func onboarded(
        _ dir: TemporaryDirectory, email: String = "app-\(UUID().uuidString.prefix(6))@example.com"
    ) async throws {
        let d = ["--data-dir", dir.path]
        for (args, stdin) in [
            (
                ["signup", "--email", email, "--password-stdin"],
                "password-1\n"
            ),
            (["onboarding", "next", "--type", "Coffee"], nil), (["onboarding", "next", "--log", "Coffee"], nil),
            (["onboarding", "skip"], nil), (["onboarding", "next"], nil),
        ] as [([String], String?)] {
            let r = try await TrendyProcess.run(args + d, stdin: stdin)
            #expect(r.status == 0, "\(args): \(r.stderr)")
        }
    }

    /// An onboarded install and `trendy app` running on it, showing the dashboard (a returning
    /// user's first screen).
    static func onboardedApp(email: String = "app-\(UUID().uuidString.prefix(6).lowercased())@example.com")
        async throws -> (TemporaryDirectory, RunningApp)
    {
        let dir = TemporaryDirectory("trendy-app", create: false)
        try await onboarded(dir, email: email)
        let app = try RunningApp(["--data-dir", dir.path, "--sync-interval", "0"])
        #expect(await app.waitForScreen("dashboard"), "a returning user's first screen is the dashboard")
        return (dir, app)
    }

    /// The app's log lines so far.
    static func logs(_ dir: TemporaryDirectory) -> String {
        let logs = dir.url.appendingPathComponent("logs")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: logs.path)) ?? []
        return files.sorted().compactMap {
            try? String(contentsOfFile: logs.appendingPathComponent($0).path, encoding: .utf8)
        }
        .joined()
    }

    /// A fresh install's app, signed up inside it and taken to the permissions step.
    static func signedUpToPermissions(_ dir: TemporaryDirectory) async throws -> RunningApp {
        let app = try RunningApp(["--data-dir", dir.path, "--sync-interval", "0"])
        #expect(await app.waitForScreen("onboarding.welcome"))
        app.type("<enter>")
        #expect(await app.waitForScreen("onboarding.auth"))
        app.type("u")
        app.type("fresh-\(UUID().uuidString.prefix(6))@example.com<enter>password-1<enter>")
        #expect(await app.waitForScreen("onboarding.create_event_type"), "signing up moved past the account step")
        app.type("<enter>Coffee<enter>")
        #expect(await app.waitForScreen("onboarding.log_first_event"))
        app.type("<enter>1")
        #expect(await app.waitForScreen("onboarding.permissions"))
        return app
    }

    @Test func aFreshInstallGoesThroughOnboardingInsideTheApp() async throws {
        let dir = TemporaryDirectory("trendy-app", create: false)
        let app = try await Self.signedUpToPermissions(dir)
        app.type("s")
        #expect(await app.waitForScreen("onboarding.finish"))
        app.type("<enter>")
        #expect(await app.waitForScreen("dashboard"))
        #expect(app.text.contains("Today: 1 event(s) · 1 type(s)"))
        app.type("q")
        #expect(await app.exitStatus() == 0)
    }

    @Test func aReturningUserLogsAnEventSeesItAndItSyncsShortlyAfter() async throws {
        let (dir, app) = try await AppProcessTests.onboardedApp()
        let before = RunningApp.screens(app.text).count
        app.type("l")
        #expect(await app.waitForScreen("dashboard.pick", after: before))
        app.type("1")
        #expect(await app.waitFor { $0.contains("Logged Coffee.") && $0.contains("Today: 2 event(s)") })
        // The local write starts a sync half a second later, while the app runs: nothing is left
        // to send, and the banner says so.
        let pushed = try await eventually {
            try await TrendyProcess.run(["status", "--json", "--data-dir", dir.path]).stdout.contains("\"pending\" : 0")
        }
        #expect(pushed, "the event was pushed by the app's own sync")
        #expect(await app.waitFor(20) { $0.components(separatedBy: "── frame").last?.contains("Up to date") == true })
        app.type("2")
        #expect(await app.waitForScreen("events", after: before))
        let rows = (app.text.components(separatedBy: "── frame").last ?? "").split(separator: "\n").filter {
            $0.hasSuffix("  Coffee")
        }
        #expect(rows.count == 2, "both events on the events page")
        app.type("3")
        #expect(await app.waitForScreen("calendar", after: before))
        app.type("4")
        #expect(await app.waitForScreen("analytics", after: before))
        app.type("q")
        #expect(await app.exitStatus() == 0)
    }

    @Test func anEventLoggedByAnotherProcessShowsInTheRunningApp() async throws {
        let (dir, app) = try await AppProcessTests.onboardedApp()
        let log = try await TrendyProcess.run([
            "log", "Coffee", "--note", "from the other terminal", "--data-dir", dir.path,
        ])
        #expect(log.status == 0)
        #expect(await app.waitFor(10) { $0.contains("from the other terminal") && $0.contains("Today: 2 event(s)") })
        app.type("q")
        #expect(await app.exitStatus() == 0)
    }

    @Test func ctrlZSuspendsAfterTheBackgroundHooksAndFgComesBack() async throws {
        let (dir, app) = try await AppProcessTests.onboardedApp()
        app.send(SIGTSTP)
        // Suspended for real, and the background hooks ran first: the log line is on disk while
        // the process is stopped (logs flushed on background).
        #expect(await app.waitFor { _ in app.state == "T" })
        #expect(Self.logs(dir).contains(#""phase":"background","reason":"SIGTSTP""#))
        let checksBefore = Self.logs(dir).components(separatedBy: "GET /auth/v1/user").count
        app.send(SIGCONT)
        #expect(await app.waitFor { _ in app.state != "T" })
        app.type("2")
        #expect(await app.waitForScreen("events"), "keys work again after fg")
        app.send(SIGTERM)
        #expect(await app.exitStatus() == 0, "SIGTERM is a clean exit")
        let logs = Self.logs(dir)
        #expect(logs.contains(#""message":"Scene phase","phase":"foreground""#), "the foreground hooks ran")
        #expect(logs.contains(#""phase":"background","reason":"exit""#))
        #expect(logs.contains(#""message":"App exited""#))
        #expect(
            logs.components(separatedBy: "GET /auth/v1/user").count > checksBefore,
            "back in the foreground, the session was validated with the server")
    }

    /// An onboarded install and `trendy app` on it showing the dashboard, its server one that
    /// never answers (passes wait for the whole budget, 60 s).
    static func appOnASilentServer() async throws -> (TemporaryDirectory, SilentServer, RunningApp) {
        let dir = TemporaryDirectory("trendy-app", create: false)
        try await onboarded(dir)
        let silent = try SilentServer()
        let app = try RunningApp([
            "--data-dir", dir.path, "--sync-interval", "0", "--api-url", silent.url.absoluteString,
            "--server-timeout", "60",
        ])
        #expect(await app.waitForScreen("dashboard"))
        return (dir, silent, app)
    }

    /// The foreground hooks after `fg` (a session check and a pass) used to run inside the key
    /// loop: against a server that never answers, keys waited for the whole network budget.
    @Test func afterFgKeysWorkWhileTheForegroundPassWaitsForAHungServer() async throws {
        let (dir, silent, app) = try await Self.appOnASilentServer()
        defer { withExtendedLifetime((dir, silent)) {} }
        app.send(SIGTSTP)
        #expect(await app.waitFor { _ in app.state == "T" })
        app.send(SIGCONT)
        #expect(await app.waitFor { _ in app.state != "T" })
        app.type("2")
        #expect(await app.waitForScreen("events", seconds: 20), "keys work while the pass waits (budget 60 s)")
        app.send(SIGKILL)
        _ = await app.exitStatus()
    }

    /// Each ^Z is one suspend, however busy the process is (an outsider's attack): the app stopped
    /// itself by raising SIGTSTP at the process with the default action and then put its handler
    /// back; the signal could land on another thread after that, where the handler caught it
    /// again — one ^Z logged "background" up to 170 times, queued a pass for each, and the app
    /// stopped itself again after `fg`. Cycles of ^Z and `fg` with the foreground hooks running
    /// (their pass waits for a server that never answers), each ^Z sent soon after `fg`.
    @Test func eachCtrlZIsOneSuspendWhileTheForegroundHooksRun() async throws {
        let (dir, silent, app) = try await Self.appOnASilentServer()
        defer { withExtendedLifetime((dir, silent)) {} }
        let cycles = 8
        for cycle in 0..<cycles {
            app.send(SIGTSTP)
            #expect(await app.waitFor(10) { _ in app.state == "T" }, "cycle \(cycle): stopped")
            app.send(SIGCONT)
            #expect(await app.waitFor(10) { _ in app.state != "T" }, "cycle \(cycle): continued")
            try await Task.sleep(for: .milliseconds(cycle % 2 == 0 ? 20 : 150))
        }
        // Still running a while after the last `fg`: no suspend was left over.
        try await Task.sleep(for: .milliseconds(700))
        #expect(app.state != "T", "the app did not stop itself after fg")
        app.type("2")
        #expect(await app.waitForScreen("events", seconds: 20), "keys work after the cycles")
        app.send(SIGKILL)
        _ = await app.exitStatus()
        let suspends = Self.logs(dir).components(separatedBy: #""phase":"background","reason":"SIGTSTP""#).count - 1
        #expect(suspends == cycles, "one suspend a ^Z (logged \(suspends) for \(cycles))")
    }

    @Test func onATerminalItTakesTheScreenAndGivesItBack() async throws {
        let dir = TemporaryDirectory("trendy-app", create: false)
        try await Self.onboarded(dir)
        let app = try RunningApp(["--data-dir", dir.path, "--sync-interval", "0"], tty: true, rows: 30, columns: 70)
        #expect(await app.waitFor { $0.contains("\u{1B}[?1049h") && $0.contains("Dashboard") })
        app.type("2")
        #expect(await app.waitFor { $0.contains("[2 Events]") })
        // A smaller window: the next frame repaints everything, cut to 40 columns.
        var size = winsize(ws_row: 20, ws_col: 40, ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(app.master!, UInt(TIOCSWINSZ), &size)
        let mark = app.text.count
        app.send(SIGWINCH)
        #expect(await app.waitFor { String($0.dropFirst(mark)).contains("\u{1B}[2J") })
        app.type("q")
        #expect(await app.exitStatus() == 0)
        #expect(app.text.hasSuffix("\u{1B}[?2004l\u{1B}[?25h\u{1B}[?1049l"), "the terminal is given back as it was")
    }
}

/// Deep links and location moves reach the running app through its socket; a second app for the
/// same data directory is refused.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct AppControlTests {
    @Test func aDeepLinkOpensTheEventInTheRunningApp() async throws {
        let dir = TemporaryDirectory("trendy-app", create: false)
        try await AppProcessTests.onboarded(dir)
        let list = try await TrendyProcess.run(["events", "list", "--json", "--data-dir", dir.path])
        let events = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]]
        let id = try #require(events?.first?["id"] as? String)
        let app = try RunningApp(["--data-dir", dir.path, "--sync-interval", "0"])
        #expect(await app.waitForScreen("dashboard"))
        let again = try await TrendyProcess.run(["app", "--data-dir", dir.path], stdin: "q\n")
        #expect(again.status == 75, "one app per data directory: \(again.stderr)")
        #expect(
            try FileManager.default.attributesOfItem(atPath: dir.url.appendingPathComponent("app.sock").path)[
                .posixPermissions] as? Int == 0o600, "the control socket is owner-only")
        let open = try await TrendyProcess.run(["open", "trendy://events/\(id)", "--data-dir", dir.path])
        #expect(open.status == 0 && open.stdout.contains("opened"), "\(open.stdout)\(open.stderr)")
        #expect(await app.waitForScreen("events"))
        #expect(app.text.components(separatedBy: "── frame").last?.contains("› ") == true, "the event is selected")
        let bad = try await TrendyProcess.run(["open", "https://example.com", "--data-dir", dir.path])
        #expect(bad.status == 64)
        let unknown = try await TrendyProcess.run([
            "open", "trendy://events/\(UUIDv7Text.sample)", "--data-dir", dir.path,
        ])
        #expect(unknown.status == 1 && unknown.stderr.contains("No event"), "\(unknown.stderr)")
        #expect(await app.waitFor { $0.contains("No event") })
        app.type("q")
        #expect(await app.exitStatus() == 0)
        #expect(!FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("app.sock").path))
    }

    @Test func anIdleOrHostileClientNeitherBlocksLinksNorReachesTheTerminal() async throws {
        let (dir, app) = try await AppProcessTests.onboardedApp()
        // A client that connects and says nothing.
        let idle = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(idle) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = Array(dir.url.appendingPathComponent("app.sock").path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path)
            raw[path.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(idle, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(connected == 0)
        // A request cut short (no line break) is not run when the read deadline ends it.
        let deadline = Int64(Date().addingTimeInterval(30).timeIntervalSince1970 * 1000)
        let partial = Array("by \(deadline) open trendy://analytics".utf8)
        #expect(partial.withUnsafeBytes { write(idle, $0.baseAddress, $0.count) } == partial.count)
        let started = Date()
        let open = try await TrendyProcess.run(["open", "trendy://calendar", "--data-dir", dir.path])
        #expect(open.status == 0 && Date().timeIntervalSince(started) < 5, "not held up by the idle client")
        #expect(await app.waitForScreen("calendar"))
        try await Task.sleep(for: .seconds(3))
        #expect(!RunningApp.screens(app.text).contains("analytics"), "the cut request never ran")
        // A link whose text carries terminal escapes: shown as text, never sent to the terminal.
        let hostile = try await TrendyProcess.run([
            "open", "trendy://log/X%1b%5b2J%1b%5d0;PWNED%07", "--data-dir", dir.path,
        ])
        #expect(hostile.status == 1 && hostile.stderr.contains("No event type named X"), "\(hostile.stderr)")
        #expect(!hostile.stderr.contains("\u{1B}"), "nor to the terminal of the command that sent it")
        #expect(await app.waitFor { $0.contains("No event type named X") })
        #expect(!app.text.contains("\u{1B}[2J") && !app.text.contains("\u{1B}]0;"), "no escape reached the terminal")
        app.type("q")
        #expect(await app.exitStatus() == 0)
    }

    @Test func quittingRightAfterAWriteStillSendsIt() async throws {
        let (dir, app) = try await AppProcessTests.onboardedApp()
        app.type("l")
        app.type("1")
        app.type("q")
        #expect(await app.exitStatus() == 0)
        let status = try await TrendyProcess.run(["status", "--json", "--data-dir", dir.path])
        #expect(status.stdout.contains("\"pending\" : 0"), "the event went out before the app exited: \(status.stdout)")
        #expect(AppProcessTests.logs(dir).contains("Synced before exit"))
    }

    @Test func aBadSyncIntervalIsAUsageErrorForTheAppAndForOpen() async throws {
        let dir = TemporaryDirectory("trendy-app", create: false)
        for args in [["app", "--sync-interval", "0.5"], ["open", "trendy://calendar", "--sync-interval", "-1"]] {
            let r = try await TrendyProcess.run(args + ["--data-dir", dir.path], stdin: "q\n")
            #expect(r.status == 64 && r.stderr.contains("--sync-interval"), "\(args): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path), "nothing was started")
    }

    @Test func withoutASocketAPathTooLongStillAllowsOneAppOnly() async throws {
        let dir = TemporaryDirectory("trendy-app-" + String(repeating: "x", count: 90), create: false)
        try await AppProcessTests.onboarded(dir)
        let app = try RunningApp(["--data-dir", dir.path, "--sync-interval", "0"])
        #expect(await app.waitForScreen("dashboard"))
        #expect(!FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("app.sock").path))
        let again = try await TrendyProcess.run(["app", "--data-dir", dir.path], stdin: "q\n")
        #expect(again.status == 75, "the lock still keeps a second app out: \(again.stderr)")
        app.type("q")
        #expect(await app.exitStatus() == 0)
        #expect(AppProcessTests.logs(dir).contains("runs without its control socket"))
    }

    @Test func aLinkWhileSignedOutWaitsUntilSignInThenOpens() async throws {
        let dir = TemporaryDirectory("trendy-app", create: false)
        let email = "wait-\(UUID().uuidString.prefix(6))@example.com"
        try await AppProcessTests.onboarded(dir, email: email)
        #expect(try await TrendyProcess.run(["logout", "--data-dir", dir.path]).status == 0)
        let app = try RunningApp(["--data-dir", dir.path, "--sync-interval", "0"])
        #expect(await app.waitForScreen("login"))
        let open = try await TrendyProcess.run(["open", "trendy://calendar", "--data-dir", dir.path])
        #expect(open.status == 0 && open.stdout.contains("waiting"), "\(open.stdout)")
        app.type("<enter>\(email)<enter>password-1<enter>")
        #expect(await app.waitForScreen("calendar"), "the link opened after sign-in")
        app.type("q")
        #expect(await app.exitStatus() == 0)
    }

    @Test func aLocationMoveIsHandledByTheRunningAppAndTheVisitShows() async throws {
        let dir = TemporaryDirectory("trendy-app", create: false)
        try await AppProcessTests.onboarded(dir)
        let d = ["--data-dir", dir.path]
        #expect(try await TrendyProcess.run(["location", "permission", "always"] + d).status == 0)
        #expect(try await TrendyProcess.run(["location", "set", "52.53", "13.405"] + d).status == 0)
        #expect(
            try await TrendyProcess.run(["geofence", "add", "Café", "52.52", "13.405", "--type", "Coffee"] + d).status
                == 0)
        let app = try RunningApp(["--sync-interval", "0"] + d)
        #expect(await app.waitForScreen("dashboard"))
        let move = try await TrendyProcess.run(["location", "set", "52.52", "13.405"] + d)
        #expect(move.status == 0, "\(move.stderr)")
        #expect(
            move.stdout.contains("The running app handled it") && move.stdout.contains("enter Café"), "\(move.stdout)")
        #expect(await app.waitFor { $0.contains("enter Café") && $0.contains("Today: 2 event(s)") }, "the visit shows")
        // Moves handed over at once are handled one after another, each reporting its own crossing.
        async let away = TrendyProcess.run(["location", "set", "52.53", "13.405"] + d)
        async let back = TrendyProcess.run(["location", "set", "52.53", "13.406"] + d)
        let answers = try await [away, back].map(\.stdout)
        #expect(answers.filter { $0.contains("1 crossing(s)") }.count == 1, "\(answers)")
        #expect(answers.filter { $0.contains("0 crossing(s)") }.count == 1, "\(answers)")
        app.type("q")
        #expect(await app.exitStatus() == 0)
    }

}

enum UUIDv7Text {
    static let sample = "01930000-0000-7000-8000-000000000000"
}
