import Foundation
import GRDB
import Testing
import TrendyModels
import TrendyServer
import TrendyTestSupport

/// A damaged local database: a clear error, then `trendy repair` keeps the unsynced changes it
/// can still read and the next sync brings back the rest from the server.
@Suite(.timeLimit(.minutes(5)))
struct RepairCLITests {
    let cli = LaunchCLITests()

    func trendy(_ args: [String], _ dir: TemporaryDirectory, _ api: String, stdin: String? = nil) async throws
        -> TrendyProcess.Result
    {
        try await cli.trendy(args, dir, api: api, stdin: stdin)
    }

    func events(_ r: TrendyProcess.Result) -> [[String: Any]] { cli.array(r) }

    /// Overwrites the root page of `table` with garbage, as a bad sector or a torn write would.
    static func corrupt(_ table: String, in file: URL) throws {
        let queue = try DatabaseQueue(path: file.path)
        let (root, pageSize) = try queue.writeWithoutTransaction { db -> (Int, Int) in
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            return (
                try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = ?", arguments: [table]) ?? 0,
                try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
            )
        }
        try queue.close()
        let handle = try FileHandle(forWritingTo: file)
        try handle.seek(toOffset: UInt64((root - 1) * pageSize))
        handle.write(Data((0..<pageSize).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }))
        try handle.close()
    }

    @Test func aDamagedTableIsReportedAndRepairKeepsTheUnsyncedChanges() async throws {
        try await LaunchCLITests.withServer { _, running in
            let api = running.baseURL.absoluteString
            let dir = TemporaryDirectory("trendy-it", create: false)
            let signup = try await trendy(
                ["signup", "--email", "repair@example.com", "--password-stdin"], dir, api, stdin: "repair-pass-1\n")
            #expect(signup.status == 0, "\(signup.stderr)")
            #expect(try await trendy(["types", "add", "Tea"], dir, api).status == 0)
            for hour in 10...12 {
                #expect(try await trendy(["log", "Tea", "--at", "2026-11-20T\(hour):00:00Z"], dir, api).status == 0)
            }
            #expect(try await trendy(["sync"], dir, api).status == 0)
            // Two changes that exist only here.
            for hour in 13...14 {
                #expect(try await trendy(["log", "Tea", "--at", "2026-11-20T\(hour):00:00Z"], dir, api).status == 0)
            }
            try Self.corrupt("local_events", in: dir.url.appendingPathComponent("trendy.sqlite"))

            let broken = try await trendy(["events", "list", "--json"], dir, api)
            #expect(broken.status == 74)
            #expect(broken.stdout.contains("database_damaged"))
            #expect(broken.stdout.contains("trendy repair"))

            let repair = try await trendy(["repair", "--json"], dir, api)
            #expect(repair.status == 0, "\(repair.stderr)")
            let report = cli.json(repair)
            #expect(report["pending_changes"] as? Int == 2)
            #expect(report["unreadable"] as? [String] == ["local_events"], "only the damaged table")
            #expect(FileManager.default.fileExists(atPath: report["moved_to"] as? String ?? "/nonexistent"))
            #expect(report["restored_from_outbox"] as? Int == 2)
            // Before any sync the unsynced events are back in the list (rebuilt from their
            // queued changes), not "No events." beside "2 pending".
            let repaired = events(try await trendy(["events", "list", "--json"], dir, api))
            #expect(
                repaired.compactMap { $0["timestamp"] as? String }.map { String($0.prefix(13)) }.sorted() == [
                    "2026-11-20T13", "2026-11-20T14",
                ])
            #expect(repaired.allSatisfy { $0["sync_status"] as? String == "pending" })

            let sync = try await trendy(["sync", "--json"], dir, api)
            #expect(sync.status == 0, "\(sync.stderr)")
            let local = events(try await trendy(["events", "list", "--json"], dir, api))
            #expect(local.count == 5)
            #expect(local.allSatisfy { $0["sync_status"] as? String == "synced" })

            let remote = try await cli.serverEvents("repair@example.com", password: "repair-pass-1", api: api)
            #expect(remote.count == 5)
            let db = try DatabaseQueue(path: dir.url.appendingPathComponent("trendy.sqlite").path)
            #expect(try await db.read { try String.fetchAll($0, sql: "PRAGMA integrity_check") } == ["ok"])
        }
    }

    /// A repair of a healthy database says nothing is unreadable (it listed the insights plugin's
    /// aggregates, tables it must not copy), and the insights afterwards are the insights before:
    /// the aggregates are rebuilt from the events once, not copied beside them (twice).
    @Test func aHealthyRepairReadsEverythingAndCountsEachEventOnce() async throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        let offline = ["--api-url", "http://127.0.0.1:9"]
        #expect(try await trendy(["types", "add", "Tea"], dir, offline[1]).status == 0)
        for day in 10...20 {
            let logged = try await trendy(["log", "Tea", "--at", "2026-11-\(day)T09:00:00Z"], dir, offline[1])
            #expect(logged.status == 0, "\(logged.stderr)")
        }
        let at = ["insights", "--json", "--at", "2026-11-21T12:00:00Z"]
        let before = try await trendy(at, dir, offline[1])
        #expect(before.status == 0, "\(before.stderr)")
        let repair = try await trendy(["repair"], dir, offline[1])
        #expect(repair.status == 0, "\(repair.stderr)")
        #expect(!repair.stdout.contains("Could not read"), "\(repair.stdout)")
        let after = try await trendy(at, dir, offline[1])
        #expect(after.stdout == before.stdout, "the same insights, each event counted once")
    }

    /// Modes of every file in the data directory (recursively), by relative path.
    static func modes(_ dir: URL) throws -> [String: Int] {
        var modes: [String: Int] = [:]
        let fm = FileManager.default
        for case let path as String in fm.enumerator(atPath: dir.path) ?? FileManager.DirectoryEnumerator() {
            let attributes = try fm.attributesOfItem(atPath: dir.appendingPathComponent(path).path)
            guard attributes[.type] as? FileAttributeType == .typeRegular else { continue }
            modes[path] = (attributes[.posixPermissions] as? Int) ?? -1
        }
        return modes
    }

    @Test func everyFileInTheDataDirectoryIsOwnerOnly() async throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        // The embedded backend (server.sqlite), the install database with its WAL, a repair.
        let signup = try await TrendyProcess.run(
            ["signup", "--email", "modes@example.com", "--password-stdin", "--data-dir", dir.path],
            stdin: "modes-pass-1\n")
        #expect(signup.status == 0, "\(signup.stderr)")
        #expect(try await TrendyProcess.run(["types", "add", "Tea", "--data-dir", dir.path]).status == 0)
        #expect(try await TrendyProcess.run(["repair", "--data-dir", dir.path]).status == 0)
        #expect(try await TrendyProcess.run(["log", "Tea", "--data-dir", dir.path]).status == 0)
        let modes = try Self.modes(dir.url)
        #expect(modes["trendy.sqlite"] != nil)
        #expect(modes["server.sqlite"] != nil)
        #expect(modes.filter { $0.value != 0o600 }.isEmpty, "\(modes.filter { $0.value != 0o600 })")

        // An install an older version left 0644 is tightened on the next open, the session file
        // with its tokens and the onboarding cache included.
        for name in ["trendy.sqlite", "session.json", "onboarding.json"] {
            chmod(dir.url.appendingPathComponent(name).path, 0o644)
        }
        for folder in [dir.url, dir.url.appendingPathComponent("logs")] { chmod(folder.path, 0o755) }
        #expect(try await TrendyProcess.run(["status", "--data-dir", dir.path]).status == 0)
        let after = try Self.modes(dir.url)
        for name in ["trendy.sqlite", "session.json", "onboarding.json"] { #expect(after[name] == 0o600, "\(name)") }
        for folder in [dir.url, dir.url.appendingPathComponent("logs")] {
            let mode = try FileManager.default.attributesOfItem(atPath: folder.path)[.posixPermissions] as? Int
            #expect(mode == 0o700, "\(folder.lastPathComponent)")
        }
    }

    /// `trendy repair` killed with SIGKILL at random moments: every unsynced change is still
    /// there afterwards (the outsider's sequence lost them at 30–80 ms).
    @Test func aKilledRepairLosesNothing() async throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        let csv = dir.url.appendingPathComponent("rows.csv")
        var text = "type,timestamp\n"
        for i in 0..<1_500 {
            text += "Tea,2026-01-01T\(String(format: "%02d:%02d:%02d", i / 3600, i / 60 % 60, i % 60))Z\n"
        }
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        try text.write(to: csv, atomically: true, encoding: .utf8)
        #expect(try await TrendyProcess.run(["import", csv.path, "--data-dir", dir.path]).status == 0)
        func pending() async throws -> Int? {
            let status = try await TrendyProcess.run(["status", "--json", "--data-dir", dir.path])
            #expect(status.status == 0, "\(status.stderr)")
            return cli.json(status)["pending"] as? Int
        }
        let before = try await pending()
        #expect(before == 1_501)
        var rng = SplitMix64(seed: UInt64(ProcessInfo.processInfo.environment["TRENDY_REPAIR_KILL_SEED"] ?? "") ?? 7)
        for trial in 0..<12 {
            let delay = Duration.milliseconds(Int.random(in: 5...150, using: &rng))
            try await TrendyProcess.killed(["repair", "--data-dir", dir.path], after: delay)
            #expect(try await pending() == before, "trial \(trial), killed after \(delay)")
        }
        let list = try await TrendyProcess.run([
            "events", "list", "--limit", "10000", "--json", "--data-dir", dir.path,
        ])
        #expect(cli.array(list).count == 1_500)
    }

    @Test func aFileThatIsNotADatabaseGetsTheSameWayOut() async throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        let offline = LaunchCLITests.unreachable
        #expect(try await trendy(["types", "add", "Tea"], dir, offline).status == 0)
        let file = dir.url.appendingPathComponent("trendy.sqlite")
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file.path + suffix) }
        try Data(repeating: 0x5A, count: 64 * 1024).write(to: file)
        let broken = try await trendy(["types", "list"], dir, offline)
        #expect(broken.status == 74)
        #expect(broken.stderr.contains("trendy repair"))
        let repair = try await trendy(["repair", "--json"], dir, offline)
        #expect(repair.status == 0, "\(repair.stderr)")
        #expect(cli.json(repair)["unreadable"] as? [String] == ["*"])
        #expect(try await trendy(["types", "list"], dir, offline).status == 0)
    }
}
