import Foundation
import Testing
import TrendySync

@testable import TrendyApp

/// The error codes scripts rely on: every one the program can print is a member of
/// `CLIErrorCode`, listed once in `all`, and in docs/cli.md's table with the exit code it comes
/// with — and no code is spelled as a string where an error is made.
@Suite struct ErrorCodeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// Every Swift file under App/, with its text.
    static func appSources() throws -> [(String, String)] {
        let app = root.appendingPathComponent("App")
        let files =
            FileManager.default.enumerator(at: app, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        return try files.map { ($0.lastPathComponent, try String(contentsOf: $0, encoding: .utf8)) }
    }

    @Test func everyDeclaredCodeIsListedOnceAndDocumentedWithItsExitCode() throws {
        let source = try Self.read("App/TrendyApp/CLI/CLIErrorCode.swift")
        let declared = source.matches(of: #/static let [a-zA-Z0-9]+ = CLIErrorCode\(rawValue: "([a-z0-9_]+)"\)/#)
            .map { String($0.output.1) }
        #expect(declared.count == CLIErrorCode.all.count)
        #expect(Set(declared) == Set(CLIErrorCode.all.map(\.rawValue)))
        #expect(Set(declared).count == declared.count, "a code declared twice")

        // docs/cli.md: | `code` | exit | meaning |
        let docs = try Self.read("docs/cli.md")
        var documented: [String: String] = [:]
        for match in docs.matches(of: #/\n\| `([a-z0-9_]+)` \| ([0-9]+) \| /#) {
            documented[String(match.output.1)] = String(match.output.2)
        }
        #expect(Set(documented.keys) == Set(declared), "docs/cli.md's error-code table and CLIErrorCode differ")
        // The exit code each member's doc comment names is the one the table gives.
        let member =
            #/\/\/\/ Exit ([0-9]+): [^\n]*\n\s+public static let [a-zA-Z0-9]+ = CLIErrorCode\(rawValue: "([a-z0-9_]+)"\)/#
        for match in source.matches(of: member) {
            #expect(documented[String(match.output.2)] == String(match.output.1), "\(match.output.2)")
        }
    }

    /// Codes are made in one place: no error anywhere in the program spells one as a string, so a
    /// new code cannot be printed without being declared (and so documented, above).
    @Test func noErrorSpellsItsCodeAsAString() throws {
        for (name, text) in try Self.appSources() where name != "CLIErrorCode.swift" {
            #expect(!text.contains("CLIErrorCode(rawValue:"), "\(name) makes a code of its own")
            for match in text.matches(of: #/CLIError\(\s*code: "([a-z0-9_]+)"/#) {
                Issue.record("\(name) spells the code \(match.output.1) as a string")
            }
        }
    }

    /// Each code's exit status is the one the table gives, wherever the program makes it.
    @Test func everyErrorIsMadeWithItsDocumentedExitCode() throws {
        let exits: [String: Int32] = [
            "success": 0, "failure": 1, "usage": 64, "dataError": 65, "noInput": 66, "unavailable": 69,
            "software": 70, "cannotCreate": 73, "ioError": 74, "temporaryFailure": 75, "noPermission": 77,
            "configuration": 78,
        ]
        let byName = Dictionary(
            uniqueKeysWithValues: try Self.read("App/TrendyApp/CLI/CLIErrorCode.swift")
                .matches(of: #/\/\/\/ Exit ([0-9]+): [^\n]*\n\s+public static let ([a-zA-Z0-9]+) =/#)
                .map { (String($0.output.2), Int32($0.output.1)!) })
        var seen = 0
        for (name, text) in try Self.appSources() {
            for match in text.matches(of: #/code: \.([a-zA-Z0-9]+),[^)]*?exitCode: \.([a-zA-Z]+)/#) {
                guard let documented = byName[String(match.output.1)] else { continue }
                seen += 1
                #expect(
                    exits[String(match.output.2)] == documented,
                    "\(name): .\(match.output.1) made with exit .\(match.output.2), documented \(documented)")
            }
        }
        #expect(seen > 40)
    }

    /// A pass that waits to retry says what happened to what it sent — and, when it sent nothing
    /// (a download cut by a failure), not that something "was sent" (an outsider's doubt).
    @Test func aWaitingPassSaysWhatWasSentOnlyWhenSomethingWas() {
        func message(pushed: Int) -> String {
            let run = SyncRun(
                startedAt: Date(), duration: 1, pushed: pushed, pulled: 500, outcome: .waiting, error: "timed out")
            return SyncCommand.Run.failure(run).message
        }
        #expect(message(pushed: 3).contains("what was sent is kept"))
        #expect(!message(pushed: 0).contains("was sent"))
        #expect(message(pushed: 0).contains("what was downloaded is kept"))
    }
}
