import Foundation
import Testing
import TrendyTestSupport

struct CLISkeletonTests {
    @Test func versionPrintsHumanAndJSON() async throws {
        let human = try await TrendyProcess.run(["version"])
        #expect(human.status == 0)
        #expect(human.stdout.hasPrefix("trendy 0.1.0"))
        let json = try await TrendyProcess.run(["version", "--json"])
        #expect(json.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(object?["version"] as? String == "0.1.0")
    }

    @Test func unknownOptionIsAUsageError() async throws {
        let r = try await TrendyProcess.run(["version", "--bogus"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("Unknown option '--bogus'"))
    }

    @Test func helpShowsReadableDefaults() async throws {
        let r = try await TrendyProcess.run(["help", "location", "replay"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("(default: max)"))
        #expect(!r.stdout.contains("ReplaySpeed"))
    }

    /// Every option docs/server.md names is one `trendy serve` (the same options as
    /// `trendy-server`) accepts: the docs once named `--fault-429-count` while the program only
    /// took `--fault429-count`.
    @Test func everyServerOptionTheDocsNameExists() async throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/server.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        let options = Set(
            text.matches(of: /`(--[a-z0-9][a-z0-9-]*)/).map { String($0.output.1) })
        #expect(options.contains("--fault-429-count"))
        let help = try await TrendyProcess.run(["serve", "--help"])
        #expect(help.status == 0)
        for option in options.sorted() {
            #expect(help.stdout.contains(option), "docs/server.md names \(option), `trendy serve` does not take it")
        }
    }

    @Test func aNoteWithLineBreaksStaysOnItsEventsLine() async throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        #expect(try await TrendyProcess.run(["types", "add", "Tea", "--data-dir", dir.path]).status == 0)
        let log = try await TrendyProcess.run(
            ["log", "Tea", "--note", "first\nsecond\tthird", "--data-dir", dir.path])
        #expect(log.status == 0)
        let list = try await TrendyProcess.run(["events", "list", "--data-dir", dir.path])
        let lines = list.stdout.split(separator: "\n")
        #expect(lines.count == 1, "\(lines)")
        #expect(list.stdout.contains(#"first\nsecond\tthird"#))
        // JSON keeps the note exactly.
        let json = try await TrendyProcess.run(["events", "list", "--json", "--data-dir", dir.path])
        let items = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(items?.first?["notes"] as? String == "first\nsecond\tthird")
    }

    @Test func unknownCommandIsAUsageError() async throws {
        let r = try await TrendyProcess.run(["fly"])
        #expect(r.status == 64)
    }

    @Test func badLogLevelIsAUsageErrorWithAClearMessage() async throws {
        let r = try await TrendyProcess.run(["logs", "path", "--log-level", "loud"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("unknown log level 'loud'"))
    }

    @Test func logsPathUsesTheDataDirectoryFromFlagOrEnvironment() async throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        let viaFlag = try await TrendyProcess.run(["logs", "path", "--data-dir", dir.path])
        #expect(viaFlag.status == 0)
        #expect(viaFlag.stdout.trimmingCharacters(in: .newlines) == dir.url.appendingPathComponent("logs").path)
        let viaEnv = try await TrendyProcess.run(
            ["logs", "path", "--json"], environment: ["TRENDY_DATA_DIR": dir.path])
        let object = try JSONSerialization.jsonObject(with: Data(viaEnv.stdout.utf8)) as? [String: Any]
        #expect(object?["directory"] as? String == dir.url.appendingPathComponent("logs").path)
        let perms = try FileManager.default.attributesOfItem(atPath: dir.path)[.posixPermissions] as? Int
        #expect(perms == 0o700)
    }

    @Test func exportWritesARedactedBundle() async throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        let logs = dir.url.appendingPathComponent("logs")
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
        try "old line refresh_token=rt-secret-1 by jane@example.com\n".write(
            to: logs.appendingPathComponent("trendy-20260101T000000.000Z-0000.log"), atomically: true, encoding: .utf8)
        let bundle = dir.url.appendingPathComponent("bundle.txt")
        let r = try await TrendyProcess.run(["logs", "export", bundle.path, "--data-dir", dir.path, "--json"])
        #expect(r.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        #expect(object?["files"] as? Int == 2)
        let text = try String(contentsOf: bundle, encoding: .utf8)
        #expect(text.contains("Exporting logs"))
        #expect(!text.contains("rt-secret-1"))
        #expect(!text.contains("jane@example.com"))
    }

    @Test func exportToAnUnwritablePlaceFailsClearly() async throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        let blocker = dir.url.appendingPathComponent("file")
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        try Data().write(to: blocker)
        let r = try await TrendyProcess.run([
            "logs", "export", blocker.path + "/x/bundle.txt", "--data-dir", dir.path, "--json",
        ])
        #expect(r.status == 73)
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: [String: String]]
        #expect(object?["error"]?["code"] == "export_failed")
    }

    @Test func tailShowsTheNewestLines() async throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        _ = try await TrendyProcess.run([
            "logs", "export", dir.url.appendingPathComponent("b.txt").path, "--data-dir", dir.path,
        ])
        let r = try await TrendyProcess.run(["logs", "tail", "-n", "1", "--data-dir", dir.path])
        #expect(r.status == 0)
        #expect(r.stdout.contains("Exporting logs"))
        let bad = try await TrendyProcess.run(["logs", "tail", "-n", "0", "--data-dir", dir.path])
        #expect(bad.status == 64)
    }

    @Test func unusableDataDirectoryFailsWithoutCrashing() async throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        let blocker = dir.url.appendingPathComponent("plain-file")
        try Data().write(to: blocker)
        let r = try await TrendyProcess.run(["logs", "path", "--data-dir", blocker.path + "/sub"])
        #expect(r.status == 73)
        #expect(r.stderr.contains("cannot use the data directory"))
    }

    /// A new install signed up on its embedded backend, and its `--data-dir` arguments.
    static func signedUp() async throws -> (TemporaryDirectory, [String]) {
        let dir = TemporaryDirectory("trendy-cli", create: false)
        let d = ["--data-dir", dir.path]
        let signup = try await TrendyProcess.run(
            ["signup", "--email", "cli-\(UUID().uuidString.prefix(6))@example.com", "--password-stdin"] + d,
            stdin: "password-1\n")
        #expect(signup.status == 0, "\(signup.stderr)")
        return (dir, d)
    }

    /// Issue 32: `types rm` says how many events go with a type and asks; without a terminal it
    /// needs `--yes` and removes nothing; `logout` warns of changes not yet sent.
    @Test func removingATypeWithEventsAsksFirstAndLogoutWarnsOfUnsentChanges() async throws {
        let (dir, d) = try await Self.signedUp()
        defer { withExtendedLifetime(dir) {} }
        #expect(try await TrendyProcess.run(["types", "add", "Walk"] + d).status == 0)
        #expect(try await TrendyProcess.run(["types", "add", "Empty"] + d).status == 0)
        for _ in 0..<3 { #expect(try await TrendyProcess.run(["log", "Walk"] + d).status == 0) }
        let refused = try await TrendyProcess.run(["types", "rm", "Walk"] + d)
        #expect(
            refused.status == 64 && refused.stderr.contains("Walk and its 3 events needs --yes"), "\(refused.stderr)")
        #expect(
            try await TrendyProcess.run(["events", "list", "--json"] + d).stdout.components(separatedBy: "\"id\"").count
                == 4)
        #expect(try await TrendyProcess.run(["types", "rm", "Empty"] + d).status == 0, "no events: nothing to ask")
        let removed = try await TrendyProcess.run(["types", "rm", "Walk", "--yes"] + d)
        #expect(removed.status == 0 && removed.stdout.contains("and its 3 event(s)"), "\(removed.stdout)")
        #expect(try await TrendyProcess.run(["types", "add", "Tea"] + d).status == 0)
        let logout = try await TrendyProcess.run(["logout"] + d)
        #expect(logout.status == 0 && logout.stderr.contains("were not sent yet"), "\(logout.stderr)")
    }

    /// A failed command prints one human line (issue 32: a log line came first), and the log file
    /// still records it.
    @Test func aFailedCommandPrintsOneHumanLine() async throws {
        let (dir, d) = try await Self.signedUp()
        let failed = try await TrendyProcess.run(["log", "NoSuchType"] + d)
        #expect(failed.status != 0)
        let lines = failed.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines.first?.hasPrefix("trendy: ") == true, "\(failed.stderr)")
        let logs = dir.url.appendingPathComponent("logs")
        let text = try FileManager.default.contentsOfDirectory(atPath: logs.path).compactMap {
            try? String(contentsOfFile: logs.appendingPathComponent($0).path, encoding: .utf8)
        }.joined()
        #expect(text.contains("Command failed"))
    }

    /// `--all` lists everything: a `--limit` beside it is refused, not ignored.
    @Test func allAndALimitTogetherAreRefused() async throws {
        let r = try await TrendyProcess.run(["events", "list", "--all", "--limit", "5", "--data-dir", "/nonexistent/x"])
        #expect(r.status == 64 && r.stderr.contains("leave out --since and --limit"), "\(r.stderr)")
    }
}
