import Foundation
import Testing
import TrendyServer
import TrendyTestSupport

/// What an outside attack on custom properties found (issue 33), each through the real binary
/// on two devices of one account: every one failed before its fix.
@Suite(.timeLimit(.minutes(5)))
struct PropertyAttackTests {
    let cli = SyncCLITests()

    func two(_ server: RunningServer) async throws -> (TemporaryDirectory, TemporaryDirectory) {
        let a = TemporaryDirectory("attack-a", create: false)
        let b = TemporaryDirectory("attack-b", create: false)
        let email = "q\(UUID().uuidString.prefix(8))@example.com"
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

    func failed(_ dir: TemporaryDirectory, _ server: RunningServer) async throws -> String {
        let status = try await cli.trendy(["status"], dir, server).stdout
        return status.split(separator: "\n").first { $0.hasPrefix("Pending:") }.map(String.init) ?? status
    }

    /// A type made on two devices, each with properties: the second device's definitions went
    /// with its type's id and stayed refused ("no such event type") for ever, out of sight.
    @Test func aTypeMadeOnTwoDevicesKeepsBothDevicesProperties() async throws {
        try await AuthCLITests.withServer { server in
            let (a, b) = try await two(server)
            try await ok(["types", "add", "Kx"], a, server)
            try await ok(["types", "props", "add", "Kx", "onlya", "--type", "number"], a, server)
            try await ok(["types", "add", "Kx"], b, server)
            try await ok(["types", "props", "add", "Kx", "onlyb", "--type", "select", "--options", "a,b"], b, server)
            try await ok(["log", "Kx", "--at", "2026-01-01T00:00:00Z", "--prop", "onlyb=a"], b, server)
            for dir in [a, b, a] { try await ok(["sync"], dir, server) }
            for dir in [a, b] {
                let keys = try await list(["types", "props", "Kx"], dir, server).compactMap { $0["key"] as? String }
                #expect(Set(keys) == ["onlya", "onlyb"], "\(keys)")
                #expect(try await failed(dir, server).contains("Failed: 0"))
            }
        }
    }

    /// One device takes an option away while another makes it the default: the second's edit was
    /// refused and its merged copy (a default that is no option) made every log of the type fail.
    @Test func anEditTheServerRefusesBecomesAConflictAndTheTypeStillLogs() async throws {
        try await AuthCLITests.withServer { server in
            let (a, b) = try await two(server)
            try await ok(["types", "add", "Run"], a, server)
            try await ok(
                ["types", "props", "add", "Run", "mood", "--type", "select", "--options", "Good,Bad,Meh"], a, server)
            try await ok(["sync"], a, server)
            try await ok(["sync"], b, server)
            try await ok(["types", "props", "edit", "Run", "mood", "--options", "Good,Bad"], a, server)
            try await ok(["types", "props", "edit", "Run", "mood", "--default", "Meh"], b, server)
            try await ok(["sync"], a, server)
            try await ok(["sync"], b, server)
            #expect(try await failed(b, server).contains("Failed: 0"), "nothing stuck")
            let mood = try await list(["types", "props", "Run"], b, server).first
            #expect(
                mood?["options"] as? [String] == ["Good", "Bad"] && mood?["default_value"] == nil, "\(mood ?? [:])")
            let conflicts = try await list(["conflicts"], b, server)
            #expect(conflicts.contains { ($0["field"] as? String) == "default_value" }, "\(conflicts)")
            try await ok(["log", "Run", "--at", "2026-08-01T00:00:00Z"], b, server)
        }
    }

    /// A property made here on a type another device deleted meanwhile: kept as a conflict, not
    /// gone without a trace.
    @Test func aPropertyOfATypeDeletedElsewhereIsKeptAsAConflict() async throws {
        try await AuthCLITests.withServer { server in
            let (a, b) = try await two(server)
            try await ok(["types", "add", "Swim"], a, server)
            try await ok(["sync"], a, server)
            try await ok(["sync"], b, server)
            try await ok(["types", "rm", "Swim", "--yes"], a, server)
            try await ok(["types", "props", "add", "Swim", "stroke", "--type", "text"], b, server)
            try await ok(["sync"], a, server)
            try await ok(["sync"], b, server)
            #expect(try await failed(b, server).contains("Failed: 0"))
            let conflicts = try await cli.trendy(["conflicts"], b, server).stdout
            #expect(conflicts.contains("stroke"), "\(conflicts)")
        }
    }
}
