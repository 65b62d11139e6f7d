import Foundation
import GRDB
import TrendyAPI
import TrendyModels
import TrendySync

/// Sync's tables in the install database. The composition root registers these migrations with
/// the other modules' before opening the database.
public enum SyncSchema {
    /// Adds Sync's migrations.
    public static func register(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("sync.v1", migrate: tables)
        migrator.registerMigration("sync.v2-outbox-counts", migrate: outboxCounts)
        migrator.registerMigration("sync.v3-outbox-sent", migrate: outboxSent)
        migrator.registerMigration("sync.v4-field-changes", migrate: fieldChanges)
        migrator.registerMigration("sync.v5-cascades-and-merges", migrate: cascadesAndMerges)
        migrator.registerMigration("sync.v6-field-clocks", migrate: fieldClocks)
        migrator.registerMigration("sync.v7-conflict-resolutions", migrate: conflictResolutions)
        migrator.registerMigration("sync.v8-local-changes", migrate: localChanges)
        migrator.registerMigration("sync.v9-property-definitions", migrate: propertyDefinitions)
        migrator.registerMigration("sync.v10-search", migrate: SearchIndex.migrate)
        migrator.registerMigration("sync.v11-search-deferral", migrate: SearchIndex.migrateDeferral)
        migrator.registerMigration("sync.v12-search-follows-ids", migrate: SearchIndex.migrateRenames)
        // The batch an entry was first sent in (its first entry's seq): a resend after a lost
        // answer goes as that batch again, under the same key.
        migrator.registerMigration("sync.v13-sent-batches") { db in
            try db.execute(sql: "ALTER TABLE outbox ADD COLUMN batch INTEGER")
        }
        // A create the server answered `deleted`, queued after the delete (an archive imported
        // again after its events were deleted) went again under a new id: `merged_events` says
        // where, and whether it was a revival rather than a de-duplication.
        migrator.registerMigration("sync.v14-revived-events") { db in
            try db.execute(sql: "ALTER TABLE merged_events ADD COLUMN revived INTEGER NOT NULL DEFAULT 0")
        }
        // When the server last took a change of each field of each entity from this device, by
        // its own clock (the write's answer): a download after the server lost changes (D59, D60) re-sends this
        // device's copy of an entity the server now has in an older version, and a delete it lost
        // (field `-deleted`; D61), noted in `bootstrap_behind` while the download runs (a NULL
        // patch: the delete). Rowid tables: `trendy repair` copies tables by rowid.
        migrator.registerMigration("sync.v15-pushed-versions") { db in
            try db.execute(
                sql: """
                    CREATE TABLE pushed_versions (
                        entity TEXT NOT NULL, entity_id TEXT NOT NULL, field TEXT NOT NULL, at TEXT NOT NULL,
                        PRIMARY KEY (entity, entity_id, field)
                    );
                    CREATE TABLE bootstrap_behind (
                        entity TEXT NOT NULL, id TEXT NOT NULL, patch TEXT, PRIMARY KEY (entity, id)
                    );
                    """)
        }
    }

    /// `sync.v1`: the local entities, the outbox, tombstones, the cursor and the history.
    static func tables(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE local_event_types (
                    id TEXT PRIMARY KEY,
                    name TEXT NOT NULL COLLATE NOCASE,
                    color TEXT NOT NULL,
                    icon TEXT NOT NULL,
                    sync_status TEXT NOT NULL
                );
                CREATE TABLE local_events (
                    id TEXT PRIMARY KEY,
                    event_type_id TEXT NOT NULL,
                    timestamp_ms INTEGER NOT NULL,
                    source_type TEXT NOT NULL,
                    body TEXT NOT NULL,
                    sync_status TEXT NOT NULL
                );
                CREATE INDEX local_events_time ON local_events(timestamp_ms DESC, id DESC);
                CREATE INDEX local_events_type_time ON local_events(event_type_id, timestamp_ms);
                CREATE TABLE local_geofences (
                    id TEXT PRIMARY KEY,
                    body TEXT NOT NULL,
                    is_active INTEGER NOT NULL,
                    sync_status TEXT NOT NULL
                );
                CREATE TABLE outbox (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    entity TEXT NOT NULL,
                    entity_id TEXT NOT NULL,
                    kind TEXT NOT NULL,
                    payload TEXT,
                    idempotency_key TEXT NOT NULL,
                    state TEXT NOT NULL DEFAULT 'pending',
                    attempts INTEGER NOT NULL DEFAULT 0,
                    next_attempt_at REAL NOT NULL DEFAULT 0,
                    last_error TEXT,
                    created_at REAL NOT NULL
                );
                CREATE INDEX outbox_entity ON outbox(entity, entity_id);
                CREATE INDEX outbox_state_seq ON outbox(state, seq);
                CREATE TABLE tombstones (
                    entity TEXT NOT NULL,
                    entity_id TEXT NOT NULL,
                    PRIMARY KEY (entity, entity_id)
                );
                CREATE TABLE sync_state (
                    key TEXT PRIMARY KEY,
                    value TEXT NOT NULL
                );
                CREATE TABLE sync_history (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    body TEXT NOT NULL
                );
                """)
    }

    /// Counts kept by triggers, so the banner's "N pending" costs one row read however long
    /// the outbox is (COUNT(*) over 100,000 entries took ~14 ms on the launch path).
    static func outboxCounts(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE outbox_counts (state TEXT PRIMARY KEY, n INTEGER NOT NULL);
                INSERT INTO outbox_counts (state, n) VALUES ('pending', 0), ('in_flight', 0), ('failed', 0);
                UPDATE outbox_counts SET n = (SELECT COUNT(*) FROM outbox WHERE outbox.state = outbox_counts.state);
                CREATE TRIGGER outbox_count_insert AFTER INSERT ON outbox BEGIN
                    UPDATE outbox_counts SET n = n + 1 WHERE state = NEW.state;
                END;
                CREATE TRIGGER outbox_count_delete AFTER DELETE ON outbox BEGIN
                    UPDATE outbox_counts SET n = n - 1 WHERE state = OLD.state;
                END;
                CREATE TRIGGER outbox_count_update AFTER UPDATE OF state ON outbox WHEN OLD.state != NEW.state BEGIN
                    UPDATE outbox_counts SET n = n - 1 WHERE state = OLD.state;
                    UPDATE outbox_counts SET n = n + 1 WHERE state = NEW.state;
                END;
                """)
    }

    /// Whether an entry was ever handed to the network and not refused: such an entry's key
    /// may be on the server with its body, so the entry is never changed again (D34). Entries
    /// from before this column are judged by their attempts, which counted the same sends.
    static func outboxSent(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE outbox ADD COLUMN sent INTEGER NOT NULL DEFAULT 0;
                UPDATE outbox SET sent = 1 WHERE attempts > 0 OR state = 'in_flight';
                """)
    }

    /// Field-level changes and conflicts (D37): an update entry holds only the fields it
    /// changed and the feed cursor it was made on; this install has a device id; conflicts
    /// the server reports (or a pull finds) are kept. Updates queued by earlier versions held
    /// the whole entity: they become patches of every field, sent without a base (as before).
    static func fieldChanges(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE outbox ADD COLUMN base_version INTEGER;
                INSERT OR IGNORE INTO sync_state (key, value) VALUES ('device_id', lower(hex(randomblob(16))));
                CREATE TABLE sync_conflicts (
                    id TEXT PRIMARY KEY,
                    body TEXT NOT NULL,
                    entity TEXT NOT NULL,
                    entity_id TEXT NOT NULL,
                    state TEXT NOT NULL DEFAULT 'open',
                    detected_at REAL NOT NULL
                );
                CREATE INDEX sync_conflicts_entity ON sync_conflicts(entity_id);
                """)
        for row in try Row.fetchAll(db, sql: "SELECT seq, entity, payload FROM outbox WHERE kind = 'update'") {
            guard let text = row["payload"] as String?, let entity = SyncEntity(rawValue: row["entity"]) else {
                continue
            }
            try db.execute(
                sql: "UPDATE outbox SET payload = ? WHERE seq = ?",
                arguments: [try LegacyUpdate.patch(entity, text), row["seq"] as Int64])
        }
    }

    /// A tombstone left by a type's cascade names the type (`cascade_of`): it holds back only
    /// server copies that are still of that type, so an event another device moved to another
    /// type before the delete reached the server comes back (the server's cascade is the
    /// truth). `merged_events`: events of this device the server de-duplicated into another
    /// device's copy (same type and time), so `sync explain <old id>` can say where they went.
    static func cascadesAndMerges(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE tombstones ADD COLUMN cascade_of TEXT;
                CREATE TABLE merged_events (
                    local_id TEXT PRIMARY KEY,
                    server_id TEXT NOT NULL
                );
                """)
    }

    /// `field_clock`: when each field folded into a waiting entry was written (``OutboxClock``);
    /// NULL, or a field it does not name, means written with the entry.
    static func fieldClocks(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE outbox ADD COLUMN field_clock TEXT")
    }

    /// `resolution_unsent`: this device restored or dismissed the conflict and the server has not
    /// heard yet (a resolution syncs: every device closes it).
    static func conflictResolutions(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE sync_conflicts ADD COLUMN resolution_unsent INTEGER NOT NULL DEFAULT 0")
    }

    /// `local_changes`: the change mark of each entity's last local edit or delete (and of a
    /// pulled change that altered such an event since)
    /// (``SQLiteLocalStore/changedLocally(_:after:)``). It outlives the outbox entry, which goes
    /// once sent: undo asks whether anything changed an event here since a key did, and a pass in
    /// between used to hide it. Creates are not recorded (an import adds no rows).
    static func localChanges(_ db: Database) throws {
        try db.execute(sql: "CREATE TABLE local_changes (entity_id TEXT PRIMARY KEY, mark INTEGER NOT NULL)")
    }
}

extension SyncSchema {
    /// `local_property_definitions`: the custom properties of the types (issue 33), by type.
    static func propertyDefinitions(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE local_property_definitions (
                    id TEXT PRIMARY KEY,
                    event_type_id TEXT NOT NULL,
                    body TEXT NOT NULL,
                    sync_status TEXT NOT NULL
                );
                CREATE INDEX local_property_definitions_type ON local_property_definitions(event_type_id);
                """)
    }
}

/// Updates queued before field-level changes held the whole entity.
enum LegacyUpdate {
    /// The whole-entity payload as a patch of every field.
    static func patch(_ entity: SyncEntity, _ whole: String) throws -> String {
        let data = Data(whole.utf8)
        let decoder = TrendyJSON.decoder()
        switch entity {
        case .event:
            return FieldPatch.text(
                try FieldPatch.object(EventUpdate(everyFieldOf: try decoder.decode(Event.self, from: data))))
        case .eventType:
            return FieldPatch.text(
                try FieldPatch.object(EventTypeUpdate(everyFieldOf: try decoder.decode(EventType.self, from: data))))
        case .geofence:
            return FieldPatch.text(
                try FieldPatch.object(GeofenceUpdate(everyFieldOf: try decoder.decode(Geofence.self, from: data))))
        case .propertyDefinition:
            return FieldPatch.text(
                try FieldPatch.object(
                    PropertyDefinitionUpdate(everyFieldOf: try decoder.decode(PropertyDefinition.self, from: data))))
        }
    }
}
