import Foundation
import Testing
import TrendyLogging
import TrendyServer
import TrendyTestSupport

/// The four sequences, with two installs of the real binary against one real server:
/// edits never overwrite fields they did not touch, a same-field loser is kept as a conflict
/// both devices can see and restore, an edit is never sent before the type it names, and edit
/// vs delete leaves a record on both sides.
@Suite(.timeLimit(.minutes(5)))
struct ConflictCLITests {
    let cli = SyncCLITests()

    /// Two devices of one account with one synced "Coffee" event; returns its id.
    func twoDevices(
        _ server: RunningServer, _ a: TemporaryDirectory, _ b: TemporaryDirectory,
        email: String = "c\(UUID().uuidString.prefix(8))@example.com"
    ) async throws -> String {
        try await cli.signIn("signup", email, a, server)
        try await cli.signIn("login", email, b, server)
        #expect(try await cli.trendy(["types", "add", "Coffee"], a, server).status == 0)
        #expect(try await cli.trendy(["log", "Coffee", "--note", "old"], a, server).status == 0)
        #expect(try await cli.trendy(["sync"], a, server).status == 0)
        #expect(try await cli.trendy(["sync"], b, server).status == 0)
        let id = try await cli.events(b, server).first?["id"] as? String
        return try #require(id)
    }

    func event(_ id: String, _ dir: TemporaryDirectory, _ server: RunningServer) async throws -> [String: Any]? {
        try await cli.events(dir, server).first { $0["id"] as? String == id }
    }

    func conflicts(_ dir: TemporaryDirectory, _ server: RunningServer) async throws -> [[String: Any]] {
        let r = try await cli.trendy(["conflicts", "--json"], dir, server)
        #expect(r.status == 0, "\(r.stderr)")
        return (cli.json(r) as? [[String: Any]]) ?? []
    }

    func sync(_ dir: TemporaryDirectory, _ server: RunningServer) async throws {
        let r = try await cli.trendy(["sync"], dir, server)
        #expect(r.status == 0, "\(r.stderr)")
    }

    @Test func editsOfDifferentFieldsOnTwoDevicesBothSurvive() async throws {
        try await AuthCLITests.withServer { server in
            let a = TemporaryDirectory("trendy-it", create: false)
            let b = TemporaryDirectory("trendy-it", create: false)
            let id = try await twoDevices(server, a, b)
            #expect(try await cli.trendy(["events", "edit", id, "--note", "from A"], a, server).status == 0)
            #expect(
                try await cli.trendy(["events", "edit", id, "--at", "2026-01-02T03:04:05Z"], b, server).status == 0)
            try await sync(a, server)
            try await sync(b, server)
            try await sync(a, server)
            for dir in [a, b] {
                let e = try await event(id, dir, server)
                #expect(e?["notes"] as? String == "from A")
                #expect(e?["timestamp"] as? String == "2026-01-02T03:04:05.000Z")
                #expect(try await conflicts(dir, server).isEmpty)
            }
        }
    }

    @Test func sameFieldLoserIsAConflictBothSeeAndCanRestore() async throws {
        try await AuthCLITests.withServer { server in
            let a = TemporaryDirectory("trendy-it", create: false)
            let b = TemporaryDirectory("trendy-it", create: false)
            let id = try await twoDevices(server, a, b)
            #expect(try await cli.trendy(["events", "edit", id, "--note", "from A"], a, server).status == 0)
            #expect(try await cli.trendy(["events", "edit", id, "--note", "from B"], b, server).status == 0)
            try await sync(a, server)
            try await sync(b, server)
            try await sync(a, server)
            // B reached the server last: its value wins everywhere; A's is kept on both devices.
            for dir in [a, b] {
                #expect(try await event(id, dir, server)?["notes"] as? String == "from B")
                let kept = try await conflicts(dir, server)
                #expect(kept.count == 1)
                #expect(kept.first?["field"] as? String == "notes")
                #expect(kept.first?["lost_value"] as? String == "\"from A\"")
                #expect(kept.first?["kept_value"] as? String == "\"from B\"")
            }
            // In words (issue 32): what, the field, the values, "this device" — no JSON, no hex device id.
            let human = try await cli.trendy(["conflicts"], a, server).stdout
            #expect(human.contains("Coffee, ") && human.contains("its note"), "\(human)")
            #expect(human.contains("lost: “from A” (this device") && human.contains("kept: “from B” (another device"))
            #expect(!human.contains("\"from A\""), "\(human)")
            let status = try await cli.trendy(["status", "--json"], a, server)
            #expect((cli.json(status) as? [String: Any])?["conflicts"] as? Int == 1)
            #expect(try await cli.trendy(["status"], a, server).stdout.contains("1 conflict"))
            let explain = try await cli.trendy(["sync", "explain", id], a, server)
            #expect(explain.status == 0)
            #expect(explain.stdout.contains("conflict"))
            // A restores its value: an ordinary edit that syncs to B.
            let conflictId = try #require(try await conflicts(a, server).first?["id"] as? String)
            #expect(try await cli.trendy(["conflicts", "restore", conflictId], a, server).status == 0)
            #expect(try await conflicts(a, server).isEmpty)
            try await sync(a, server)
            try await sync(b, server)
            #expect(try await event(id, b, server)?["notes"] as? String == "from A")
            // Restored on A: closed on B too (issue 32, item 4: it stayed open on every other device).
            #expect(try await conflicts(b, server).isEmpty)
            let unknown = try await cli.trendy(["conflicts", "dismiss", "nope"], b, server)
            #expect(unknown.status == 65)
        }
    }

    /// Issue 32, item 4: a conflict dismissed on one device is closed on the others and never
    /// shown to a device that signs in later; `conflicts --all` still lists it, closed.
    @Test func aConflictDismissedOnOneDeviceIsClosedOnEveryDevice() async throws {
        try await AuthCLITests.withServer { server in
            let a = TemporaryDirectory("trendy-it", create: false)
            let b = TemporaryDirectory("trendy-it", create: false)
            let email = "d\(UUID().uuidString.prefix(8))@example.com"
            let id = try await twoDevices(server, a, b, email: email)
            #expect(try await cli.trendy(["events", "edit", id, "--note", "from A"], a, server).status == 0)
            #expect(try await cli.trendy(["events", "edit", id, "--note", "from B"], b, server).status == 0)
            try await sync(a, server)
            try await sync(b, server)
            try await sync(a, server)
            let conflictId = try #require(try await conflicts(b, server).first?["id"] as? String)
            #expect(try await conflicts(a, server).count == 1)
            #expect(try await cli.trendy(["conflicts", "dismiss", conflictId], b, server).status == 0)
            try await sync(b, server)
            try await sync(a, server)
            #expect(try await conflicts(a, server).isEmpty, "dismissed on B: closed on A")
            #expect(try await cli.trendy(["status"], a, server).stdout.contains("conflict") == false)
            let later = TemporaryDirectory("trendy-it", create: false)
            try await cli.signIn("login", email, later, server)
            try await sync(later, server)
            #expect(try await conflicts(later, server).isEmpty, "a device that signs in later never sees it open")
            // Resolving it again (from A, which has it closed) changes nothing, and nothing fails.
            try await sync(a, server)
            #expect(try await cli.trendy(["status", "--json"], a, server).stdout.contains("\"failed\" : 0"))
        }
    }

    @Test func anEditNamingANewTypeIsSentAfterTheTypeIsCreated() async throws {
        try await AuthCLITests.withServer { server in
            let a = TemporaryDirectory("trendy-it", create: false)
            try await cli.signIn("signup", "dep@example.com", a, server)
            #expect(try await cli.trendy(["types", "add", "Coffee"], a, server).status == 0)
            #expect(try await cli.trendy(["log", "Coffee"], a, server).status == 0)
            let unsynced = try #require(try await cli.events(a, server).first?["id"] as? String)
            #expect(try await cli.trendy(["log", "Coffee", "--at", "2026-01-01T00:00:00Z"], a, server).status == 0)
            try await sync(a, server)
            let synced = try #require(
                try await cli.events(a, server).first { $0["id"] as? String != unsynced }?["id"] as? String)
            // Both events: edit (queued), then a new type, then edit to it — never synced and synced.
            #expect(try await cli.trendy(["log", "Coffee", "--at", "2026-01-03T00:00:00Z"], a, server).status == 0)
            let fresh = try #require(
                try await cli.events(a, server).first { $0["timestamp"] as? String == "2026-01-03T00:00:00.000Z" }?[
                    "id"]
                    as? String)
            for id in [synced, fresh] {
                #expect(try await cli.trendy(["events", "edit", id, "--note", "first"], a, server).status == 0)
            }
            #expect(try await cli.trendy(["types", "add", "Read"], a, server).status == 0)
            for id in [synced, fresh] {
                #expect(try await cli.trendy(["events", "edit", id, "--type", "Read"], a, server).status == 0)
            }
            try await sync(a, server)
            let status = cli.json(try await cli.trendy(["status", "--json"], a, server)) as? [String: Any]
            #expect(status?["failed"] as? Int == 0)
            #expect(status?["pending"] as? Int == 0)
            let b = TemporaryDirectory("trendy-it", create: false)
            try await cli.signIn("login", "dep@example.com", b, server)
            try await sync(b, server)
            for id in [synced, fresh] {
                let e = try await event(id, b, server)
                #expect(e?["type"] as? String == "Read")
                #expect(e?["notes"] as? String == "first")
            }
        }
    }

    @Test func editVersusDeleteKeepsTheEditAsARestorableConflict() async throws {
        try await AuthCLITests.withServer { server in
            let a = TemporaryDirectory("trendy-it", create: false)
            let b = TemporaryDirectory("trendy-it", create: false)
            // A deletes and syncs, then B edits and syncs.
            let first = try await twoDevices(server, a, b)
            #expect(try await cli.trendy(["events", "rm", first], a, server).status == 0)
            try await sync(a, server)
            #expect(try await cli.trendy(["events", "edit", first, "--note", "B's edit"], b, server).status == 0)
            try await sync(b, server)
            let statusB = cli.json(try await cli.trendy(["status", "--json"], b, server)) as? [String: Any]
            #expect(statusB?["failed"] as? Int == 0)
            #expect(statusB?["conflicts"] as? Int == 1)
            #expect(try await event(first, b, server) == nil)
            try await sync(a, server)
            let keptA = try await conflicts(a, server)
            #expect(keptA.first?["kind"] as? String == "deleted")
            #expect((keptA.first?["lost_value"] as? String)?.contains("B's edit") == true)
            // Restoring brings it back under a new id with its last content, on both devices.
            let conflictId = try #require(keptA.first?["id"] as? String)
            #expect(try await cli.trendy(["conflicts", "restore", conflictId], a, server).status == 0)
            try await sync(a, server)
            try await sync(b, server)
            #expect(try await cli.events(b, server).contains { $0["notes"] as? String == "B's edit" })

            // A edits and syncs, then B (not having pulled) deletes and syncs.
            #expect(try await cli.trendy(["log", "Coffee", "--at", "2026-02-01T00:00:00Z"], a, server).status == 0)
            try await sync(a, server)
            try await sync(b, server)
            let second = try #require(
                try await cli.events(b, server).first { $0["timestamp"] as? String == "2026-02-01T00:00:00.000Z" }?[
                    "id"]
                    as? String)
            #expect(try await cli.trendy(["events", "edit", second, "--note", "A's edit"], a, server).status == 0)
            try await sync(a, server)
            #expect(try await cli.trendy(["events", "rm", second], b, server).status == 0)
            try await sync(b, server)
            try await sync(a, server)
            for dir in [a, b] {
                #expect(try await event(second, dir, server) == nil)
                let kept = try await conflicts(dir, server).filter { $0["entity_id"] as? String == second }
                #expect(kept.count == 1)
                #expect((kept.first?["lost_value"] as? String)?.contains("A's edit") == true)
            }
        }
    }

    /// The main screen's banner says "1 conflict" from the first frame of a launch.
    @Test func theLaunchBannerCountsConflicts() async throws {
        try await AuthCLITests.withServer { server in
            let launcher = LaunchCLITests()
            let api = server.baseURL.absoluteString
            let a = TemporaryDirectory("trendy-it", create: false)
            let b = TemporaryDirectory("trendy-it", create: false)
            try await launcher.onboard(a, api, email: "banner@example.com")
            let login = try await cli.trendy(
                ["login", "--email", "banner@example.com", "--password-stdin"], b, server,
                stdin: "password-launch-1\n")
            #expect(login.status == 0, "\(login.stderr)")
            try await sync(a, server)
            try await sync(b, server)
            let id = try #require(try await cli.events(b, server).first?["id"] as? String)
            #expect(try await cli.trendy(["events", "edit", id, "--note", "A"], a, server).status == 0)
            #expect(try await cli.trendy(["events", "edit", id, "--note", "B"], b, server).status == 0)
            try await sync(a, server)
            try await sync(b, server)
            try await sync(a, server)
            let (_, frames, report) = try await launcher.launch(a, api: api, ["--no-wait"])
            let banners = frames.compactMap { $0["banner"] as? String }
            #expect(!banners.isEmpty)
            #expect(banners.allSatisfy { $0.contains("1 conflict") }, "\(banners)")
            #expect((report["banner"] as? String)?.contains("1 conflict") == true, "\(report)")
        }
    }
}
