import Foundation
import Testing
import TrendyServerTestSupport
import TrendyTestSupport

/// The production setup as an operator runs it: two `trendy-server` processes started with
/// `--database postgres://…` on one database, and two devices (`trendy` installs) each talking to
/// its own instance — sign up, import, a geofence visit, sync both ways, an edit that crosses over
/// (issue 23). Runs when `TRENDY_TEST_DATABASE_URL` names a PostgreSQL server.
@Suite(.enabled(if: TestDatabase.url != nil, "needs TRENDY_TEST_DATABASE_URL"), .timeLimit(.minutes(5)))
struct PostgresServerProcessTests {
    let cli = LaunchCLITests()

    /// A `trendy-server` process, stopped (SIGTERM, then waited for) by ``stop()``.
    final class ServerProcess: @unchecked Sendable {
        let process: ChildProcess
        let url: String
        let log: URL

        /// Starts `trendy-server` with `arguments` on a free port and waits for its banner.
        init(_ arguments: [String], log: URL, environment: [String: String] = [:]) throws {
            self.log = log
            var env = ProcessInfo.processInfo.environment
            for (k, v) in environment { env[k] = v }
            let out = Pipe()
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let logHandle = try FileHandle(forWritingTo: log)
            defer { try? logHandle.close() }
            process = try ChildProcess(
                TrendyProcess.binary.deletingLastPathComponent().appendingPathComponent("trendy-server"),
                ["--port", "0", "--bcrypt-cost", "4"] + arguments, environment: env, stdout: .pipe(out),
                stderr: .handle(logHandle))
            // The first line says where it listens: "... listening on http://127.0.0.1:PORT".
            var line = Data()
            while let byte = try out.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) {
                line += byte
            }
            let text = String(decoding: line, as: UTF8.self)
            guard let range = text.range(of: "http://") else {
                process.terminate()
                throw ServerDidNotStart(output: text + (try String(contentsOf: log, encoding: .utf8)))
            }
            url = String(text[range.lowerBound...])
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }
    }

    struct ServerDidNotStart: Error, CustomStringConvertible {
        var output: String
        var description: String { "trendy-server did not start: \(output)" }
    }

    func trendy(_ args: [String], _ dir: TemporaryDirectory, _ api: String, stdin: String? = nil) async throws
        -> TrendyProcess.Result
    {
        try await cli.trendy(args, dir, api: api, stdin: stdin)
    }

    @Test func twoDevicesOnTwoInstancesOfOneDatabase() async throws {
        let database = try #require(TestDatabase.freshURL())
        let logs = TemporaryDirectory("trendy-pg-logs")
        // One instance from the flag, the other from the environment, both on the same database.
        let a = try ServerProcess(["--database", database], log: logs.url.appendingPathComponent("a.log"))
        defer { a.stop() }
        let b = try ServerProcess(
            [], log: logs.url.appendingPathComponent("b.log"), environment: ["TRENDY_DATABASE_URL": database])
        defer { b.stop() }
        let phone = TemporaryDirectory("trendy-pg-phone", create: false)
        let laptop = TemporaryDirectory("trendy-pg-laptop", create: false)
        let email = "pg-\(UUID().uuidString.prefix(8).lowercased())@example.com"

        // The phone signs up on instance A, imports 300 events and visits a place.
        let signup = try await trendy(
            ["signup", "--email", email, "--password-stdin"], phone, a.url, stdin: "postgres-pass-1\n")
        #expect(signup.status == 0, "\(signup.stderr)")
        var csv = "type,timestamp\n"
        for i in 0..<300 { csv += "Run,2026-11-\(10 + i / 100)T\(10 + (i % 100) / 10):0\(i % 10):00Z\n" }
        try FileManager.default.createDirectory(at: phone.url, withIntermediateDirectories: true)
        let file = phone.url.appendingPathComponent("runs.csv")
        try csv.write(to: file, atomically: true, encoding: .utf8)
        #expect(try await trendy(["import", file.path], phone, a.url).status == 0)
        #expect(try await trendy(["types", "add", "Gym"], phone, a.url).status == 0)
        #expect(try await trendy(["location", "permission", "always"], phone, a.url).status == 0)
        let geofence = try await trendy(
            ["geofence", "add", "Gym", "52.52", "13.405", "--radius", "100", "--type", "Gym"], phone, a.url)
        #expect(geofence.status == 0, "\(geofence.stderr)")
        #expect(try await trendy(["location", "set", "52.53", "13.405"], phone, a.url).status == 0)
        let enter = try await trendy(["location", "set", "52.52", "13.405"], phone, a.url)
        #expect(enter.status == 0, "\(enter.stderr)")
        let pushed = try await trendy(["sync", "--json"], phone, a.url)
        #expect(pushed.status == 0, "\(pushed.stdout) \(pushed.stderr)")

        // The laptop signs in on instance B and gets all of it.
        let login = try await trendy(
            ["login", "--email", email, "--password-stdin"], laptop, b.url, stdin: "postgres-pass-1\n")
        #expect(login.status == 0, "\(login.stderr)")
        #expect(try await trendy(["sync"], laptop, b.url).status == 0)
        let events = cli.array(try await trendy(["events", "list", "--limit", "1000", "--json"], laptop, b.url))
        #expect(events.count == 301)
        let visit = try #require(events.first { ($0["type"] as? String) == "Gym" })
        #expect(visit["sync_status"] as? String == "synced")
        #expect(visit["source_type"] as? String == "geofence")

        // An edit on the laptop (instance B) reaches the phone (instance A).
        let id = try #require(visit["id"] as? String)
        #expect(try await trendy(["events", "edit", id, "--note", "leg day"], laptop, b.url).status == 0)
        #expect(try await trendy(["sync"], laptop, b.url).status == 0)
        #expect(try await trendy(["sync"], phone, a.url).status == 0)
        let mine = cli.array(try await trendy(["events", "list", "--limit", "1000", "--json"], phone, a.url))
        #expect(mine.count == 301)
        #expect(mine.first { ($0["id"] as? String) == id }?["notes"] as? String == "leg day")
        #expect(cli.json(try await trendy(["whoami", "--json"], phone, b.url))["email"] as? String == email)
    }

    /// An unreachable database or a malformed URL is a clear error and a non-zero exit, never a
    /// server that starts and fails every request.
    @Test func aBadDatabaseIsRefusedAtStart() async throws {
        let logs = TemporaryDirectory("trendy-pg-bad")
        for (url, expected) in [
            ("postgres://nobody:hunter2-secret@127.0.0.1:1/none?sslmode=disable", "cannot use the database"),
            ("mysql://x@y/z", "postgres://user@host"),
            ("postgres://postgres@127.0.0.1/db?schema=Bad-Name", "schema must be"),
        ] {
            let log = logs.url.appendingPathComponent("server.log")
            #expect(throws: ServerDidNotStart.self) { _ = try ServerProcess(["--database", url], log: log) }
            let text = try String(contentsOf: log, encoding: .utf8)
            #expect(text.contains(expected), "\(url): \(text)")
            #expect(!text.contains("hunter2-secret"), "no password in the message")
        }
    }
}
