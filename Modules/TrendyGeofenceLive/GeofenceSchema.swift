import GRDB

/// Geofence's tables in the install database: the per-geofence visit state and the crossings
/// handled (their ids make handling idempotent). The composition root registers these with the
/// other modules' migrations; they live next to Sync's tables so a crossing, its event and the
/// event's outbox entry commit together.
public enum GeofenceSchema {
    /// How many handled crossings are kept (the oldest go first).
    static let crossingHistoryLimit = 10_000

    /// Adds Geofence's migrations.
    public static func register(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("geofence.v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE geofence_visit_states (
                        geofence_id TEXT PRIMARY KEY,
                        inside INTEGER NOT NULL,
                        open_event_id TEXT,
                        last_transition_ms INTEGER,
                        last_kind TEXT
                    );
                    CREATE TABLE geofence_crossings (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        id TEXT NOT NULL UNIQUE,
                        geofence_id TEXT NOT NULL,
                        body TEXT NOT NULL,
                        outcome TEXT NOT NULL,
                        handled_ms INTEGER NOT NULL
                    );
                    CREATE INDEX geofence_crossings_geofence ON geofence_crossings(geofence_id, seq);
                    """)
        }
    }
}
