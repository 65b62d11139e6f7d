import Foundation
import GRDB

/// The way back from a damaged install database: the damaged file (with its WAL) is moved aside,
/// a fresh database is created with every module's migrations, and every row that can still be
/// read is copied over — above all the outbox, whose entries keep their payloads and idempotency
/// keys, so unsynced changes survive and are still sent exactly once. The sync cursor is dropped,
/// so the next sync re-downloads everything from the server.
public enum LocalDatabaseRepair {
    /// What a repair did.
    public struct Report: Sendable, Codable, Equatable {
        /// Where the damaged files went.
        public var movedTo: String
        /// Rows copied per table.
        public var copied: [String: Int]
        /// Tables that could not be read (entirely or from some row on).
        public var unreadable: [String]
        /// Unsynced changes kept (outbox entries).
        public var pendingChanges: Int

        enum CodingKeys: String, CodingKey {
            case copied, unreadable
            case movedTo = "moved_to"
            case pendingChanges = "pending_changes"
        }
    }

    /// Whether `error` means the database file is damaged (not merely busy or missing).
    public static func isDamage(_ error: any Error) -> Bool {
        guard let e = error as? DatabaseError else { return false }
        return e.resultCode == .SQLITE_CORRUPT || e.resultCode == .SQLITE_NOTADB
    }

    /// Tables rebuilt by migrations or triggers, or only meaningful for one download.
    static let skipped: Set<String> = ["grdb_migrations", "outbox_counts", "bootstrap_seen", "sqlite_sequence"]

    /// Repairs the database at `url`.
    public static func repair(at url: URL, migrator: DatabaseMigrator, now: Date = Date()) throws -> Report {
        let stamp = Int(now.timeIntervalSince1970)
        let aside = url.deletingLastPathComponent().appendingPathComponent("\(url.lastPathComponent).damaged-\(stamp)")
        let fm = FileManager.default
        for suffix in ["", "-wal", "-shm"] where fm.fileExists(atPath: url.path + suffix) {
            try fm.moveItem(atPath: url.path + suffix, toPath: aside.path + suffix)
        }
        let fresh = try DatabaseQueue(path: url.path)
        try migrator.migrate(fresh)

        var copied: [String: Int] = [:]
        var unreadable: [String] = []
        let damaged: DatabaseQueue?
        do {
            let q = try DatabaseQueue(path: aside.path)
            _ = try q.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM sqlite_master") }
            damaged = q
        } catch {
            damaged = nil
            unreadable.append("*")
        }
        if let damaged {
            let tables = try fresh.read { db in
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            }.filter { !skipped.contains($0) }
            for table in tables {
                let (n, complete) = try copy(table, from: damaged, to: fresh)
                copied[table] = n
                if !complete { unreadable.append(table) }
            }
            try? damaged.close()
        }
        try fresh.write { db in
            // No cursor: the next sync downloads everything again.
            try db.execute(sql: "DELETE FROM sync_state WHERE key = 'cursor'")
            // Entries that were on their way when the damage happened go again (same keys).
            try Outbox.requeueInFlight(db)
        }
        let pending = try fresh.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM outbox") ?? 0 }
        try fresh.close()
        return Report(movedTo: aside.path, copied: copied, unreadable: unreadable.sorted(), pendingChanges: pending)
    }

    /// Copies the readable rows of `table` in rowid order, 500 at a time; returns how many were
    /// copied and whether the whole table could be read.
    static func copy(_ table: String, from damaged: DatabaseQueue, to fresh: DatabaseQueue) throws -> (Int, Bool) {
        let quoted = "\"\(table.replacingOccurrences(of: "\"", with: "\"\""))\""
        let columns: [String]
        do {
            let old = Set(
                try damaged.read { try Row.fetchAll($0, sql: "PRAGMA table_info(\(quoted))") }.map {
                    $0["name"] as String
                })
            let new = try fresh.read { try Row.fetchAll($0, sql: "PRAGMA table_info(\(quoted))") }.map {
                $0["name"] as String
            }
            columns = new.filter(old.contains)
        } catch {
            return (0, false)
        }
        guard !columns.isEmpty else { return (0, true) }
        let list = columns.map { "\"\($0)\"" }.joined(separator: ", ")
        let marks = columns.map { _ in "?" }.joined(separator: ", ")
        var last: Int64 = .min
        var count = 0
        while true {
            let rows: [Row]
            do {
                rows = try damaged.read { db in
                    try Row.fetchAll(
                        db,
                        sql: "SELECT rowid AS _rowid, \(list) FROM \(quoted) WHERE rowid > ? ORDER BY rowid LIMIT 500",
                        arguments: [last])
                }
            } catch {
                return (count, false)
            }
            guard let tail = rows.last else { return (count, true) }
            try fresh.write { db in
                let insert = try db.makeStatement(sql: "INSERT OR IGNORE INTO \(quoted) (\(list)) VALUES (\(marks))")
                for row in rows {
                    try insert.execute(arguments: StatementArguments(columns.map { row[$0] as DatabaseValue }))
                    count += db.changesCount
                }
            }
            last = tail["_rowid"]
        }
    }
}
