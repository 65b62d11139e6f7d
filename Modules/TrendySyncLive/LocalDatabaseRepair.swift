import Foundation
import GRDB
import TrendyFiles
import TrendyModels
import TrendySync

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
        /// Local rows rebuilt from a queued create whose row was lost (so the list shows them
        /// before the next sync).
        public var restoredFromOutbox: Int

        enum CodingKeys: String, CodingKey {
            case copied, unreadable
            case movedTo = "moved_to"
            case pendingChanges = "pending_changes"
            case restoredFromOutbox = "restored_from_outbox"
        }
    }

    /// Whether `error` means the database file is damaged (not merely busy or missing).
    public static func isDamage(_ error: any Error) -> Bool {
        guard let e = error as? DatabaseError else { return false }
        return e.resultCode == .SQLITE_CORRUPT || e.resultCode == .SQLITE_NOTADB
    }

    /// Tables rebuilt by migrations or triggers, or only meaningful for one download.
    static let skipped: Set<String> = Set(["grdb_migrations", "outbox_counts", "bootstrap_seen", "sqlite_sequence"])
        .union(SearchIndex.tables)

    /// Where a repair stops early in tests (as if the process were killed there).
    enum Step: Sendable {
        case built, marked, movedMain, movedAll, renamed
    }

    struct Interrupted: Error {}

    /// The new database while it is built, next to the live one.
    static func buildingURL(_ url: URL) -> URL { URL(fileURLWithPath: url.path + ".repairing") }
    /// The commit marker: once it exists, the swap is finished by whoever comes next.
    static func markerURL(_ url: URL) -> URL { URL(fileURLWithPath: url.path + ".repair.json") }

    struct Marker: Codable {
        var aside: String
    }

    /// Repairs the database at `url`. The live file is only read until the new database is
    /// complete beside it (`trendy.sqlite.repairing`); then a commit marker is written and the
    /// old files are moved aside and the new one renamed into place. A repair killed before the
    /// marker leaves the live database untouched; one killed after it is finished by
    /// ``finishInterruptedRepair(at:)`` (every open runs it), so a killed repair never leaves a
    /// half-built database where the app looks (an outsider found exactly that losing changes).
    /// The caller must keep every other user of the database out (the install lock).
    /// `derived` names the tables features derive from other rows (their triggers fill them as
    /// the rows are copied); they are left to be rebuilt, never copied.
    public static func repair(
        at url: URL, migrator: DatabaseMigrator, derived: Set<String> = [], now: Date = Date()
    ) throws -> Report {
        try repair(at: url, migrator: migrator, derived: derived, now: now, stoppingAfter: nil)
    }

    static func repair(
        at url: URL, migrator: DatabaseMigrator, derived: Set<String> = [], now: Date, stoppingAfter stop: Step?
    ) throws -> Report {
        let skipped = Self.skipped.union(derived)
        try finishInterruptedRepair(at: url)
        let fm = FileManager.default
        // A free name: two repairs in the same second must not collide.
        let stamp = Int(now.timeIntervalSince1970)
        var aside = url.deletingLastPathComponent().appendingPathComponent("\(url.lastPathComponent).damaged-\(stamp)")
        var n = 1
        while fm.fileExists(atPath: aside.path) {
            n += 1
            aside = url.deletingLastPathComponent().appendingPathComponent(
                "\(url.lastPathComponent).damaged-\(stamp)-\(n)")
        }
        let building = buildingURL(url)
        for suffix in ["", "-journal", "-wal", "-shm"] { try? fm.removeItem(atPath: building.path + suffix) }
        try OwnerOnlyFile.prepareDatabase(building)
        let fresh = try DatabaseQueue(path: building.path)
        try migrator.migrate(fresh)

        var copied: [String: Int] = [:]
        var unreadable: [String] = []
        let damaged: DatabaseQueue?
        do {
            guard fm.fileExists(atPath: url.path) else { throw Interrupted() }
            let q = try DatabaseQueue(path: url.path)
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
            for table in try carryOverUnknownTables(from: damaged, to: fresh, known: Set(tables).union(skipped)) {
                let (n, complete) = try copy(table, from: damaged, to: fresh)
                copied[table] = n
                if !complete { unreadable.append(table) }
            }
            try? damaged.close()
        }
        let restored = try fresh.write { db in
            // No cursor: the next sync downloads everything again, from the first page (what a
            // download cut short had stored may be among what the damage took, D69).
            try db.execute(sql: "DELETE FROM sync_state WHERE key = 'cursor'")
            try DownloadProgress.forget(db)
            // Entries that were on their way when the damage happened go again (same keys).
            try Outbox.requeueInFlight(db)
            return try restoreRowsFromOutbox(db)
        }
        let pending = try fresh.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM outbox") ?? 0 }
        try fresh.close()
        if stop == .built { throw Interrupted() }
        // The commit point.
        try OwnerOnlyFile.write(try JSONEncoder().encode(Marker(aside: aside.path)), to: markerURL(url))
        if stop == .marked { throw Interrupted() }
        try swap(url, aside: aside, stoppingAfter: stop)
        return Report(
            movedTo: aside.path, copied: copied, unreadable: unreadable.sorted(), pendingChanges: pending,
            restoredFromOutbox: restored)
    }

    /// Finishes a repair that was killed after its commit point, or drops the half-built file
    /// of one killed before it (the live database was never touched). Cheap when there is
    /// nothing to do (two `stat`s); run before the database is opened.
    public static func finishInterruptedRepair(at url: URL) throws {
        let fm = FileManager.default
        let marker = markerURL(url)
        if let bytes = fm.contents(atPath: marker.path) {
            guard let state = try? JSONDecoder().decode(Marker.self, from: bytes) else {
                try fm.removeItem(at: marker)
                return
            }
            try swap(url, aside: URL(fileURLWithPath: state.aside), stoppingAfter: nil)
            return
        }
        let building = buildingURL(url)
        guard fm.fileExists(atPath: building.path) else { return }
        for suffix in ["", "-journal", "-wal", "-shm"] { try? fm.removeItem(atPath: building.path + suffix) }
    }

    /// Moves the old files aside and the new database into place; every step can be repeated.
    static func swap(_ url: URL, aside: URL, stoppingAfter stop: Step?) throws {
        let fm = FileManager.default
        let building = buildingURL(url)
        if fm.fileExists(atPath: building.path) {
            for suffix in ["", "-wal", "-shm"] where fm.fileExists(atPath: url.path + suffix) {
                try fm.moveItem(atPath: url.path + suffix, toPath: aside.path + suffix)
                if suffix.isEmpty, stop == .movedMain { throw Interrupted() }
            }
            if stop == .movedAll { throw Interrupted() }
            try fm.moveItem(at: building, to: url)
            if stop == .renamed { throw Interrupted() }
        }
        try fm.removeItem(at: markerURL(url))
    }

    /// Puts back the local row of every queued create whose row was lost (its table was
    /// unreadable): the create's payload is the whole entity. Types first, so their events find
    /// them. Returns how many rows came back.
    static func restoreRowsFromOutbox(_ db: Database) throws -> Int {
        let decoder = TrendyJSON.decoder()
        var restored = 0
        for entity in [SyncEntity.eventType, .propertyDefinition, .geofence, .event] {
            let table = SQLiteLocalStore.table(entity)
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT entity_id, payload FROM outbox
                    WHERE entity = ? AND kind = 'create' AND payload IS NOT NULL
                      AND entity_id NOT IN (SELECT id FROM \(table))
                    ORDER BY seq
                    """, arguments: [entity.rawValue])
            for row in rows {
                let payload: String = row["payload"]
                let data = Data(payload.utf8)
                do {
                    switch entity {
                    case .eventType:
                        let t = try decoder.decode(EventType.self, from: data)
                        try db.execute(
                            sql: """
                                INSERT OR IGNORE INTO local_event_types (id, name, color, icon, sync_status)
                                VALUES (?, ?, ?, ?, 'pending')
                                """, arguments: [t.id.description, t.name, t.color, t.icon])
                    case .propertyDefinition:
                        let d = try decoder.decode(PropertyDefinition.self, from: data)
                        try db.execute(
                            sql: """
                                INSERT OR IGNORE INTO local_property_definitions (id, event_type_id, body, sync_status)
                                VALUES (?, ?, ?, 'pending')
                                """, arguments: [d.id.description, d.eventTypeId.description, payload])
                    case .geofence:
                        let g = try decoder.decode(Geofence.self, from: data)
                        try db.execute(
                            sql: """
                                INSERT OR IGNORE INTO local_geofences (id, body, is_active, sync_status)
                                VALUES (?, ?, ?, 'pending')
                                """, arguments: [g.id.description, payload, g.isActive])
                    case .event:
                        let e = try decoder.decode(Event.self, from: data)
                        try db.execute(
                            sql: """
                                INSERT OR IGNORE INTO local_events
                                    (id, event_type_id, timestamp_ms, source_type, body, sync_status)
                                VALUES (?, ?, ?, ?, ?, 'pending')
                                """,
                            arguments: [
                                e.id.description, e.eventTypeId.description, SQLiteLocalStore.milliseconds(e.timestamp),
                                e.sourceType.rawValue, payload,
                            ])
                    }
                    restored += db.changesCount
                } catch {
                    // An unreadable payload or a row whose type is gone: the change still syncs.
                    continue
                }
            }
        }
        return restored
    }

    /// Creates in `fresh` the tables (with their indexes and triggers) that the damaged database
    /// has and this program's migrations do not — the tables of a feature the program was built
    /// without — and records their applied migrations, so a program with that feature later
    /// finds its tables intact instead of losing them (or failing to create them again). Returns
    /// the tables created; their rows are copied like every other table's.
    static func carryOverUnknownTables(from damaged: DatabaseQueue, to fresh: DatabaseQueue, known: Set<String>) throws
        -> [String]
    {
        let schema: [Row]
        let applied: [String]
        do {
            schema = try damaged.read { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT type, name, tbl_name, sql FROM sqlite_master
                        WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'
                        ORDER BY CASE type WHEN 'table' THEN 0 ELSE 1 END, rowid
                        """)
            }
            applied = try damaged.read { db in
                try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations")
            }
        } catch {
            return []  // the schema itself is unreadable: only the known tables can be rebuilt
        }
        let foreign = schema.filter { !known.contains($0["tbl_name"] as String) }
        guard !foreign.isEmpty else { return [] }
        try fresh.write { db in
            for object in foreign { try db.execute(sql: object["sql"] as String) }
            for identifier in applied {
                try db.execute(
                    sql: "INSERT OR IGNORE INTO grdb_migrations (identifier) VALUES (?)", arguments: [identifier])
            }
        }
        return foreign.filter { ($0["type"] as String) == "table" }.map { $0["name"] as String }
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
