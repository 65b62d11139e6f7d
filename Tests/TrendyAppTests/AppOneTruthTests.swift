import Foundation
import Testing
import TrendyAPITesting
import TrendyTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// One truth between the running app and every other process of the install (issue 32): what
/// another terminal queues is sent, what it sets on the simulated device is kept, a request the
/// sender gave up on is never done, and quitting never cuts a pass short.
/// (An extension of the serialized `AppProcessTests`: its app processes never run beside
/// theirs, which starved the timing-sensitive suites on two cores.)
extension AppProcessTests {
    @Test func anEventLoggedByAnotherProcessIsSentSoonAndBeforeExit() async throws {
        let (dir, app) = try await AppProcessTests.onboardedApp()
        let d = ["--data-dir", dir.path]
        #expect(try await TrendyProcess.run(["log", "Coffee", "--note", "first"] + d).status == 0)
        var status = ""
        for _ in 0..<40 where !status.contains("\"pending\" : 0") {
            try await Task.sleep(for: .milliseconds(250))
            status = try await TrendyProcess.run(["status", "--json"] + d).stdout
        }
        #expect(status.contains("\"pending\" : 0"), "sent within 10 s without a sync timer: \(status)")
        #expect(try await TrendyProcess.run(["log", "Coffee", "--note", "second"] + d).status == 0)
        app.type("q")
        #expect(await app.exitStatus() == 0)
        let after = try await TrendyProcess.run(["status", "--json"] + d)
        #expect(after.stdout.contains("\"pending\" : 0"), "sent before exit: \(after.stdout)")
    }

    /// Issue 32, item 7: while the app is suspended, `trendy open` gives up after its deadline
    /// with a word about it (it hung without one), and the link it gave up on is not opened when
    /// the app runs again.
    @Test func aLinkToASuspendedAppGivesUpAndIsNeverOpenedLater() async throws {
        let (dir, app) = try await AppProcessTests.onboardedApp()
        app.send(SIGSTOP)
        #expect(await app.waitFor { _ in app.state == "T" })
        let started = Date()
        let open = try await TrendyProcess.run(["open", "trendy://calendar", "--data-dir", dir.path])
        #expect(open.status == 75, "\(open.status) \(open.stderr)")
        #expect(open.stderr.contains("suspended") && open.stderr.contains("fg"), "\(open.stderr)")
        #expect(Date().timeIntervalSince(started) < 15)
        let frames = RunningApp.screens(app.text).count
        app.send(SIGCONT)
        #expect(await app.waitFor { _ in app.state != "T" })
        try await Task.sleep(for: .seconds(2))
        #expect(!RunningApp.screens(app.text).dropFirst(frames).contains("calendar"), "the late link stays unopened")
        #expect(app.process.isRunning, "answering a sender that gave up does not end the app (SIGPIPE did)")
        let now = try await TrendyProcess.run(["open", "trendy://calendar", "--data-dir", dir.path])
        #expect(now.status == 0, "\(now.stderr)")
        #expect(now.stdout.contains("running app"), "the running app took it: \(now.stdout)")
        #expect(await app.waitForScreen("calendar"))
        app.type("q")
        #expect(await app.exitStatus() == 0)
    }

    /// Quitting the moment the app starts lets the launch's pass finish (outside tester: it was
    /// cut, recorded "Offline" with the server up, and left the queued change unsent).
    @Test func quittingAtOnceLetsTheLaunchPassFinish() async throws {
        let dir = TemporaryDirectory("trendy-app", create: false)
        try await AppProcessTests.onboarded(dir)
        let d = ["--data-dir", dir.path]
        #expect(try await TrendyProcess.run(["log", "Coffee", "--note", "queued"] + d).status == 0)
        let app = try RunningApp(["--sync-interval", "0"] + d)
        app.type("q")
        #expect(await app.exitStatus() == 0)
        let status = try await TrendyProcess.run(["status", "--json"] + d).stdout
        #expect(status.contains("\"pending\" : 0"), "\(status)")
        #expect(!status.contains("Offline") && !status.contains("Cancelled"), "\(status)")
    }

    /// The outside tester's sequence (issue 32, item 1): with the app already running, another
    /// terminal grants location access, adds a geofence and moves the device there. The app
    /// handles the move with the geofence it did not know at launch, and the permission and
    /// regions the other terminal set survive the app's save, also after it quits.
    @Test func aGeofenceAndPermissionSetWhileTheAppRunsAreItsToo() async throws {
        let dir = TemporaryDirectory("trendy-app", create: false)
        try await AppProcessTests.onboarded(dir)
        let d = ["--data-dir", dir.path]
        let app = try RunningApp(["--sync-interval", "0"] + d)
        #expect(await app.waitForScreen("dashboard"))
        #expect(try await TrendyProcess.run(["location", "permission", "always"] + d).status == 0)
        #expect(
            try await TrendyProcess.run(["geofence", "add", "Gym", "52.52", "13.405", "--type", "Coffee"] + d).status
                == 0)
        let move = try await TrendyProcess.run(["location", "set", "52.52", "13.405"] + d)
        #expect(
            move.stdout.contains("The running app handled it") && move.stdout.contains("1 event(s) logged"),
            "\(move.stdout) \(move.stderr)")
        let show = try await TrendyProcess.run(["location", "show"] + d).stdout
        #expect(show.contains("Permission: always") && show.contains("1 of 20"), "\(show)")
        app.type("q")
        #expect(await app.exitStatus() == 0)
        let after = try await TrendyProcess.run(["location", "show"] + d).stdout
        #expect(after.contains("Permission: always") && after.contains("1 of 20"), "after quitting: \(after)")
    }

    /// Signing out in another terminal signs the running app out within moments (issue 32: it
    /// went unnoticed until the next pass, then said "the signed-in user changed").
    @Test func aSignOutInAnotherTerminalIsTheAppsToo() async throws {
        let (dir, app) = try await AppProcessTests.onboardedApp()
        #expect(try await TrendyProcess.run(["logout", "--data-dir", dir.path]).status == 0)
        #expect(await app.waitForScreen("login", seconds: 5), "signed out here too")
        let frame = app.text.components(separatedBy: "── frame").last ?? ""
        #expect(!frame.contains("signed-in user changed"), "\(frame)")
        app.type("q")
        #expect(await app.exitStatus() == 0)
    }
}
