import Foundation
import Testing
import TrendyLogging
import TrendyServer
import TrendyTestSupport

/// The data and sync commands of the real binary against the real server.
@Suite(.timeLimit(.minutes(5)))
struct SyncCLITests {
    func trendy(_ args: [String], _ dir: TemporaryDirectory, _ server: RunningServer?, stdin: String? = nil)
        async throws -> TrendyProcess.Result
    {
        var full = args + ["--data-dir", dir.path]
        if let server { full += ["--api-url", server.baseURL.absoluteString] }
        return try await TrendyProcess.run(full, stdin: stdin)
    }

    func json(_ r: TrendyProcess.Result) -> Any? { try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) }

    /// `trendy signup` or `login` (`verb`) with a password on stdin; expects success.
    func signIn(_ verb: String, _ email: String, _ dir: TemporaryDirectory, _ server: RunningServer) async throws {
        let r = try await trendy(
            [verb, "--email", email, "--password-stdin"], dir, server, stdin: "password-1-\(email)\n")
        #expect(r.status == 0, "\(r.stderr)")
    }

    /// `trendy events list --json`, newest first.
    func events(_ dir: TemporaryDirectory, _ server: RunningServer) async throws -> [[String: Any]] {
        (json(try await trendy(["events", "list", "--json"], dir, server)) as? [[String: Any]]) ?? []
    }

    @Test func logImportSyncAndASecondDevice() async throws {
        try await AuthCLITests.withServer { server in
            let phone = TemporaryDirectory("trendy-it", create: false)
            let laptop = TemporaryDirectory("trendy-it", create: false)
            #expect(
                try await trendy(
                    ["signup", "--email", "d@example.com", "--password-stdin"], phone, server, stdin: "password-d-1\n"
                ).status == 0)
            #expect(try await trendy(["types", "add", "Coffee"], phone, server).status == 0)
            #expect(try await trendy(["log", "coffee", "--note", "flat white"], phone, server).status == 0)
            let csv = phone.url.appendingPathComponent("import.csv")
            var lines = ["type,timestamp,notes"]
            for i in 0..<250 {
                lines.append(
                    "Run,2026-10-01T\(String(format: "%02d", i / 60)):\(String(format: "%02d", i % 60)):00Z,lap \(i)")
            }
            lines.append("Run,not-a-time,broken")
            try (lines.joined(separator: "\n") + "\n").write(to: csv, atomically: true, encoding: .utf8)
            let imported = try await trendy(["import", csv.path, "--json"], phone, server)
            #expect(imported.status == 0, "\(imported.stderr)")
            let report = json(imported) as? [String: Any]
            #expect(report?["imported"] as? Int == 250)
            #expect((report?["errors"] as? [[String: Any]])?.first?["line"] as? Int == 252)
            #expect(imported.stderr.contains("line 252"))
            let again = try await trendy(["import", csv.path, "--json"], phone, server)
            #expect((json(again) as? [String: Any])?["duplicates"] as? Int == 250)
            let pending = try await trendy(["status", "--json"], phone, server)
            #expect((json(pending) as? [String: Any])?["pending"] as? Int == 253)
            let sync = try await trendy(["sync", "--json"], phone, server)
            #expect(sync.status == 0, "\(sync.stderr)")
            #expect((json(sync) as? [String: Any])?["pushed"] as? Int == 253)
            let status = try await trendy(["status", "--json"], phone, server)
            #expect((json(status) as? [String: Any])?["pending"] as? Int == 0)
            let history = try await trendy(["sync", "history", "--json"], phone, server)
            #expect((json(history) as? [[String: Any]])?.first?["outcome"] as? String == "ok")

            // A second device signs in and gets everything through the bootstrap.
            #expect(
                try await trendy(
                    ["login", "--email", "d@example.com", "--password-stdin"], laptop, server, stdin: "password-d-1\n"
                ).status == 0)
            #expect(try await trendy(["sync"], laptop, server).status == 0)
            let list = try await trendy(["events", "list", "--limit", "1000", "--json"], laptop, server)
            #expect((json(list) as? [[String: Any]])?.count == 251)
            let types = try await trendy(["types", "list", "--json"], laptop, server)
            #expect(
                Set(((json(types) as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }) == [
                    "Coffee", "Run",
                ])
        }
    }

    /// Editing and removing events, and the way out of a refused change: the laptop deletes a
    /// type while the phone logs an event of it; the phone's event is refused, kept and shown as
    /// failed, and moving it to another type with `events edit` gets it to the server.
    @Test func editAndRemoveEventsAndFixARefusedOne() async throws {
        try await AuthCLITests.withServer { server in
            let phone = TemporaryDirectory("trendy-it", create: false)
            let laptop = TemporaryDirectory("trendy-it", create: false)
            try await signIn("signup", "e@example.com", phone, server)
            #expect(try await trendy(["types", "add", "Doomed"], phone, server).status == 0)
            #expect(try await trendy(["types", "add", "Tea"], phone, server).status == 0)
            #expect(try await trendy(["log", "Tea", "--note", "black"], phone, server).status == 0)
            #expect(try await trendy(["sync"], phone, server).status == 0)
            try await signIn("login", "e@example.com", laptop, server)
            #expect(try await trendy(["sync"], laptop, server).status == 0)
            func events(_ dir: TemporaryDirectory) async throws -> [[String: Any]] {
                try await self.events(dir, server)
            }
            let tea = try #require(try await events(phone).first?["id"] as? String)

            // Edit and remove, locally first, then on the server.
            let edited = try await trendy(["events", "edit", tea, "--note", "green", "--json"], phone, server)
            #expect(edited.status == 0, "\(edited.stderr)")
            #expect((json(edited) as? [String: Any])?["notes"] as? String == "green")
            #expect((json(edited) as? [String: Any])?["sync_status"] as? String == "pending")
            #expect(try await trendy(["sync"], phone, server).status == 0)
            #expect(try await trendy(["sync"], laptop, server).status == 0)
            #expect(try await events(laptop).first?["notes"] as? String == "green")

            // The laptop deletes a type; the phone, not yet told, logs an event of it.
            #expect(try await trendy(["types", "rm", "Doomed", "--yes"], laptop, server).status == 0)
            #expect(try await trendy(["sync"], laptop, server).status == 0)
            #expect(try await trendy(["log", "Doomed", "--note", "kept"], phone, server).status == 0)
            #expect(try await trendy(["sync"], phone, server).status == 0)
            let status = json(try await trendy(["status", "--json"], phone, server)) as? [String: Any]
            #expect(status?["failed"] as? Int == 1)
            let reason = (status?["failed_changes"] as? [[String: Any]])?.first?["error"] as? String
            #expect(reason?.contains("no such event type") == true, "\(String(describing: reason))")
            let human = try await trendy(["status"], phone, server)
            #expect(human.stdout.contains("trendy events edit <id>"), "\(human.stdout)")
            let kept = try await events(phone).first { $0["notes"] as? String == "kept" }
            #expect(kept?["sync_status"] as? String == "failed")
            let keptId = try #require(kept?["id"] as? String)

            #expect(try await trendy(["events", "edit", keptId, "--type", "Tea"], phone, server).status == 0)
            #expect(try await trendy(["sync"], phone, server).status == 0)
            let after = json(try await trendy(["status", "--json"], phone, server)) as? [String: Any]
            #expect(after?["failed"] as? Int == 0)
            #expect(after?["pending"] as? Int == 0)
            #expect(try await trendy(["sync"], laptop, server).status == 0)
            let onLaptop = try await events(laptop)
            #expect(Set(onLaptop.compactMap { $0["notes"] as? String }) == ["green", "kept"])
            #expect(onLaptop.allSatisfy { $0["type"] as? String == "Tea" })

            // Removing: gone here at once, from the server with the next sync.
            let removed = try await trendy(["events", "rm", tea], phone, server)
            #expect(removed.status == 0, "\(removed.stderr)")
            #expect(try await events(phone).count == 1)
            #expect(try await trendy(["sync"], phone, server).status == 0)
            #expect(try await trendy(["sync"], laptop, server).status == 0)
            #expect(try await events(laptop).compactMap { $0["id"] as? String } == [keptId])

            // Bad input: a clear error and a non-zero exit, nothing changed.
            #expect(try await trendy(["events", "edit", keptId], phone, server).status == 64)
            #expect(try await trendy(["events", "edit", "not-an-id", "--note", "x"], phone, server).status == 64)
            #expect(try await trendy(["events", "edit", tea, "--note", "x"], phone, server).status == 65)
            #expect(try await trendy(["events", "edit", keptId, "--type", "Nope"], phone, server).status == 65)
            #expect(try await trendy(["events", "rm", tea], phone, server).status == 65)
            #expect(try await events(phone).first?["notes"] as? String == "kept")
        }
    }

    /// Both devices add "Coffee" and log a cup before either syncs: after syncing, both have one
    /// Coffee type holding both cups, and nothing failed.
    @Test func aTypeAddedOnBothDevicesBecomesOne() async throws {
        try await AuthCLITests.withServer { server in
            let phone = TemporaryDirectory("trendy-it", create: false)
            let laptop = TemporaryDirectory("trendy-it", create: false)
            for (dir, verb, name) in [(phone, "signup", "Coffee"), (laptop, "login", "coffee")] {
                try await signIn(verb, "f@example.com", dir, server)
                #expect(try await trendy(["types", "add", name], dir, server).status == 0)
                #expect(try await trendy(["log", name, "--note", "cup on \(verb)"], dir, server).status == 0)
            }
            for dir in [phone, laptop, phone] { #expect(try await trendy(["sync"], dir, server).status == 0) }
            for dir in [phone, laptop] {
                let status = json(try await trendy(["status", "--json"], dir, server)) as? [String: Any]
                #expect(status?["failed"] as? Int == 0, "\(String(describing: status))")
                #expect(status?["pending"] as? Int == 0)
                let types =
                    (json(try await trendy(["types", "list", "--json"], dir, server)) as? [[String: Any]]) ?? []
                #expect(types.compactMap { $0["name"] as? String } == ["Coffee"])
                let events = try await events(dir, server)
                #expect(Set(events.compactMap { $0["notes"] as? String }) == ["cup on signup", "cup on login"])
                #expect(events.allSatisfy { $0["type"] as? String == "Coffee" })
            }
        }
    }

    @Test func offlineWritesStayQueuedAndFailuresAreClear() async throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        let offline = ["--api-url", "http://127.0.0.1:1"]
        // Signed out: sync refuses clearly.
        let signedOut = try await TrendyProcess.run(["sync", "--data-dir", dir.path] + offline)
        #expect(signedOut.status == 77)
        let unknown = try await TrendyProcess.run(["log", "Nope", "--data-dir", dir.path] + offline)
        #expect(unknown.status == 65)
        #expect(unknown.stderr.contains("trendy types add Nope"))
        let badTime = try await TrendyProcess.run(["types", "add", "Tea", "--data-dir", dir.path] + offline)
        #expect(badTime.status == 0)
        let when = try await TrendyProcess.run(
            ["log", "Tea", "--at", "teatime", "--data-dir", dir.path] + offline)
        #expect(when.status == 64)
        // Impossible dates are refused, not rolled over (Feb 30 used to become Mar 2).
        for impossible in ["2026-02-30T10:00:00Z", "2026-04-31T10:00:00Z", "2026-11-22T10:00:60Z"] {
            let rolled = try await TrendyProcess.run(
                ["log", "Tea", "--at", impossible, "--data-dir", dir.path] + offline)
            #expect(rolled.status == 64, "\(impossible)")
            #expect(rolled.stderr.contains("is not a time"))
        }
        let missing = try await TrendyProcess.run(
            ["import", "/nonexistent.csv", "--data-dir", dir.path] + offline)
        #expect(missing.status == 66)
        let badFile = dir.url.appendingPathComponent("x.json")
        try Data("{not json".utf8).write(to: badFile)
        let malformed = try await TrendyProcess.run(["import", badFile.path, "--data-dir", dir.path] + offline)
        #expect(malformed.status == 65)
        #expect(malformed.stderr.contains("not valid JSON"))
    }
}
