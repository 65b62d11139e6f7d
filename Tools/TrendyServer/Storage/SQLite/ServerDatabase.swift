import Foundation
import GRDB

/// Opens the server's SQLite database (WAL, foreign keys) and migrates it.
enum ServerDatabase {
    /// `qos`: the database threads' quality of service (GRDB's default is `userInitiated`, which
    /// Linux runs at `nice -2`, above an app's main thread).
    static func open(path: String?, qos: DispatchQoS? = nil) throws -> any DatabaseWriter {
        var config = Configuration()
        if let qos { config.qos = qos }
        config.foreignKeysEnabled = true
        config.busyMode = .timeout(10)
        let writer: any DatabaseWriter
        if let path {
            let url = URL(fileURLWithPath: path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            config.prepareDatabase { db in
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
            }
            writer = try DatabasePool(path: path, configuration: config)
        } else {
            writer = try DatabaseQueue(configuration: config)
        }
        try migrator.migrate(writer)
        return writer
    }

    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE users (
                        id TEXT PRIMARY KEY,
                        email TEXT NOT NULL UNIQUE COLLATE NOCASE,
                        password_hash TEXT NOT NULL,
                        created_at REAL NOT NULL,
                        updated_at REAL NOT NULL,
                        last_sign_in_at REAL
                    );
                    CREATE TABLE sessions (
                        id TEXT PRIMARY KEY,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        created_at REAL NOT NULL,
                        revoked_at REAL
                    );
                    CREATE INDEX sessions_user ON sessions(user_id);
                    CREATE TABLE refresh_tokens (
                        token TEXT PRIMARY KEY,
                        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                        parent TEXT,
                        revoked INTEGER NOT NULL DEFAULT 0,
                        created_at REAL NOT NULL,
                        revoked_at REAL
                    );
                    CREATE INDEX refresh_tokens_session ON refresh_tokens(session_id);
                    CREATE TABLE event_types (
                        id TEXT PRIMARY KEY,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        name TEXT NOT NULL COLLATE NOCASE,
                        color TEXT NOT NULL,
                        icon TEXT NOT NULL,
                        created_at REAL NOT NULL,
                        updated_at REAL NOT NULL,
                        UNIQUE (user_id, name)
                    );
                    CREATE TABLE events (
                        id TEXT PRIMARY KEY,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        event_type_id TEXT NOT NULL REFERENCES event_types(id) ON DELETE CASCADE,
                        timestamp_ms INTEGER NOT NULL,
                        source_type TEXT NOT NULL,
                        external_id TEXT,
                        body TEXT NOT NULL,
                        created_at REAL NOT NULL,
                        updated_at REAL NOT NULL
                    );
                    CREATE INDEX events_user_time ON events(user_id, timestamp_ms DESC, id DESC);
                    CREATE UNIQUE INDEX events_dedup_manual ON events(user_id, event_type_id, timestamp_ms)
                        WHERE source_type IN ('manual', 'imported');
                    CREATE UNIQUE INDEX events_dedup_healthkit ON events(user_id, external_id)
                        WHERE source_type = 'healthkit';
                    CREATE TABLE geofences (
                        id TEXT PRIMARY KEY,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        is_active INTEGER NOT NULL,
                        body TEXT NOT NULL,
                        created_at REAL NOT NULL,
                        updated_at REAL NOT NULL
                    );
                    CREATE INDEX geofences_user ON geofences(user_id);
                    CREATE TABLE onboarding (
                        user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                        body TEXT NOT NULL,
                        updated_at REAL NOT NULL
                    );
                    CREATE TABLE change_log (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        user_id TEXT NOT NULL,
                        entity_type TEXT NOT NULL,
                        entity_id TEXT NOT NULL,
                        operation TEXT NOT NULL,
                        data TEXT,
                        created_at REAL NOT NULL
                    );
                    CREATE INDEX change_log_user_cursor ON change_log(user_id, id);
                    CREATE TABLE idempotency_keys (
                        user_id TEXT NOT NULL,
                        method TEXT NOT NULL,
                        path TEXT NOT NULL,
                        key TEXT NOT NULL,
                        body_hash TEXT NOT NULL,
                        status INTEGER NOT NULL,
                        response BLOB NOT NULL,
                        created_at REAL NOT NULL,
                        PRIMARY KEY (user_id, method, path, key)
                    );
                    CREATE INDEX idempotency_keys_age ON idempotency_keys(created_at);
                    CREATE TABLE server_settings (
                        key TEXT PRIMARY KEY,
                        value TEXT NOT NULL
                    );
                    """)
        }
        // Field-level versions and conflicts (D37): which change last set each field and from
        // which device, the last content of deleted entities, and each conflict once.
        m.registerMigration("v2-field-versions") { db in
            try db.execute(
                sql: """
                    CREATE TABLE field_versions (
                        entity_type TEXT NOT NULL,
                        entity_id TEXT NOT NULL,
                        field TEXT NOT NULL,
                        version INTEGER NOT NULL,
                        device TEXT NOT NULL,
                        changed_at REAL NOT NULL,
                        PRIMARY KEY (entity_type, entity_id, field)
                    );
                    CREATE TABLE deleted_entities (
                        entity_type TEXT NOT NULL,
                        entity_id TEXT NOT NULL,
                        user_id TEXT NOT NULL,
                        body TEXT NOT NULL,
                        device TEXT NOT NULL,
                        deleted_at REAL NOT NULL,
                        PRIMARY KEY (entity_type, entity_id)
                    );
                    CREATE TABLE conflicts (
                        id TEXT PRIMARY KEY,
                        user_id TEXT NOT NULL,
                        entity_id TEXT NOT NULL,
                        field TEXT NOT NULL,
                        lost_value TEXT NOT NULL,
                        lost_by TEXT NOT NULL,
                        lost_version INTEGER NOT NULL,
                        body TEXT NOT NULL,
                        UNIQUE (user_id, entity_id, field, lost_value, lost_by, lost_version)
                    );
                    """)
        }
        // Per-user feed cursors (issue 20): a cursor numbered across all users told a new user
        // how much everyone else had written. Existing changes keep their numbers (a device's
        // cursor stays valid, nothing is pulled twice); each user's next change is numbered one
        // more than that user's last.
        m.registerMigration("v3-per-user-cursors") { db in
            try db.execute(
                sql: """
                    ALTER TABLE change_log ADD COLUMN seq INTEGER;
                    UPDATE change_log SET seq = id;
                    DROP INDEX change_log_user_cursor;
                    CREATE UNIQUE INDEX change_log_user_seq ON change_log(user_id, seq);
                    """)
        }
        // GoTrue's user metadata and reauthentication codes (issue 20).
        m.registerMigration("v4-user-metadata-reauthentication") { db in
            try db.execute(
                sql: """
                    ALTER TABLE users ADD COLUMN user_metadata TEXT NOT NULL DEFAULT '{}';
                    ALTER TABLE users ADD COLUMN reauthentication_hash TEXT;
                    ALTER TABLE users ADD COLUMN reauthentication_sent_at REAL;
                    ALTER TABLE users ADD COLUMN reauthentication_failures INTEGER NOT NULL DEFAULT 0;
                    """)
        }
        // Idempotency claims carry their holder's token (issue 23): only the holder releases the
        // claim or stores its answer.
        m.registerMigration("v5-idempotency-claim-tokens") { db in
            try db.execute(sql: "ALTER TABLE idempotency_keys ADD COLUMN claim_token TEXT")
        }
        // A conflict a device restored or dismissed is closed for every device (issue 32).
        m.registerMigration("v6-resolved-conflicts") { db in
            try db.execute(sql: "ALTER TABLE conflicts ADD COLUMN resolved_at REAL")
        }
        // Property definitions, the fourth synced entity (issue 33): a key once per type, in any case.
        m.registerMigration("v7-property-definitions") { db in
            try db.execute(
                sql: """
                    CREATE TABLE property_definitions (
                        id TEXT PRIMARY KEY,
                        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        event_type_id TEXT NOT NULL,
                        key_lower TEXT NOT NULL,
                        display_order INTEGER NOT NULL,
                        body TEXT NOT NULL,
                        created_at REAL NOT NULL,
                        updated_at REAL NOT NULL,
                        UNIQUE (event_type_id, key_lower)
                    );
                    CREATE INDEX property_definitions_user ON property_definitions(user_id, event_type_id);
                    """)
        }
        // Echo suppression (D57, issue 35): the device a change is left out for, and per entity
        // the last change everyone receives and the one device whose own changes follow it.
        m.registerMigration("v8-echo-suppression") { db in
            try db.execute(
                sql: """
                    ALTER TABLE change_log ADD COLUMN echo_device TEXT;
                    CREATE TABLE echo_state (
                        entity_type TEXT NOT NULL,
                        entity_id TEXT NOT NULL,
                        shared INTEGER NOT NULL,
                        device TEXT,
                        own INTEGER,
                        PRIMARY KEY (entity_type, entity_id)
                    ) WITHOUT ROWID;
                    """)
        }
        // The user's cursor when an entity was deleted: a create of the id tells a late resend
        // (queued before the delete) from one queued after it (an archive imported again, D37).
        m.registerMigration("v9-deleted-versions") { db in
            try db.execute(sql: "ALTER TABLE deleted_entities ADD COLUMN version INTEGER")
        }
        return m
    }
}
