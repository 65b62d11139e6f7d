import Foundation
import GRDB
import Testing
import TrendyLogging
import TrendyModels
import TrendyTestSupport

@testable import TrendySyncLive

/// A repair killed at any moment never leaves a half-built database where the app looks: before
/// its commit point the live database is untouched, after it the next open finishes the swap.
/// (An outsider killed `trendy repair` 30 ms in and lost the unsynced changes.)
@Suite struct RepairInterruptionTests {
    static func migrator() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        SyncSchema.register(in: &migrator)
        return migrator
    }

    /// A WAL install database with one type and three events, all unsynced (4 outbox entries).
    static func install(_ dir: URL) async throws -> URL {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let url = dir.appendingPathComponent("trendy.sqlite")
        let pool = try DatabasePool(path: url.path)
        try migrator().migrate(pool)
        let store = SQLiteLocalStore(database: pool, logger: LogSystem.disabled().logger(.data))
        let ids = UUIDv7Generator()
        let type = EventType(id: ids.next(), name: "Tea")
        try await store.createEventType(type)
        for i in 0..<3 {
            try await store.createEvent(
                Event(
                    id: ids.next(), eventTypeId: type.id,
                    timestamp: Date(timeIntervalSince1970: 1_700_000_000 + Double(i))))
        }
        try pool.close()
        return url
    }

    static func counts(_ url: URL) throws -> (outbox: Int, events: Int) {
        let queue = try DatabaseQueue(path: url.path)
        defer { try? queue.close() }
        return try queue.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox") ?? -1,
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM local_events") ?? -1
            )
        }
    }

    @Test(arguments: [
        LocalDatabaseRepair.Step.built, .marked, .movedMain, .movedAll, .renamed,
    ])
    func aRepairKilledAtAnyStepLosesNothing(step: LocalDatabaseRepair.Step) async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("repair-kill-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = try await Self.install(dir)
        #expect(throws: LocalDatabaseRepair.Interrupted.self) {
            try LocalDatabaseRepair.repair(at: url, migrator: Self.migrator(), now: Date(), stoppingAfter: step)
        }
        // The next command's open finishes (or forgets) the interrupted repair.
        try LocalDatabaseRepair.finishInterruptedRepair(at: url)
        let (outbox, events) = try Self.counts(url)
        #expect(outbox == 4, "after \(step)")
        #expect(events == 3, "after \(step)")
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        #expect(!left.contains { $0.hasSuffix(".repairing") || $0.hasSuffix(".repair.json") }, "\(left)")
        // A repair afterwards works as usual.
        let report = try LocalDatabaseRepair.repair(at: url, migrator: Self.migrator())
        #expect(report.pendingChanges == 4)
    }

    /// What a download cut short had stored may be among what the damage took: after a repair the
    /// next download starts from the first page, not where the record says (D69).
    @Test func aRepairStartsADownloadCutShortOver() async throws {
        let dir = TemporaryDirectory("repair-progress")
        let url = try await Self.install(dir.url)
        let queue = try DatabaseQueue(path: url.path)
        try await queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO sync_state (key, value) VALUES ('download_progress', '{"user":"u","cursor":9}')
                    """)
        }
        try queue.close()
        _ = try LocalDatabaseRepair.repair(at: url, migrator: Self.migrator())
        let reopened = try DatabaseQueue(path: url.path)
        defer { try? reopened.close() }
        let left = try await reopened.read { db in
            try String.fetchAll(db, sql: "SELECT key FROM sync_state WHERE key IN ('download_progress', 'cursor')")
        }
        #expect(left.isEmpty)
    }
}

/// A repair by a program built without a feature keeps that feature's tables, rows and applied
/// migrations: a program with the feature finds them intact (the review of issue 21 found a
/// repair without the geofence plugin would have dropped the visit ledger).
@Suite struct RepairKeepsUnknownFeaturesTests {
    @Test func aFeatureTheRepairingProgramDoesNotKnowKeepsItsTablesAndMigrations() async throws {
        let dir = TemporaryDirectory("repair-foreign")
        let url = try await RepairInterruptionTests.install(dir.url)
        // Another feature's migration and rows, as a program with that feature left them.
        var full = RepairInterruptionTests.migrator()
        full.registerMigration("v1-feature-x") { db in
            try db.execute(sql: "CREATE TABLE feature_x (id TEXT PRIMARY KEY, n INTEGER NOT NULL)")
            try db.execute(sql: "CREATE INDEX feature_x_n ON feature_x (n)")
        }
        let pool = try DatabasePool(path: url.path)
        try full.migrate(pool)
        try await pool.write { db in
            for i in 0..<3 { try db.execute(sql: "INSERT INTO feature_x VALUES (?, ?)", arguments: ["r\(i)", i]) }
        }
        try pool.close()

        let report = try LocalDatabaseRepair.repair(at: url, migrator: RepairInterruptionTests.migrator())
        #expect(report.copied["feature_x"] == 3)
        // The program with the feature opens the repaired database without re-running its migration.
        let reopened = try DatabaseQueue(path: url.path)
        try full.migrate(reopened)
        let (rows, indexes) = try await reopened.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM feature_x") ?? 0,
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index'")
            )
        }
        #expect(rows == 3)
        #expect(indexes.contains("feature_x_n"))
        #expect(try RepairInterruptionTests.counts(url).outbox == 4, "the known tables were repaired as before")
    }
}
