import Foundation
import GRDB
import Testing
import TrendyServer
import TrendyTestSupport

/// Issue 30's four holes, each as an outside fuzzer found it: two installs of the real binary on
/// one account against the real server. Each fails on the code before the fix.
@Suite(.timeLimit(.minutes(5)))
struct NeverLoseCLITests {
    let cli = SyncCLITests()

    /// Two signed-in devices of one new account, both synced.
    func twoDevices(_ server: RunningServer) async throws -> (TemporaryDirectory, TemporaryDirectory) {
        let a = TemporaryDirectory("trendy-it", create: false)
        let b = TemporaryDirectory("trendy-it", create: false)
        let email = "n\(UUID().uuidString.prefix(8))@example.com"
        try await cli.signIn("signup", email, a, server)
        try await cli.signIn("login", email, b, server)
        return (a, b)
    }

    func ok(_ args: [String], _ dir: TemporaryDirectory, _ server: RunningServer) async throws {
        let r = try await cli.trendy(args, dir, server)
        #expect(r.status == 0, "\(args): \(r.stderr)")
    }

    func list(_ args: [String], _ dir: TemporaryDirectory, _ server: RunningServer) async throws -> [[String: Any]] {
        (cli.json(try await cli.trendy(args + ["--json"], dir, server)) as? [[String: Any]]) ?? []
    }

    func status(_ dir: TemporaryDirectory, _ server: RunningServer) async throws -> [String: Any] {
        (cli.json(try await cli.trendy(["status", "--json"], dir, server)) as? [String: Any]) ?? [:]
    }

    /// 1. A place whose type another device deleted still syncs, without the type (as the server
    /// clears it from the places it has); nothing is left failed.
    @Test func aPlaceWhoseTypeWasDeletedElsewhereStillSyncs() async throws {
        try await AuthCLITests.withServer { server in
            let (a, b) = try await twoDevices(server)
            try await ok(["types", "add", "Walk"], a, server)
            try await ok(["types", "add", "Home"], a, server)
            try await ok(["sync"], a, server)
            try await ok(["sync"], b, server)
            try await ok(
                ["geofence", "add", "Park", "52.5", "13.4", "--type", "Walk", "--exit-type", "Walk"], b, server)
            try await ok(["geofence", "add", "Yard", "52.6", "13.4", "--type", "Home"], b, server)
            try await ok(["types", "rm", "Walk", "--yes"], a, server)
            try await ok(["sync"], a, server)
            try await ok(["sync"], b, server)
            try await ok(["sync"], a, server)
            #expect(try await status(b, server)["failed"] as? Int == 0)
            #expect(try await status(b, server)["pending"] as? Int == 0)
            for dir in [a, b] {
                let places = try await list(["geofence", "list"], dir, server)
                let park = places.first { $0["name"] as? String == "Park" }
                #expect(park != nil, "Park reached the server and the other device")
                #expect(park?["event_type_entry_id"] == nil || park?["event_type_entry_id"] is NSNull)
                #expect(park?["event_type_exit_id"] == nil || park?["event_type_exit_id"] is NSNull)
                #expect(places.contains { $0["name"] as? String == "Yard" })
            }
        }
    }

    /// 2. The server's cascade is the truth: an event another device moved out of a type before
    /// this device's delete of the type reached the server survives everywhere, also on the
    /// device that deleted the type, and `sync explain` says so.
    @Test func anEventMovedOutOfADeletedTypeComesBackToTheDeletingDevice() async throws {
        try await AuthCLITests.withServer { server in
            let (a, b) = try await twoDevices(server)
            try await ok(["types", "add", "Nap"], a, server)
            try await ok(["types", "add", "Gym"], a, server)
            try await ok(["log", "Nap", "--note", "x"], a, server)
            try await ok(["log", "Nap", "--note", "goes", "--at", "2026-01-01T00:00:00Z"], a, server)
            try await ok(["sync"], a, server)
            try await ok(["sync"], b, server)
            let events = try await cli.events(b, server)
            let x = try #require(events.first { $0["notes"] as? String == "x" }?["id"] as? String)
            try await ok(["events", "edit", x, "--type", "Gym"], a, server)
            try await ok(["types", "rm", "Nap", "--yes"], b, server)
            #expect(try await cli.events(b, server).isEmpty)
            let gone = try await cli.trendy(["sync", "explain", x], b, server)
            #expect(gone.stdout.contains("with its event type"), "\(gone.stdout)")
            try await ok(["sync"], a, server)
            try await ok(["sync"], b, server)
            try await ok(["sync"], a, server)
            try await ok(["sync"], b, server)
            for dir in [a, b] {
                let left = try await cli.events(dir, server)
                #expect(left.map { $0["notes"] as? String } == ["x"], "\(left)")
            }
            let explain = try await cli.trendy(["sync", "explain", x], b, server)
            #expect(!explain.stdout.contains("deleted"), "\(explain.stdout)")
            // A full download agrees: no tombstone outvotes the server's current state.
            try await ok(["sync", "--full"], b, server)
            #expect(try await cli.events(b, server).map { $0["notes"] as? String } == ["x"])
        }
    }

    /// 3. The server de-duplicates events of the same type and time; what the later device set
    /// on its copy (note and later edit) reaches the surviving event, and the earlier device's
    /// differing note is kept as a conflict on both devices — nothing silently dropped.
    @Test func aDeduplicatedCreateKeepsWhatTheLaterDeviceEntered() async throws {
        try await AuthCLITests.withServer { server in
            let (a, b) = try await twoDevices(server)
            try await ok(["types", "add", "Tea"], a, server)
            try await ok(["sync"], a, server)
            try await ok(["sync"], b, server)
            let at = "2026-10-01T08:00:00Z"
            try await ok(["log", "Tea", "--at", at, "--note", "from a"], a, server)
            try await ok(["log", "Tea", "--at", at, "--note", "from b"], b, server)
            try await ok(["sync"], a, server)
            try await ok(["sync"], b, server)
            // b's copy was merged into a's event: b's note won (it reached the server last).
            let merged = try await cli.events(b, server)
            #expect(merged.count == 1)
            #expect(merged.first?["notes"] as? String == "from b")
            let survivor = try #require(merged.first?["id"] as? String)
            try await ok(["events", "edit", survivor, "--note", "b edited"], b, server)
            try await ok(["sync"], b, server)
            try await ok(["sync"], a, server)
            for dir in [a, b] {
                let events = try await cli.events(dir, server)
                #expect(events.count == 1)
                #expect(events.first?["id"] as? String == survivor)
                #expect(events.first?["notes"] as? String == "b edited")
                let kept = try await list(["conflicts", "--all"], dir, server)
                #expect(kept.contains { $0["lost_value"] as? String == "\"from a\"" }, "\(kept)")
            }
            // Both devices import one file: nothing doubles, nothing is lost, no conflict is made.
            let file = a.url.appendingPathComponent("same.csv")
            try Data("type,timestamp,notes\nTea,2026-10-02T09:00:00Z,shared\n".utf8).write(to: file)
            try await ok(["import", file.path], a, server)
            try await ok(["import", file.path], b, server)
            try await ok(["sync"], a, server)
            try await ok(["sync"], b, server)
            try await ok(["sync"], a, server)
            for dir in [a, b] {
                let events = try await cli.events(dir, server)
                #expect(events.count == 2)
                #expect(events.contains { $0["notes"] as? String == "shared" })
                #expect(try await list(["conflicts", "--all"], dir, server).count == 1)
            }
        }
    }

    /// 4. Every transient failure exits 75, whatever the pass was doing: 5xx and dropped
    /// connections while pushing, and while pulling.
    @Test func aServerHiccupExitsSeventyFive() async throws {
        try await LaunchCLITests.withServer { trendyServer, server in
            let (a, _) = try await twoDevices(server)
            try await ok(["types", "add", "Tea"], a, server)
            for (i, fault) in ["error", "drop"].enumerated() {
                try await ok(["log", "Tea", "--note", "n\(i)"], a, server)
                var faults = FaultConfiguration()
                if fault == "error" { faults.errorRate = 1 } else { faults.dropRate = 1 }
                trendyServer.faults.update(faults)
                let pushing = try await cli.trendy(["sync", "--json"], a, server)
                #expect(pushing.status == 75, "\(fault) while pushing: \(pushing.stdout) \(pushing.stderr)")
                // The change now waits out its delay: the next pass says so, with the same code.
                let waiting = try await cli.trendy(["sync"], a, server)
                #expect(waiting.status == 75, "\(fault), waiting: \(waiting.stderr)")
                trendyServer.faults.update(FaultConfiguration())
                try await ok(["sync", "--retry-failed"], a, server)
            }
            // Nothing to push: the pull meets the fault.
            var faults = FaultConfiguration()
            faults.errorRate = 1
            trendyServer.faults.update(faults)
            let pulling = try await cli.trendy(["sync"], a, server)
            #expect(pulling.status == 75, "while pulling: \(pulling.stderr)")
            trendyServer.faults.update(FaultConfiguration())
            try await ok(["sync"], a, server)
            #expect(try await status(a, server)["pending"] as? Int == 0)
            #expect(try await cli.events(a, server).count == 2)
        }
    }

    /// Outsider's B2: a server restored from a backup from before the account was made no longer
    /// knows it; login fails, and signing up again with the same email made a new account that
    /// wiped every device's data (a new owner clears the store), or was refused for good while a
    /// change waited (only the lost account could send it). The same email is the same person:
    /// the data stays and goes to the new account, unsent changes included, and another device
    /// of theirs sees it all. `restored` stands for the restored server: it has never seen the
    /// account.
    @Test func signingUpAgainWhereTheServerLostTheAccountKeepsAndSendsEverything() async throws {
        try await AuthCLITests.withServer { lost in
            try await AuthCLITests.withServer { restored in
                let a = TemporaryDirectory("trendy-it", create: false)
                let b = TemporaryDirectory("trendy-it", create: false)
                let email = "b2\(UUID().uuidString.prefix(8))@example.com"
                try await cli.signIn("signup", email, a, lost)
                try await ok(["types", "add", "Run"], a, lost)
                try await ok(["log", "Run", "--at", "2026-05-01T07:00:00Z", "--note", "synced"], a, lost)
                try await ok(["sync"], a, lost)
                try await ok(["log", "Run", "--at", "2026-05-02T07:00:00Z", "--note", "waiting"], a, lost)
                let before = try await cli.events(a, lost).map { $0["id"] as? String }

                let again = try await cli.trendy(
                    ["signup", "--email", email, "--password-stdin"], a, restored, stdin: "password-2\n")
                #expect(again.status == 0, "\(again.stderr)")
                #expect(again.stdout.contains("goes to this account at the next sync"), "\(again.stdout)")
                #expect(try await cli.events(a, restored).map { $0["id"] as? String } == before, "nothing cleared")
                let synced = try await cli.trendy(["sync"], a, restored)
                #expect(synced.status == 0, "\(synced.stdout) \(synced.stderr)")
                #expect(try await status(a, restored)["pending"] as? Int == 0)

                let r = try await cli.trendy(
                    ["login", "--email", email, "--password-stdin"], b, restored, stdin: "password-2\n")
                #expect(r.status == 0, "\(r.stderr)")
                try await ok(["sync"], b, restored)
                let notes = try await cli.events(b, restored).map { $0["notes"] as? String }
                #expect(Set(notes) == ["synced", "waiting"], "\(notes)")
                #expect(try await list(["types"], b, restored).map { $0["name"] as? String } == ["Run"])

                // Another email is another person: their sign-up is still refused while a change
                // of this account waits, and clears the synced data when none does.
                try await ok(["log", "Run", "--note", "one more"], a, restored)
                let other = try await cli.trendy(
                    ["signup", "--email", "x\(email)", "--password-stdin"], a, restored, stdin: "password-3\n")
                #expect(other.status == 65, "\(other.stdout) \(other.stderr)")
                #expect(try await cli.events(a, restored).count == 3)
            }
        }
    }

    /// An install signed in before the owner's email was kept learns it at its next sync, so the
    /// same person signing up again after a server lost the account keeps the data.
    @Test func anInstallSignedInBeforeLearnsItsOwnersEmailAtItsNextSync() async throws {
        try await AuthCLITests.withServer { server in
            let a = TemporaryDirectory("trendy-it", create: false)
            let email = "up\(UUID().uuidString.prefix(8))@example.com".lowercased()
            try await cli.signIn("signup", email, a, server)
            let database = try DatabaseQueue(path: a.url.appendingPathComponent("trendy.sqlite").path)
            func ownerEmail() throws -> String? {
                try database.read { db in
                    try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'owner_email'")
                }
            }
            #expect(try ownerEmail() == email)
            try await database.write { db in try db.execute(sql: "DELETE FROM sync_state WHERE key = 'owner_email'") }
            try await ok(["sync"], a, server)
            #expect(try ownerEmail() == email)
        }
    }
}
