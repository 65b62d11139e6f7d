import Foundation
import Testing
import TrendyServer
import TrendyTestSupport

/// Issue 19, case 2: every pair of writing commands run at the same moment on one install.
/// Each must exit 0, or 75 ("busy, try again") and then succeed when run again; afterwards every
/// event any command wrote is here and on the server, once. Also: commands racing on a brand-new
/// data directory (migrations, first-use setup, the embedded backend's database).
///
/// `TRENDY_MATRIX_ROUNDS` sets how often each pair runs (CI and the default: 2).
@Suite(.timeLimit(.minutes(10)))
struct ConcurrencyMatrixTests {
    let cli = LaunchCLITests()

    static var rounds: Int { Int(ProcessInfo.processInfo.environment["TRENDY_MATRIX_ROUNDS"] ?? "") ?? 2 }

    /// One command of the matrix and the event timestamps it writes.
    struct Step: Sendable {
        var name: String
        var arguments: [String]
        var writes: [String] = []
    }

    /// Runs `step` until it exits 0; 75 (busy) is the only other exit allowed.
    func runToSuccess(_ step: Step, _ dir: TemporaryDirectory, _ api: String) async throws -> [Int32] {
        var statuses: [Int32] = []
        for _ in 0..<5 {
            let r = try await cli.trendy(step.arguments, dir, api: api)
            statuses.append(r.status)
            if r.status == 0 { break }
            #expect(r.status == 75, "\(step.name) exited \(r.status): \(r.stderr)")
            guard r.status == 75 else { break }
        }
        #expect(statuses.last == 0, "\(step.name) never succeeded: \(statuses)")
        return statuses
    }

    /// The timestamps of the install's events (second precision, as written).
    func localTimestamps(_ dir: TemporaryDirectory, _ api: String) async throws -> Set<String> {
        let list = try await cli.trendy(["events", "list", "--limit", "10000", "--json"], dir, api: api)
        #expect(list.status == 0, "\(list.stderr)")
        return Set(cli.array(list).compactMap { $0["timestamp"] as? String }.map { String($0.prefix(19)) + "Z" })
    }

    static let base = Date(timeIntervalSince1970: 1_750_000_000)

    static func stamp(_ offset: Int) -> String {
        ISO8601DateFormatter().string(from: base.addingTimeInterval(Double(offset)))
    }

    /// Makes the writing steps of the matrix, each at times no other step uses.
    struct StepMaker {
        let dir: TemporaryDirectory
        let home: String
        var counter = 0

        mutating func next() -> Int {
            counter += 1
            return counter
        }

        /// An import of 150 rows of a type no one has yet (the same new type for both imports of
        /// a pair: `shared`).
        mutating func importStep(_ shared: String) throws -> Step {
            let n = next()
            let file = dir.url.appendingPathComponent("import-\(n).csv")
            var text = "type,timestamp,notes\n"
            var writes: [String] = []
            for i in 0..<150 {
                let t = ConcurrencyMatrixTests.stamp(n * 10_000 + i)
                text += "\(shared),\(t),import \(n)\n"
                writes.append(t)
            }
            try text.write(to: file, atomically: true, encoding: .utf8)
            return Step(name: "import", arguments: ["import", file.path], writes: writes)
        }

        mutating func logStep() -> Step {
            let t = ConcurrencyMatrixTests.stamp(next() * 10_000)
            return Step(name: "log", arguments: ["log", "Coffee", "--at", t], writes: [t])
        }

        /// A geofence wake-up: an arrival (a new event), or the departure closing it.
        mutating func wakeStep(arriving: Bool) -> Step {
            let t = ConcurrencyMatrixTests.stamp(next() * 10_000)
            return Step(
                name: "wake-up",
                arguments: ["launch", "--region-event", "\(arriving ? "enter" : "exit"):\(home)@\(t)"],
                writes: arriving ? [t] : [])
        }
    }

    @Test func everyPairOfWritingCommandsOnOneInstallLosesNothing() async throws {
        try await LaunchCLITests.withServer { _, running in
            let api = running.baseURL.absoluteString
            let dir = TemporaryDirectory("trendy-it", create: false)
            let signup = try await cli.trendy(
                ["signup", "--email", "matrix@example.com", "--password-stdin"], dir, api: api, stdin: "matrix-pass-1\n"
            )
            #expect(signup.status == 0, "\(signup.stderr)")
            for name in ["Walk", "Coffee"] {
                #expect(try await cli.trendy(["types", "add", name], dir, api: api).status == 0)
            }
            let fence = try await cli.trendy(
                ["geofence", "add", "Home", "52.52", "13.405", "--type", "Walk", "--json"], dir, api: api)
            let home = try #require(cli.json(fence)["id"] as? String)

            var expected = Set<String>()
            var make = StepMaker(dir: dir, home: home)
            let sync = Step(name: "sync", arguments: ["sync"])
            let repair = Step(name: "repair", arguments: ["repair"])

            var busy: [String: Int] = [:]
            for round in 0..<Self.rounds {
                let pairs: [(Step, Step)] = [
                    (try make.importStep("Run \(round)"), try make.importStep("Run \(round)")),
                    (try make.importStep("Swim \(round)"), sync),
                    (make.logStep(), sync),
                    (sync, sync),
                    (make.wakeStep(arriving: true), sync),
                    (repair, make.logStep()),
                    (repair, try make.importStep("Row \(round)")),
                    (repair, sync),
                    (repair, make.wakeStep(arriving: false)),
                ]
                for (a, b) in pairs {
                    async let first = runToSuccess(a, dir, api)
                    async let second = runToSuccess(b, dir, api)
                    let (sa, sb) = try await (first, second)
                    for (step, statuses) in [(a, sa), (b, sb)] where statuses.count > 1 {
                        busy[step.name, default: 0] += statuses.count - 1
                    }
                    expected.formUnion(a.writes)
                    expected.formUnion(b.writes)
                    // Nothing lost by this pair (checked now, so a failure names the pair).
                    let missing = expected.subtracting(try await localTimestamps(dir, api))
                    #expect(missing.isEmpty, "after \(a.name) + \(b.name) in round \(round): \(missing.count) missing")
                }
                // Two imports of different files introducing the same type made one type.
                let types = cli.array(try await cli.trendy(["types", "list", "--json"], dir, api: api))
                let names = types.compactMap { $0["name"] as? String }
                #expect(names.filter { $0 == "Run \(round)" }.count == 1, "\(names)")
            }
            print("concurrency matrix: \(Self.rounds) round(s), busy retries \(busy)")

            // Sync until nothing is pending.
            var pending = -1
            for _ in 0..<5 where pending != 0 {
                _ = try await cli.trendy(["sync"], dir, api: api)
                pending = cli.json(try await cli.trendy(["status", "--json"], dir, api: api))["pending"] as? Int ?? -1
            }
            #expect(pending == 0)
            let local = cli.array(
                try await cli.trendy(["events", "list", "--limit", "10000", "--json"], dir, api: api))
            let localTimes = local.compactMap { $0["timestamp"] as? String }.map { String($0.prefix(19)) + "Z" }
            #expect(
                expected.isSubset(of: Set(localTimes)), "missing \(expected.subtracting(localTimes).sorted().prefix(5))"
            )
            #expect(localTimes.count == Set(localTimes).count, "duplicates locally")
            let remote = try await cli.serverEvents("matrix@example.com", password: "matrix-pass-1", api: api)
            #expect(Set(remote.compactMap { $0["id"] as? String }) == Set(local.compactMap { $0["id"] as? String }))
        }
    }

    @Test func commandsRacingOnABrandNewDataDirectoryAllSucceed() async throws {
        try await LaunchCLITests.withServer { _, running in
            let api = running.baseURL.absoluteString
            for round in 0..<(Self.rounds * 3) {
                let dir = TemporaryDirectory("trendy-it", create: false)
                let steps = [
                    Step(name: "types add A", arguments: ["types", "add", "A"]),
                    Step(name: "types add B", arguments: ["types", "add", "B"]),
                    // The same type from two processes at once: get or create, both succeed.
                    Step(name: "types add A again", arguments: ["types", "add", "A"]),
                    Step(name: "status", arguments: ["status"]),
                    Step(name: "events list", arguments: ["events", "list"]),
                ]
                try await withThrowingTaskGroup(of: [Int32].self) { group in
                    for step in steps { group.addTask { try await runToSuccess(step, dir, api) } }
                    for try await _ in group {}
                }
                let names = cli.array(try await cli.trendy(["types", "list", "--json"], dir, api: api))
                    .compactMap { $0["name"] as? String }
                #expect(names.sorted() == ["A", "B"], "round \(round): \(names)")
            }
        }
    }

    @Test func twoFirstStartsOfTheEmbeddedBackendBothWork() async throws {
        for round in 0..<Self.rounds {
            let dir = TemporaryDirectory("trendy-it", create: false)
            let results = try await withThrowingTaskGroup(of: TrendyProcess.Result.self) { group in
                for who in ["a", "b"] {
                    group.addTask {
                        try await TrendyProcess.run(
                            [
                                "signup", "--email", "\(who)\(round)@example.com", "--password-stdin", "--data-dir",
                                dir.path,
                            ],
                            stdin: "password-\(who)-1\n")
                    }
                }
                var all: [TrendyProcess.Result] = []
                for try await r in group { all.append(r) }
                return all
            }
            for r in results { #expect(r.status == 0 || r.status == 75, "\(r.status): \(r.stderr)") }
            #expect(results.contains { $0.status == 0 })
            let whoami = try await TrendyProcess.run(["whoami", "--data-dir", dir.path])
            #expect(whoami.status == 0, "\(whoami.stderr)")
        }
    }
}
