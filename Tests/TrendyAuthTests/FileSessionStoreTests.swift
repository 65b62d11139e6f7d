import Foundation
import Logging
import Testing
import TrendyAuth
import TrendyAuthLive
import TrendyLogging

struct FileSessionStoreTests {
    final class Dir: Sendable {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("trendy-session-\(UUID().uuidString)")
        deinit { try? FileManager.default.removeItem(at: url) }
        var file: URL { url.appendingPathComponent("state/session.json") }
    }

    let session = AuthSession(
        accessToken: "eyJh.access.token", refreshToken: "refresh-1",
        expiresAt: Date(timeIntervalSince1970: 1_800_000_000),
        user: AuthUser(id: "u1", email: "u1@example.com"))

    func store(_ dir: Dir, _ sink: InMemoryLogSink = InMemoryLogSink()) -> FileSessionStore {
        FileSessionStore(file: dir.file, logger: LogSystem(sinks: [sink]).logger(.auth))
    }

    @Test func roundTripsWithOwnerOnlyPermissions() throws {
        let dir = Dir()
        let s = store(dir)
        #expect(s.load() == nil)
        try s.save(session)
        #expect(s.load() == session)
        let fileMode = try FileManager.default.attributesOfItem(atPath: dir.file.path)[.posixPermissions] as? Int
        let dirMode =
            try FileManager.default.attributesOfItem(atPath: dir.file.deletingLastPathComponent().path)[
                .posixPermissions] as? Int
        #expect(fileMode == 0o600)
        #expect(dirMode == 0o700)
        var updated = session
        updated.refreshToken = "refresh-2"
        try s.save(updated)
        #expect(s.load()?.refreshToken == "refresh-2")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.file.deletingLastPathComponent().path)
        #expect(leftovers == ["session.json"])
        try s.clear()
        #expect(s.load() == nil)
        try s.clear()
    }

    @Test(arguments: [
        "", "{", "not json at all", #"{"version":1}"#, #"{"version":2,"session":{}}"#,
        #"{"version":1,"session":{"access_token":"","refresh_token":"r","expires_at":1,"user":{"id":"u","email":"e"}}}"#,
        #"{"version":9,"session":{"access_token":"a","refresh_token":"r","expires_at":1,"user":{"id":"u","email":"e"}}}"#,
    ])
    func corruptFilesMeanNoSessionWithAWarning(content: String) throws {
        let dir = Dir()
        try FileManager.default.createDirectory(
            at: dir.file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(content.utf8).write(to: dir.file)
        let sink = InMemoryLogSink()
        #expect(store(dir, sink).load() == nil)
        #expect(sink.records.contains { $0.level == .warning })
    }

    @Test func anUnreadableFileMeansNoSession() throws {
        let dir = Dir()
        // A directory where the file should be.
        try FileManager.default.createDirectory(at: dir.file, withIntermediateDirectories: true)
        let sink = InMemoryLogSink()
        #expect(store(dir, sink).load() == nil)
        #expect(throws: (any Error).self) { try store(dir, sink).save(session) }
    }

    @Test func binaryGarbageIsHandled() throws {
        let dir = Dir()
        try FileManager.default.createDirectory(
            at: dir.file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: dir.file)
        #expect(store(dir).load() == nil)
    }
}

struct SessionFileParsingTests {
    @Test func escapedStringsAndWhitespaceAreRead() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("trendy-tiny-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent("session.json")
        let text = """
            { "version" : 1, "session" : { "access_token" : "a\\/b\\u00e9", "refresh_token":"r",
              "expires_at": 1.8e9, "user": {"id":"u", "email":"x\\"y@example.com", "extra": [1, true, null]} } }
            """
        try Data(text.utf8).write(to: file)
        let session = try #require(FileSessionStore(file: file, logger: LogSystem.disabled().logger(.auth)).load())
        #expect(session.accessToken == "a/bé")
        #expect(session.user.email == "x\"y@example.com")
        #expect(session.expiresAt == Date(timeIntervalSince1970: 1.8e9))
    }

    @Test(arguments: ["[1,", #"{"a":}"#, #"{"a":1}}"#, "nul", #""unterminated"#, String(repeating: "[", count: 100)])
    func malformedDocumentsAreRefused(text: String) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("trendy-tiny-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = dir.appendingPathComponent("session.json")
        try Data(text.utf8).write(to: file)
        #expect(FileSessionStore(file: file, logger: LogSystem.disabled().logger(.auth)).load() == nil)
    }
}
