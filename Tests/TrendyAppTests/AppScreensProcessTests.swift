import Foundation
import Testing
import TrendyAPITesting
import TrendyTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The app's screens as a person meets them, through the real binary (issue 32): sign-in that is
/// bounded and cancellable, the calendar and lists with real data, help and an event in full,
/// pastes and a terminal taken back after a stop.
/// (An extension of the serialized `AppProcessTests`: its app processes never run beside
/// theirs, which starved the timing-sensitive suites on two cores.)
extension AppProcessTests {
    /// Issue 32, item 6: signing in inside the app against a server that never answers says so
    /// within the CLI's budget (the form froze for 10 s), Esc gives up a sign-in in progress and
    /// keeps the email, and q quits at once.
    @Test func signingInAgainstAServerThatNeverAnswersIsBoundedAndCancellable() async throws {
        let dir = TemporaryDirectory("trendy-app", create: false)
        let silent = try SilentServer()
        let d = ["--data-dir", dir.path, "--api-url", silent.url.absoluteString, "--server-timeout", "3"]
        let app = try RunningApp(["--sync-interval", "0"] + d)
        #expect(await app.waitForScreen("onboarding.welcome"))
        app.type("<enter>")
        #expect(await app.waitForScreen("onboarding.auth"))
        app.type("l")
        let started = Date()
        app.type("someone@example.com<enter>password-1<enter>")
        #expect(await app.waitFor(10) { $0.contains("Signing in…") }, "progress is shown")
        #expect(
            await app.waitFor(10) { $0.contains("Not signed in:") },
            "a word, within the budget: \(app.text.components(separatedBy: "── frame").suffix(2))")
        #expect(Date().timeIntervalSince(started) < 8, "the 3 s budget, not the request's")
        #expect(
            app.text.components(separatedBy: "── frame").last?.contains("someone@example.com") == true,
            "the form keeps the email")
        app.type("password-1<enter>")
        #expect(await app.waitFor(10) { $0.components(separatedBy: "── frame").last?.contains("Signing in…") == true })
        app.type("<esc>")
        #expect(await app.waitFor(5) { $0.contains("Cancelled: not signed in.") })
        app.type("<esc>q")
        #expect(await app.exitStatus(seconds: 5) == 0)
    }

    /// Issue 32, item 14: "Allow all" in the app's onboarding allows location on the device too
    /// (it recorded "granted" while the device stayed "not_determined").
    @Test func allowingAllInTheAppsOnboardingAllowsTheDevicesLocation() async throws {
        let dir = TemporaryDirectory("trendy-app", create: false)
        let app = try await AppProcessTests.signedUpToPermissions(dir)
        app.type("a")
        #expect(await app.waitForScreen("onboarding.finish"))
        let show = try await TrendyProcess.run(["location", "show", "--data-dir", dir.path]).stdout
        #expect(show.contains("Permission: always"), "while the app runs: \(show)")
        app.type("q")
        #expect(await app.exitStatus() == 0)
    }

    /// Issue 32, item 2: what another terminal logs while the app runs (no sync timer here) is
    /// sent within moments, and one logged right before `q` goes out before the app exits.
    /// Issue 32, items 8 and 9: a day with a dozen events reads as its own cell, `]` goes on to
    /// a month ahead where a future-dated event is, and that event is not this week's in
    /// Analytics.
    @Test func theCalendarReadsWithRealDataAndFutureEventsKeepToTheirDates() async throws {
        let (dir, app) = try await AppProcessTests.onboardedApp()
        let d = ["--data-dir", dir.path]
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        let thisMonth = try #require(calendar.dateInterval(of: .month, for: Date())?.start)
        let third = try #require(calendar.date(byAdding: .hour, value: 50, to: thisMonth))
        for minute in 0..<12 {
            let at = ISO8601DateFormatter().string(from: third.addingTimeInterval(Double(minute) * 60))
            #expect(try await TrendyProcess.run(["log", "Coffee", "--at", at] + d).status == 0)
        }
        let nextMonth = try #require(calendar.date(byAdding: .month, value: 1, to: thisMonth))
        let ahead = try #require(calendar.date(byAdding: .day, value: 24, to: nextMonth)).addingTimeInterval(43_200)
        #expect(
            try await TrendyProcess.run(["log", "Coffee", "--at", ISO8601DateFormatter().string(from: ahead)] + d)
                .status == 0
        )
        app.type("3")
        #expect(
            await app.waitFor { $0.contains(" 3·12  ") || $0.contains(" 3·12* ") },
            "the day's count stands apart from the next day")
        let before = RunningApp.screens(app.text).count
        app.type("]")
        #expect(await app.waitFor { RunningApp.screens($0).count > before && $0.contains("25·1") }, "next month")
        app.type("4")
        #expect(await app.waitForScreen("analytics"))
        let frame = app.text.components(separatedBy: "── frame").last ?? ""
        let row = frame.split(separator: "\n").first { $0.contains("Coffee") }.map(String.init) ?? ""
        let thisWeek = row.split(separator: " ").last.map(String.init)
        let todayIsTheThird = calendar.isDate(Date(), equalTo: third, toGranularity: .weekOfYear)
        if !todayIsTheThird { #expect(thisWeek == "1", "only today's event is this week's: \(row)") }
        app.type("q")
        #expect(await app.exitStatus() == 0)
    }

    /// Issue 32, item 10: `events list` caps at nothing — `--all` lists a big account whole (the
    /// limit stopped at 10,000).
    @Test func everyEventOfABigAccountCanBeListed() async throws {
        let dir = TemporaryDirectory("trendy-app", create: false)
        try await AppProcessTests.onboarded(dir)
        var text = "type,timestamp\n"
        let base = Date(timeIntervalSince1970: 1_750_000_000)
        for i in 0..<10_050 {
            text += "Run,\(ISO8601DateFormatter().string(from: base.addingTimeInterval(Double(i) * 60)))\n"
        }
        let file = dir.url.appendingPathComponent("runs.csv")
        try text.write(to: file, atomically: true, encoding: .utf8)
        let d = ["--data-dir", dir.path]
        #expect(try await TrendyProcess.run(["import", file.path] + d).status == 0)
        let all = try await TrendyProcess.run(["events", "list", "--all", "--json"] + d)
        let items = (try? JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [[String: Any]]) ?? []
        #expect(items.count == 10_051, "the imported runs and the onboarding's coffee")
        let lines = try await TrendyProcess.run(["events", "list", "--all"] + d).stdout.split(separator: "\n")
        #expect(lines.count == 10_051)
        #expect(try await TrendyProcess.run(["events", "list", "--limit", "20000", "--json"] + d).status == 0)
        #expect(try await TrendyProcess.run(["events", "list", "--limit", "0"] + d).status == 64)
    }

    /// The help screen and an event in full, through the real binary (issue 32).
    @Test func helpAndAnEventInFull() async throws {
        let (dir, app) = try await AppProcessTests.onboardedApp()
        let long = String(repeating: "a long note that keeps going ", count: 6) + "THE END"
        #expect(try await TrendyProcess.run(["log", "Coffee", "--note", long, "--data-dir", dir.path]).status == 0)
        app.type("?")
        #expect(await app.waitForScreen("dashboard.help"))
        #expect(app.text.contains("the event in full"))
        app.type("x")
        app.type("2")
        #expect(await app.waitFor { $0.contains("page 1 of 1 (2 in all)") })
        app.type("<enter>")
        #expect(await app.waitForScreen("events.detail"))
        let frame = app.text.components(separatedBy: "── frame").last ?? ""
        #expect(
            frame.contains("keeps going THE") && frame.contains("logged by hand") && frame.contains("Synced:"),
            "\(frame)")
        app.type("<esc>q")
        #expect(await app.exitStatus() == 0)
    }

    /// On a terminal, a paste into the note field is text: its line break and the "dy" after it
    /// neither commit the note nor delete the event (outside tester, HIGH).
    @Test func aPastedLineBreakNeverDeletesAnEvent() async throws {
        let dir = TemporaryDirectory("trendy-app", create: false)
        try await AppProcessTests.onboarded(dir)
        let app = try RunningApp(["--data-dir", dir.path, "--sync-interval", "0"], tty: true, rows: 30, columns: 90)
        #expect(await app.waitFor { $0.contains("\u{1B}[?2004h") && $0.contains("Dashboard") }, "bracketed paste is on")
        app.type("2")
        #expect(await app.waitFor { $0.contains("[2 Events]") })
        app.type("c")
        app.type("\u{1B}[200~pasted\ndy\u{1B}[201~")
        try await Task.sleep(for: .milliseconds(500))
        app.type("\r")
        #expect(await app.waitFor { $0.contains("Note saved.") })
        let list = try await TrendyProcess.run(["events", "list", "--json", "--data-dir", dir.path]).stdout
        #expect(list.contains("\"notes\" : \"pasted dy\""), "\(list)")
        app.type("q")
        #expect(await app.exitStatus() == 0)
    }

    /// Stopped from outside and continued, after the shell put the terminal back in line mode,
    /// the app takes raw input again: a single key works (it was echoed and ignored until Enter).
    @Test func afterAStopFromOutsideKeysWorkAtOnce() async throws {
        let dir = TemporaryDirectory("trendy-app", create: false)
        try await AppProcessTests.onboarded(dir)
        let app = try RunningApp(["--data-dir", dir.path, "--sync-interval", "0"], tty: true, rows: 30, columns: 90)
        #expect(await app.waitFor { $0.contains("Dashboard") })
        app.send(SIGSTOP)
        #expect(await app.waitFor { _ in app.state == "T" })
        // What a shell does when its job stops: line mode, echo on.
        var t = termios()
        #expect(tcgetattr(app.master!, &t) == 0)
        t.c_lflag |= tcflag_t(ICANON | ECHO)
        #expect(tcsetattr(app.master!, TCSANOW, &t) == 0)
        app.send(SIGCONT)
        #expect(await app.waitFor { _ in app.state != "T" })
        try await Task.sleep(for: .milliseconds(300))
        app.type("2")
        #expect(await app.waitFor(5) { $0.contains("[2 Events]") }, "one key, no Enter")
        app.type("q")
        #expect(await app.exitStatus() == 0)
    }

    /// In a window shorter than the screen, the keys stay in sight (issue 32, item 13).
    @Test func aSmallWindowStillShowsTheKeys() async throws {
        let dir = TemporaryDirectory("trendy-app", create: false)
        try await AppProcessTests.onboarded(dir)
        let app = try RunningApp(["--data-dir", dir.path, "--sync-interval", "0"], tty: true, rows: 15, columns: 50)
        #expect(await app.waitFor { $0.contains("Dashboard") })
        app.type("?")
        #expect(await app.waitFor(5) { $0.contains("any key closes") && $0.contains("more line(s)") })
        app.type("x")
        app.type("q")
        #expect(await app.exitStatus() == 0)
    }

    /// An event dated next month is not "Recent" on the dashboard: the one just logged is (the
    /// outside tester's future events sat above it); the events list still shows every event.
    @Test func aFutureEventIsNotRecent() async throws {
        let dir = TemporaryDirectory("trendy-app", create: false)
        try await AppProcessTests.onboarded(dir)
        let d = ["--data-dir", dir.path]
        for i in 0..<6 {
            let ahead = ISO8601DateFormatter().string(from: Date().addingTimeInterval(40 * 86_400 + Double(i) * 60))
            #expect(
                try await TrendyProcess.run(["log", "Coffee", "--at", ahead, "--note", "ahead \(i)"] + d).status == 0)
        }
        #expect(try await TrendyProcess.run(["log", "Coffee", "--note", "just now"] + d).status == 0)
        let app = try RunningApp(["--sync-interval", "0"] + d)
        #expect(await app.waitFor { $0.contains("just now") }, "the one just logged is recent")
        let dashboard = app.text.components(separatedBy: "── frame").last ?? ""
        #expect(!dashboard.contains("ahead"), "\(dashboard)")
        app.type("2")
        #expect(await app.waitFor { $0.components(separatedBy: "── frame").last?.contains("ahead 5") == true })
        app.type("q")
        #expect(await app.exitStatus() == 0)
    }
}
