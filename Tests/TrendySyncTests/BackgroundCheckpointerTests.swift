import Foundation
import GRDB
import Testing
import TrendySyncLive

/// WAL checkpoints happen away from the writer, the WAL stays bounded either way, and nothing
/// written is lost.
@Suite(.timeLimit(.minutes(5)))
struct BackgroundCheckpointerTests {
    func withDatabase(threshold: Int32, ceiling: Int32, _ body: (DatabasePool, URL) async throws -> Void) async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("checkpoint-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("db.sqlite")
        var configuration = Configuration()
        BackgroundCheckpointer.configure(&configuration, path: url.path, threshold: threshold, ceiling: ceiling)
        let pool = try DatabasePool(path: url.path, configuration: configuration)
        try await pool.write { db in try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)") }
        try await body(pool, url)
    }

    /// Writes about 8 MB in 200 commits; `between` runs after each commit.
    func fill(_ pool: DatabasePool, between: () -> Void = {}) async throws {
        let body = String(repeating: "x", count: 1_000)
        for batch in 0..<200 {
            try await pool.write { db in
                for i in 0..<40 {
                    try db.execute(sql: "INSERT INTO t VALUES (?, ?)", arguments: [batch * 40 + i, body])
                }
            }
            between()
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    func walBytes(_ url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path + "-wal"))?[.size] as? Int) ?? 0
    }

    @Test func backgroundCheckpointsKeepTheWALSmallAndLoseNothing() async throws {
        // The ceiling is out of reach: only the background checkpoints can bound the WAL. How
        // far the WAL grows while a checkpoint waits for the CPU depends on the machine (4.9 MB
        // on a busy CI run), so each commit waits for a started checkpoint to finish: what is
        // checked is that the checkpoints run off the writer and let the WAL restart.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("checkpoint-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("db.sqlite")
        let checkpointer = BackgroundCheckpointer(path: url.path, threshold: 50, ceiling: 1_000_000)
        var configuration = Configuration()
        configuration.prepareDatabase { db in checkpointer.install(on: db) }
        let pool = try DatabasePool(path: url.path, configuration: configuration)
        try await pool.write { db in try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)") }
        try await fill(pool) { checkpointer.waitUntilIdle() }
        #expect(walBytes(url) < 1_000_000, "WAL \(walBytes(url)) bytes for 8 MB written")
        #expect(try await pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM t") } == 8_000)
        #expect(try await pool.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") } == "ok")
    }

    @Test func checkpointsThatFallBehindLoseNothing() async throws {
        // Without waiting, a busy machine lets the WAL grow while checkpoints queue: never data.
        try await withDatabase(threshold: 50, ceiling: 1_000_000) { pool, _ in
            try await fill(pool)
            #expect(try await pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM t") } == 8_000)
            #expect(try await pool.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") } == "ok")
        }
    }

    @Test func theWriterCheckpointsItselfPastTheCeiling() async throws {
        // No background checkpoint ever starts (threshold out of reach); the ceiling still holds.
        try await withDatabase(threshold: 1_000_000, ceiling: 100) { pool, url in
            try await fill(pool)
            #expect(walBytes(url) < 4_000_000, "WAL \(walBytes(url)) bytes for 8 MB written")
            #expect(try await pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM t") } == 8_000)
        }
    }

    @Test func aCheckpointConnectionThatCannotOpenLeavesTheCeilingInCharge() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("checkpoint-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("db.sqlite")
        // The background connection points nowhere: every background checkpoint fails to start.
        let broken = BackgroundCheckpointer(
            path: dir.appendingPathComponent("missing/db.sqlite").path, threshold: 20, ceiling: 100)
        var configuration = Configuration()
        configuration.prepareDatabase { db in broken.install(on: db) }
        let pool = try DatabasePool(path: url.path, configuration: configuration)
        try await pool.write { db in try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)") }
        try await fill(pool)
        #expect(walBytes(url) < 4_000_000, "WAL \(walBytes(url)) bytes for 8 MB written")
        #expect(try await pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM t") } == 8_000)
        #expect(try await pool.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") } == "ok")
    }
}
