import GRDB

/// Sync's tables in the install database. The composition root registers these migrations with
/// the other modules' before opening the database.
public enum SyncSchema {
    /// Adds Sync's migrations.
    public static func register(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("sync.v1") { db in
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
        // Counts kept by triggers, so the banner's "N pending" costs one row read however long
        // the outbox is (COUNT(*) over 100,000 entries took ~14 ms on the launch path).
        migrator.registerMigration("sync.v2-outbox-counts") { db in
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
        // Whether an entry was ever handed to the network and not refused: such an entry's key
        // may be on the server with its body, so the entry is never changed again (D34). Entries
        // from before this column are judged by their attempts, which counted the same sends.
        migrator.registerMigration("sync.v3-outbox-sent") { db in
            try db.execute(
                sql: """
                    ALTER TABLE outbox ADD COLUMN sent INTEGER NOT NULL DEFAULT 0;
                    UPDATE outbox SET sent = 1 WHERE attempts > 0 OR state = 'in_flight';
                    """)
        }
    }
}
