import Foundation
import GRDB
import Testing
import TrendyLogging
import TrendyModels
import TrendyServer
import TrendySync
import TrendySyncLive
import TrendyTestSupport

/// The real `trendy` against the real server, killed with SIGKILL at random moments during
/// imports, pushes, pulls, full re-downloads, geofence wake-ups and pushes of bulk edits (sent in
/// batches, `POST /events/edits`); then restarted until it converges. Every event created locally
/// must be on the server exactly once with its last edit, nothing local may be lost, and SQLite's
/// integrity check must pass.
///
/// `TRENDY_TORTURE_TRIALS` sets the number of kills (CI and the default: 50).
@Suite(.timeLimit(.minutes(10)))
struct CrashTortureTests {
    let cli = LaunchCLITests()

    static var trials: Int {
        Int(ProcessInfo.processInfo.environment["TRENDY_TORTURE_TRIALS"] ?? "") ?? 50
    }

    func trendy(_ args: [String], _ dir: TemporaryDirectory, _ api: String, stdin: String? = nil) async throws
        -> TrendyProcess.Result
    {
        try await cli.trendy(args, dir, api: api, stdin: stdin)
    }

    func events(_ r: TrendyProcess.Result) -> [[String: Any]] { cli.array(r) }

    /// Starts `trendy` with `arguments` and kills it after `delay`.
    func killed(_ arguments: [String], after delay: Duration) async throws {
        try await TrendyProcess.killed(arguments, after: delay)
    }

    /// Every log line written by all those runs (and their export) holds no secret and no
    /// unmasked email address.
    func expectNoSecretsInLogs(_ dir: TemporaryDirectory, _ api: String) async throws {
        let bundle = dir.url.appendingPathComponent("logs-export.txt")
        #expect(try await trendy(["logs", "export", bundle.path], dir, api).status == 0)
        let logs = try String(contentsOf: bundle, encoding: .utf8)
        let session = try #require(
            FileManager.default.contents(atPath: dir.url.appendingPathComponent("session.json").path))
        let sessionObject = try JSONSerialization.jsonObject(with: session) as? [String: Any]
        let stored = sessionObject?["session"] as? [String: Any]
        for secret in [
            "torture-pass-1", "torture@example.com", stored?["access_token"] as? String ?? "-",
            stored?["refresh_token"] as? String ?? "-",
        ] {
            #expect(!logs.contains(secret), "a log holds \(secret.prefix(12))…")
        }
        #expect(logs.range(of: #"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"#, options: .regularExpression) == nil)
        #expect(logs.range(of: #"[A-Za-z0-9._%+-]{2,}@example\.com"#, options: .regularExpression) == nil)
    }

    /// A visit's enter and exit, each delivered to a launch killed after `delay` and delivered
    /// again (the system redelivers what the app did not finish) to a normal run.
    func killedVisit(home: String, at t: Date, after delay: Duration, _ dir: TemporaryDirectory, _ api: String)
        async throws
    {
        let common = ["--data-dir", dir.path, "--api-url", api]
        let enter = "enter:\(home)@\(ISO8601DateFormatter().string(from: t))"
        let exit = "exit:\(home)@\(ISO8601DateFormatter().string(from: t.addingTimeInterval(3_600)))"
        for crossing in [enter, exit] {
            try await killed(["launch", "--region-event", crossing] + common, after: delay)
            #expect(try await trendy(["launch", "--no-wait", "--region-event", crossing], dir, api).status == 0)
        }
    }

    /// A bulk edit made by another process of the install (up to 300 events' notes, as the app
    /// or an import beside the CLI would), then a sync killed after `delay`: batches in flight.
    func killedBulkEdit(trial: Int, after delay: Duration, _ dir: TemporaryDirectory, _ api: String) async throws {
        let pool = try DatabasePool(path: dir.url.appendingPathComponent("trendy.sqlite").path)
        let store = SQLiteLocalStore(database: pool, logger: LogSystem.disabled().logger(.data))
        for record in try await store.events(limit: 300, since: nil) {
            var event = record.value
            event.notes = "bulk \(trial)"
            try await store.updateEvent(event)
        }
        try pool.close()
        try await killed(["sync", "--data-dir", dir.path, "--api-url", api], after: delay)
    }

    /// After the kills: every import finished (idempotent), any captured crossing handled, then
    /// syncs until nothing is pending.
    func converge(finishing imports: [URL], _ dir: TemporaryDirectory, _ api: String) async throws {
        for file in imports {
            let r = try await trendy(["import", file.path], dir, api)
            #expect(r.status == 0, "\(r.stderr)")
        }
        #expect(try await trendy(["launch"], dir, api).status == 0)  // handles any captured crossing
        var pending = -1
        for _ in 0..<5 where pending != 0 {
            _ = try await trendy(["sync"], dir, api)
            pending = cli.json(try await trendy(["status", "--json"], dir, api))["pending"] as? Int ?? -1
        }
        #expect(pending == 0)
    }

    @Test func killedAtRandomMomentsItStillConvergesWithEveryEventOnTheServerExactlyOnce() async throws {
        try await LaunchCLITests.withServer { _, running in
            let api = running.baseURL.absoluteString
            let dir = TemporaryDirectory("trendy-it", create: false)
            let signup = try await trendy(
                ["signup", "--email", "torture@example.com", "--password-stdin"], dir, api, stdin: "torture-pass-1\n")
            #expect(signup.status == 0, "\(signup.stderr)")
            for name in ["Walk", "Coffee"] { #expect(try await trendy(["types", "add", name], dir, api).status == 0) }
            let fence = try await trendy(
                ["geofence", "add", "Home", "52.52", "13.405", "--type", "Walk", "--json"], dir, api)
            let home = try #require(cli.json(fence)["id"] as? String)

            var rng = SystemRandomNumberGenerator()
            var imports: [URL] = []
            var expectedTimestamps = Set<String>()  // every event any trial tried to create
            let base = Date(timeIntervalSince1970: 1_700_000_000)
            var kinds: [String: Int] = [:]
            for trial in 0..<Self.trials {
                let common = ["--data-dir", dir.path, "--api-url", api]
                let delay = Duration.milliseconds(Int.random(in: 20...600, using: &rng))
                switch trial % 6 {
                case 0:
                    // An import of 400 new rows (one transaction of at most 1,000).
                    let file = dir.url.appendingPathComponent("import-\(trial).csv")
                    var text = "type,timestamp,notes\n"
                    for i in 0..<400 {
                        let t = ISO8601DateFormatter().string(from: base.addingTimeInterval(Double(trial * 1_000 + i)))
                        text += "Coffee,\(t),trial \(trial)\n"
                        expectedTimestamps.insert(t)
                    }
                    try text.write(to: file, atomically: true, encoding: .utf8)
                    imports.append(file)
                    try await killed(["import", file.path] + common, after: delay)
                    kinds["import", default: 0] += 1
                case 1, 3:
                    // A push (and the pull that follows it).
                    try await killed(["sync"] + common, after: delay)
                    kinds["sync", default: 0] += 1
                case 2:
                    // A full re-download.
                    try await killed(["sync", "--full"] + common, after: delay)
                    kinds["sync --full", default: 0] += 1
                case 5:
                    try await killedBulkEdit(trial: trial, after: delay, dir, api)
                    kinds["bulk edit", default: 0] += 1
                default:
                    // A geofence wake-up: an enter, or the exit closing it.
                    let t = base.addingTimeInterval(Double(10_000_000 + trial / 5 * 86_400))
                    try await killedVisit(home: home, at: t, after: delay, dir, api)
                    expectedTimestamps.insert(ISO8601DateFormatter().string(from: t))
                    kinds["geofence", default: 0] += 1
                }
            }

            try await converge(finishing: imports, dir, api)

            // Nothing local lost: every event any trial created is here, once.
            let local = events(try await trendy(["events", "list", "--limit", "10000", "--json"], dir, api))
            let localTimes = local.compactMap { $0["timestamp"] as? String }.map { String($0.prefix(19)) + "Z" }
            #expect(
                Set(localTimes) == expectedTimestamps, "missing \(expectedTimestamps.subtracting(localTimes).count)")
            #expect(localTimes.count == Set(localTimes).count, "duplicates locally")
            #expect(local.allSatisfy { $0["sync_status"] as? String == "synced" })

            // On the server exactly once: a second device downloads everything.
            let remote = try await cli.serverEvents("torture@example.com", password: "torture-pass-1", api: api)
            #expect(Set(remote.compactMap { $0["id"] as? String }) == Set(local.compactMap { $0["id"] as? String }))
            #expect(remote.count == local.count)
            // With every edit: the last bulk edit's notes, the same on both.
            func notes(_ events: [[String: Any]]) -> [String: String] {
                Dictionary(events.compactMap { e in (e["id"] as? String).map { ($0, e["notes"] as? String ?? "") } }) {
                    a, _ in a
                }
            }
            #expect(notes(remote) == notes(local))
            #expect(local.contains { ($0["notes"] as? String)?.hasPrefix("bulk") == true })
            // Geofence visits are complete.
            for e in remote where e["source_type"] as? String == "geofence" { #expect(e["end_date"] != nil) }

            // The database survived every kill.
            let db = try DatabaseQueue(path: dir.url.appendingPathComponent("trendy.sqlite").path)
            let check = try await db.read { try String.fetchAll($0, sql: "PRAGMA integrity_check") }
            #expect(check == ["ok"])
            try await expectNoSecretsInLogs(dir, api)
            print("crash torture: \(Self.trials) kills \(kinds), \(local.count) events converged")
        }
    }

    /// One event edited again and again, each edit followed by a sync killed at a random moment:
    /// the last edit is what the server and the device end with, and nothing is left failed (an
    /// edit made after a killed send must not be folded into the entry the server already has).
    @Test func editsBetweenKilledSyncsEndWithTheLastEdit() async throws {
        try await LaunchCLITests.withServer { _, running in
            let api = running.baseURL.absoluteString
            let dir = TemporaryDirectory("trendy-it", create: false)
            let signup = try await trendy(
                ["signup", "--email", "edits@example.com", "--password-stdin"], dir, api, stdin: "edits-pass-1\n")
            #expect(signup.status == 0, "\(signup.stderr)")
            #expect(try await trendy(["types", "add", "Tea"], dir, api).status == 0)
            let logged = try await trendy(["log", "Tea", "--note", "v0", "--sync", "--json"], dir, api)
            let id = try #require(cli.json(logged)["id"] as? String)
            var rng = SystemRandomNumberGenerator()
            let trials = max(8, Self.trials / 2)
            for trial in 1...trials {
                let edit = try await trendy(["events", "edit", id, "--note", "v\(trial)"], dir, api)
                #expect(edit.status == 0, "\(edit.stderr)")
                try await killed(
                    ["sync", "--data-dir", dir.path, "--api-url", api],
                    after: .milliseconds(Int.random(in: 10...250, using: &rng)))
            }
            var status: [String: Any] = [:]
            for _ in 0..<5 where (status["pending"] as? Int) != 0 {
                _ = try await trendy(["sync"], dir, api)
                status = cli.json(try await trendy(["status", "--json"], dir, api))
            }
            #expect(status["pending"] as? Int == 0)
            #expect(status["failed"] as? Int == 0, "\(status)")
            let local = events(try await trendy(["events", "list", "--json"], dir, api))
            #expect(local.map { $0["notes"] as? String } == ["v\(trials)"])
            let remote = try await cli.serverEvents("edits@example.com", password: "edits-pass-1", api: api)
            #expect(remote.map { $0["notes"] as? String } == ["v\(trials)"])
        }
    }
}
