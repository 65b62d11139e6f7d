import Foundation
import Testing
import TrendyLogging
import TrendyServer
import TrendyTestSupport

/// Geofencing as the real binary against the real dev server: GPX replays, background launches,
/// bad input.
@Suite(.timeLimit(.minutes(5)))
struct GeofenceCLITests {
    let cli = LaunchCLITests()

    func trendy(_ args: [String], _ dir: TemporaryDirectory, _ api: String?, stdin: String? = nil) async throws
        -> TrendyProcess.Result
    {
        try await cli.trendy(args, dir, api: api, stdin: stdin)
    }

    func object(_ r: TrendyProcess.Result) -> [String: Any] { cli.json(r) }

    func array(_ r: TrendyProcess.Result) -> [[String: Any]] { cli.array(r) }

    /// Signs up, adds an event type per name and a geofence for each; returns the geofence ids.
    func setUp(
        _ dir: TemporaryDirectory, _ api: String, email: String, places: [(String, Double, Double)]
    ) async throws -> [String: String] {
        let signup = try await trendy(
            ["signup", "--email", email, "--password-stdin"], dir, api, stdin: "password-geofence-1\n")
        #expect(signup.status == 0, "\(signup.stderr)")
        var ids: [String: String] = [:]
        for (name, lat, lon) in places {
            #expect(try await trendy(["types", "add", name], dir, api).status == 0)
            let r = try await trendy(
                ["geofence", "add", name, "\(lat)", "\(lon)", "--radius", "100", "--type", name, "--json"], dir, api)
            #expect(r.status == 0, "\(r.stderr)")
            ids[name] = object(r)["id"] as? String
            #expect(object(r)["monitored"] as? Bool == true)
        }
        return ids
    }

    /// A GPX track through `points`, one fix per minute from 08:00.
    func gpx(_ points: [(Double, Double)]) -> String {
        var text = "<?xml version=\"1.0\"?>\n<gpx version=\"1.1\" creator=\"tests\"><trk><trkseg>\n"
        for (i, p) in points.enumerated() {
            let time = Date(timeIntervalSince1970: 1_795_852_800 + Double(i) * 60)  // 2026-11-28T08:00:00Z
            text += "<trkpt lat=\"\(p.0)\" lon=\"\(p.1)\"><time>\(ISO8601Format(time))</time></trkpt>\n"
        }
        return text + "</trkseg></trk></gpx>\n"
    }

    func ISO8601Format(_ d: Date) -> String {
        let f = ISO8601DateFormatter()
        return f.string(from: d)
    }

    /// Metres north of a latitude, in degrees.
    func north(_ lat: Double, _ metres: Double) -> Double { lat + metres / 111_195 }

    @Test func aReplayedTrackLogsEachVisitOnceAndTheServerGetsThemComplete() async throws {
        try await LaunchCLITests.withServer { _, running in
            let api = running.baseURL.absoluteString
            let dir = TemporaryDirectory("trendy-it", create: false)
            let home = (52.52, 13.405)
            let cafe = (north(52.52, 3_000), 13.405)
            _ = try await setUp(
                dir, api, email: "walker@example.com", places: [("Home", home.0, home.1), ("Cafe", cafe.0, cafe.1)])
            // Start 1 km south, walk into Home, linger on its edge, walk to the Cafe, stay, walk away.
            var points: [(Double, Double)] = []
            // 08:00-08:04: the arrival is the fix at 0 m.
            for m in stride(from: -1_000.0, through: 0, by: 250) { points.append((north(52.52, m), 13.405)) }
            // 08:05-08:09 on the edge: hysteresis keeps it inside.
            for m in [80.0, 110, 95, 120, 60] { points.append((north(52.52, m), 13.405)) }
            // 08:10 at 500 m: left; 08:15 at the Cafe.
            for m in stride(from: 500.0, through: 3_000, by: 500) { points.append((north(52.52, m), 13.405)) }
            for _ in 0..<3 { points.append(cafe) }
            points.append((north(52.52, 5_000), 13.405))
            let track = dir.url.appendingPathComponent("walk.gpx")
            try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
            try gpx(points).write(to: track, atomically: true, encoding: .utf8)

            let replay = try await trendy(["location", "replay", track.path, "--json"], dir, api)
            #expect(replay.status == 0, "\(replay.stderr)")
            let result = object(replay)
            #expect(result["fixes"] as? Int == points.count)
            #expect(result["created"] as? Int == 2)
            #expect(result["closed"] as? Int == 2)

            // Replaying the same track again changes nothing: the visits are in the past.
            let again = try await trendy(["location", "replay", track.path, "--json"], dir, api)
            #expect(again.status == 0, "\(again.stderr)")
            #expect(object(again)["created"] as? Int == 0)

            #expect(try await trendy(["sync"], dir, api).status == 0)
            // A second device signed in to the same account sees what the server has.
            let other = TemporaryDirectory("trendy-it", create: false)
            let login = try await trendy(
                ["login", "--email", "walker@example.com", "--password-stdin"], other, api,
                stdin: "password-geofence-1\n")
            #expect(login.status == 0, "\(login.stderr)")
            #expect(try await trendy(["location", "permission", "always"], other, api).status == 0)
            #expect(try await trendy(["sync"], other, api).status == 0)
            // The synced geofences are monitored there too.
            let shown = object(try await trendy(["location", "show", "--json"], other, api))
            #expect((shown["monitored"] as? [[String: Any]])?.count == 2)
            let events = array(try await trendy(["events", "list", "--json"], other, api))
            #expect(events.count == 2)
            let byType = Dictionary(
                uniqueKeysWithValues: events.compactMap { e in (e["type"] as? String).map { ($0, e) } })
            #expect(byType["Home"]?["timestamp"] as? String == "2026-11-28T08:04:00.000Z")
            #expect(byType["Home"]?["end_date"] as? String == "2026-11-28T08:10:00.000Z")
            #expect(byType["Cafe"]?["timestamp"] as? String == "2026-11-28T08:15:00.000Z")
            #expect(byType["Cafe"]?["end_date"] as? String == "2026-11-28T08:19:00.000Z")
            #expect(events.allSatisfy { $0["source_type"] as? String == "geofence" })
        }
    }

    @Test func aBackgroundLaunchRecordsItsCrossingOnceEvenWhenRepeatedOrConcurrent() async throws {
        try await LaunchCLITests.withServer { _, running in
            let api = running.baseURL.absoluteString
            let dir = TemporaryDirectory("trendy-it", create: false)
            let ids = try await setUp(dir, api, email: "sleeper@example.com", places: [("Gym", 48.2, 16.37)])
            let gym = try #require(ids["Gym"])
            let enter = "enter:\(gym)@2026-11-22T07:00:00Z"
            // Two wake-ups for the same arrival at once, then a third later: one visit.
            async let a = trendy(["launch", "--json", "--region-event", enter], dir, api)
            async let b = trendy(["launch", "--json", "--region-event", enter], dir, api)
            let (ra, rb) = try await (a, b)
            #expect(ra.status == 0, "\(ra.stderr)")
            #expect(rb.status == 0, "\(rb.stderr)")
            let third = try await trendy(["launch", "--json", "--region-event", enter], dir, api)
            let outcomes = [ra, rb, third].flatMap { r in
                (object(r)["crossings"] as? [[String: Any]] ?? []).compactMap { $0["outcome"] as? String }
            }
            #expect(outcomes.filter { $0 == "created" }.count == 1, "\(outcomes)")
            // The two at once share the inbox: one may also meet the other's crossing, which the
            // ledger then reports as already handled.
            #expect(outcomes.filter { $0 != "already_handled" }.count == 3, "\(outcomes)")
            #expect(Set(outcomes).isSubset(of: ["created", "duplicate", "already_handled"]), "\(outcomes)")

            let exit = try await trendy(
                ["launch", "--json", "--region-event", "exit:trendy.geofence.\(gym)@2026-11-22T08:30:00Z"], dir, api)
            #expect(exit.status == 0, "\(exit.stderr)")
            #expect((object(exit)["crossings"] as? [[String: Any]])?.first?["outcome"] as? String == "closed")
            // The launch's own sync pass pushed it; the server copy is complete.
            let events = array(try await trendy(["events", "list", "--json"], dir, api))
            #expect(events.count == 1)
            #expect(events.first?["timestamp"] as? String == "2026-11-22T07:00:00.000Z")
            #expect(events.first?["end_date"] as? String == "2026-11-22T08:30:00.000Z")
            #expect(events.first?["sync_status"] as? String == "synced")
        }
    }

    @Test func aBackgroundLaunchKilledAtAnyMomentStillRecordsTheCrossingExactlyOnce() async throws {
        try await LaunchCLITests.withServer { _, running in
            let api = running.baseURL.absoluteString
            let dir = TemporaryDirectory("trendy-it", create: false)
            let ids = try await setUp(dir, api, email: "killed@example.com", places: [("Pool", 40.4, -3.7)])
            let pool = try #require(ids["Pool"])
            var rng = SystemRandomNumberGenerator()
            // Each crossing: a wake-up killed at a random moment, then the system's redelivery (a
            // normal launch with the same crossing). Whatever the kill interrupted, each visit
            // must exist exactly once and be complete.
            for day in 1...3 {
                for (kind, hour) in [("enter", "09"), ("exit", "10")] {
                    let event = "\(kind):\(pool)@2026-11-2\(day)T\(hour):00:00Z"
                    let process = try ChildProcess(
                        TrendyProcess.binary,
                        ["launch", "--data-dir", dir.path, "--api-url", api, "--region-event", event],
                        environment: ProcessInfo.processInfo.environment)
                    try await Task.sleep(for: .milliseconds(Int.random(in: 5...150, using: &rng)))
                    process.send(SIGKILL)
                    process.waitUntilExit()
                    let again = try await trendy(["launch", "--json", "--region-event", event], dir, api)
                    #expect(again.status == 0, "\(again.stderr)")
                }
            }
            let health = object(try await trendy(["geofence", "health", "--json"], dir, api))
            #expect(health["inbox_pending"] as? Int == 0)
            let events = array(try await trendy(["events", "list", "--json"], dir, api))
            #expect(events.count == 3)
            #expect(
                Set(events.compactMap { $0["timestamp"] as? String }) == [
                    "2026-11-21T09:00:00.000Z", "2026-11-22T09:00:00.000Z", "2026-11-23T09:00:00.000Z",
                ])
            for e in events {
                #expect(e["source_type"] as? String == "geofence")
                #expect((e["end_date"] as? String)?.hasSuffix("T10:00:00.000Z") == true, "\(e)")
            }
            // The server agrees once everything is pushed.
            #expect(try await trendy(["sync"], dir, api).status == 0)
            #expect(
                try await cli.serverEvents("killed@example.com", password: "password-geofence-1", api: api).count == 3)
        }
    }

    @Test func badInputGetsAClearErrorAndAnExitCode() async throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        let offline = LaunchCLITests.unreachable
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        let bad = dir.url.appendingPathComponent("bad.gpx")
        try "<gpx>\n<trk><trkseg>\n<trkpt lat=\"95\" lon=\"1\"/>\n</trkseg></trk></gpx>".write(
            to: bad, atomically: true, encoding: .utf8)
        var r = try await trendy(["location", "replay", bad.path], dir, offline)
        #expect(r.status == 65)
        #expect(r.stderr.contains("line 3, <trkpt>: lat \"95\" is not a latitude"), "\(r.stderr)")
        r = try await trendy(["location", "replay", dir.url.appendingPathComponent("missing.gpx").path], dir, offline)
        #expect(r.status == 66)
        r = try await trendy(["launch", "--region-event", "arrive:nope"], dir, offline)
        #expect(r.status == 64)
        #expect(!FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("region-inbox").path))
        r = try await trendy(["location", "set", "91", "0"], dir, offline)
        #expect(r.status == 64)
        #expect(try await trendy(["types", "add", "Gym"], dir, offline).status == 0)
        r = try await trendy(["geofence", "add", "Gym", "1", "2", "--type", "Nope"], dir, offline)
        #expect(r.status == 65)
        r = try await trendy(["geofence", "add", "Gym", "1", "2", "--type", "Gym", "--radius", "5"], dir, offline)
        #expect(r.status == 65)
        #expect(r.stderr.contains("radius"), "\(r.stderr)")
        r = try await trendy(["geofence", "rm", "Nowhere"], dir, offline)
        #expect(r.status == 65)
        let list = array(try await trendy(["geofence", "list", "--json"], dir, offline))
        #expect(list.isEmpty)
    }

    @Test func allowingLocationDuringOnboardingGrantsAlwaysInTwoSteps() async throws {
        try await LaunchCLITests.withServer { _, running in
            let api = running.baseURL.absoluteString
            let dir = TemporaryDirectory("trendy-it", create: false)
            #expect(try await trendy(["onboarding", "next"], dir, api).status == 0)
            let signup = try await trendy(
                ["signup", "--email", "onboard-geo@example.com", "--password-stdin"], dir, api,
                stdin: "password-geofence-1\n")
            #expect(signup.status == 0, "\(signup.stderr)")
            for args in [["--type", "Gym"], ["--log", "Gym"], ["--notifications", "skip", "--location", "allow"]] {
                let r = try await trendy(["onboarding", "next"] + args, dir, api)
                #expect(r.status == 0, "\(args): \(r.stderr)")
            }
            let shown = object(try await trendy(["location", "show", "--json"], dir, api))
            #expect(shown["authorization"] as? String == "always")
            let status = object(try await trendy(["onboarding", "status", "--json"], dir, api))
            #expect((status["permissions"] as? [String: String])?["location"] == "granted")
        }
    }

    @Test func theTourEndsWithAPlaceVisitedAndSynced() async throws {
        let r = try await TrendyProcess.run(["tour", "--events", "100", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        // Two documents: the data directory, then the chapters.
        let start = try #require(r.stdout.range(of: "\n[")).lowerBound
        let chapters = try #require(
            try JSONSerialization.jsonObject(with: Data(r.stdout[start...].utf8)) as? [[String: Any]])
        let last = try #require(chapters.last)
        #expect((last["title"] as? String)?.contains("geofence") == true)
        let note = (last["notes"] as? [String])?.first ?? ""
        #expect(note.contains("enter → created, exit → closed"), "\(note)")
        #expect(note.contains("pushed 2"), "\(note)")
    }

    @Test func healthSaysWhatToDoWhenLocationAccessIsOff() async throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        let offline = LaunchCLITests.unreachable
        #expect(try await trendy(["types", "add", "Gym"], dir, offline).status == 0)
        #expect(try await trendy(["geofence", "add", "Gym", "1", "2", "--type", "Gym"], dir, offline).status == 0)
        var health = object(try await trendy(["geofence", "health", "--json"], dir, offline))
        #expect(health["ok"] as? Bool == true)
        #expect(health["monitored"] as? [String] != [])
        #expect(try await trendy(["location", "permission", "denied"], dir, offline).status == 0)
        health = object(try await trendy(["geofence", "health", "--json"], dir, offline))
        #expect(health["ok"] as? Bool == false)
        #expect(health["authorization"] as? String == "denied")
        #expect((health["advice"] as? [String])?.first?.contains("Always") == true)
        let authorize = try await trendy(["geofence", "authorize"], dir, offline)
        #expect(authorize.status == 77)
        #expect(try await trendy(["location", "permission", "always"], dir, offline).status == 0)
        health = object(try await trendy(["geofence", "health", "--json"], dir, offline))
        #expect(health["ok"] as? Bool == true)
    }
}
