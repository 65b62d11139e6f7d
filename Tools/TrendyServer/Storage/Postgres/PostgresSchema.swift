/// The PostgreSQL schema of ``PostgresServerStore``: the same tables as the SQLite store's
/// (`ServerDatabase`), in PostgreSQL's types. Text that is compared or ordered is `COLLATE "C"`
/// and case-insensitive matches use `lower()` over it, which folds ASCII only — exactly SQLite's
/// `NOCASE` — so both stores accept, refuse and order the same names and emails.
enum PostgresSchema {
    /// Named migrations, oldest first; each is a list of statements (the extended protocol takes one at a time).
    static let migrations: [(String, [String])] = [
        (
            "v1",
            [
                """
                CREATE TABLE users (
                    id TEXT COLLATE "C" PRIMARY KEY,
                    email TEXT COLLATE "C" NOT NULL,
                    password_hash TEXT NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    updated_at DOUBLE PRECISION NOT NULL,
                    last_sign_in_at DOUBLE PRECISION,
                    user_metadata TEXT NOT NULL DEFAULT '{}',
                    reauthentication_hash TEXT,
                    reauthentication_sent_at DOUBLE PRECISION,
                    reauthentication_failures BIGINT NOT NULL DEFAULT 0
                )
                """,
                "CREATE UNIQUE INDEX users_email ON users (lower(email))",
                """
                CREATE TABLE sessions (
                    id TEXT COLLATE "C" PRIMARY KEY,
                    user_id TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    created_at DOUBLE PRECISION NOT NULL,
                    revoked_at DOUBLE PRECISION
                )
                """,
                "CREATE INDEX sessions_user ON sessions (user_id)",
                """
                CREATE TABLE refresh_tokens (
                    token TEXT COLLATE "C" PRIMARY KEY,
                    session_id TEXT COLLATE "C" NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                    parent TEXT,
                    revoked BOOLEAN NOT NULL DEFAULT FALSE,
                    created_at DOUBLE PRECISION NOT NULL,
                    revoked_at DOUBLE PRECISION
                )
                """,
                "CREATE INDEX refresh_tokens_session ON refresh_tokens (session_id)",
                """
                CREATE TABLE event_types (
                    id TEXT COLLATE "C" PRIMARY KEY,
                    user_id TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    name TEXT COLLATE "C" NOT NULL,
                    color TEXT NOT NULL,
                    icon TEXT NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    updated_at DOUBLE PRECISION NOT NULL
                )
                """,
                "CREATE UNIQUE INDEX event_types_user_name ON event_types (user_id, lower(name))",
                """
                CREATE TABLE events (
                    id TEXT COLLATE "C" PRIMARY KEY,
                    user_id TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    event_type_id TEXT COLLATE "C" NOT NULL REFERENCES event_types(id) ON DELETE CASCADE,
                    timestamp_ms BIGINT NOT NULL,
                    source_type TEXT COLLATE "C" NOT NULL,
                    external_id TEXT COLLATE "C",
                    body TEXT NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    updated_at DOUBLE PRECISION NOT NULL
                )
                """,
                "CREATE INDEX events_user_time ON events (user_id, timestamp_ms DESC, id DESC)",
                "CREATE INDEX events_type ON events (event_type_id)",
                """
                CREATE UNIQUE INDEX events_dedup_manual ON events (user_id, event_type_id, timestamp_ms)
                    WHERE source_type IN ('manual', 'imported')
                """,
                """
                CREATE UNIQUE INDEX events_dedup_healthkit ON events (user_id, external_id)
                    WHERE source_type = 'healthkit'
                """,
                """
                CREATE TABLE geofences (
                    id TEXT COLLATE "C" PRIMARY KEY,
                    user_id TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    is_active BOOLEAN NOT NULL,
                    body TEXT NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    updated_at DOUBLE PRECISION NOT NULL
                )
                """,
                "CREATE INDEX geofences_user ON geofences (user_id, id)",
                """
                CREATE TABLE onboarding (
                    user_id TEXT COLLATE "C" PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                    body TEXT NOT NULL,
                    updated_at DOUBLE PRECISION NOT NULL
                )
                """,
                """
                CREATE TABLE change_log (
                    user_id TEXT COLLATE "C" NOT NULL,
                    seq BIGINT NOT NULL,
                    entity_type TEXT NOT NULL,
                    entity_id TEXT NOT NULL,
                    operation TEXT NOT NULL,
                    data TEXT,
                    created_at DOUBLE PRECISION NOT NULL,
                    PRIMARY KEY (user_id, seq)
                )
                """,
                """
                CREATE TABLE idempotency_keys (
                    user_id TEXT COLLATE "C" NOT NULL,
                    method TEXT COLLATE "C" NOT NULL,
                    path TEXT COLLATE "C" NOT NULL,
                    key TEXT COLLATE "C" NOT NULL,
                    body_hash TEXT NOT NULL,
                    status BIGINT NOT NULL,
                    response BYTEA NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    PRIMARY KEY (user_id, method, path, key)
                )
                """,
                "CREATE INDEX idempotency_keys_age ON idempotency_keys (created_at)",
                "CREATE TABLE server_settings (key TEXT COLLATE \"C\" PRIMARY KEY, value TEXT NOT NULL)",
                """
                CREATE TABLE field_versions (
                    entity_type TEXT COLLATE "C" NOT NULL,
                    entity_id TEXT COLLATE "C" NOT NULL,
                    field TEXT COLLATE "C" NOT NULL,
                    version BIGINT NOT NULL,
                    device TEXT NOT NULL,
                    changed_at DOUBLE PRECISION NOT NULL,
                    PRIMARY KEY (entity_type, entity_id, field)
                )
                """,
                """
                CREATE TABLE deleted_entities (
                    entity_type TEXT COLLATE "C" NOT NULL,
                    entity_id TEXT COLLATE "C" NOT NULL,
                    user_id TEXT COLLATE "C" NOT NULL,
                    body TEXT NOT NULL,
                    device TEXT NOT NULL,
                    deleted_at DOUBLE PRECISION NOT NULL,
                    PRIMARY KEY (entity_type, entity_id)
                )
                """,
                """
                CREATE TABLE conflicts (
                    position BIGSERIAL PRIMARY KEY,
                    id TEXT COLLATE "C" NOT NULL UNIQUE,
                    user_id TEXT COLLATE "C" NOT NULL,
                    entity_id TEXT COLLATE "C" NOT NULL,
                    field TEXT COLLATE "C" NOT NULL,
                    lost_value TEXT NOT NULL,
                    lost_by TEXT NOT NULL,
                    lost_version BIGINT NOT NULL,
                    body TEXT NOT NULL
                )
                """,
                // Each loss once (see `record`); the lost value by its hash, as a note can outgrow a b-tree entry.
                """
                CREATE UNIQUE INDEX conflicts_once
                    ON conflicts (user_id, entity_id, field, md5(lost_value), lost_by, lost_version)
                """,
                "CREATE INDEX conflicts_user ON conflicts (user_id, position)",
            ]
        ),
        // Idempotency claims carry their holder's token: only the holder releases or answers.
        ("v2-idempotency-claim-tokens", ["ALTER TABLE idempotency_keys ADD COLUMN claim_token TEXT"]),
        // A conflict a device restored or dismissed is closed for every device (issue 32).
        ("v3-resolved-conflicts", ["ALTER TABLE conflicts ADD COLUMN resolved_at DOUBLE PRECISION"]),
        // Property definitions, the fourth synced entity (issue 33): a key once per type, in any case.
        (
            "v4-property-definitions",
            [
                """
                CREATE TABLE property_definitions (
                    id TEXT COLLATE "C" PRIMARY KEY,
                    user_id TEXT COLLATE "C" NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    event_type_id TEXT COLLATE "C" NOT NULL,
                    key_lower TEXT COLLATE "C" NOT NULL,
                    display_order INTEGER NOT NULL,
                    body TEXT NOT NULL,
                    created_at DOUBLE PRECISION NOT NULL,
                    updated_at DOUBLE PRECISION NOT NULL,
                    UNIQUE (event_type_id, key_lower)
                )
                """,
                "CREATE INDEX property_definitions_user ON property_definitions (user_id, event_type_id)",
            ]
        ),
        // Echo suppression (D57, issue 35): the device a change is left out for, and per entity
        // the last change everyone receives and the one device whose own changes follow it.
        (
            "v5-echo-suppression",
            [
                "ALTER TABLE change_log ADD COLUMN echo_device TEXT COLLATE \"C\"",
                // Every change is written with its echo decision. A server from before D57 sharing the
                // database (a rolling upgrade, a rollback) does not name this column, so its writes fail
                // instead of leaving `echo_state` behind the feed.
                "ALTER TABLE change_log ADD COLUMN echo_decided BOOLEAN NOT NULL DEFAULT TRUE",
                "ALTER TABLE change_log ALTER COLUMN echo_decided DROP DEFAULT",
                """
                CREATE TABLE echo_state (
                    entity_type TEXT COLLATE "C" NOT NULL,
                    entity_id TEXT COLLATE "C" NOT NULL,
                    shared BIGINT NOT NULL,
                    device TEXT COLLATE "C",
                    own BIGINT,
                    PRIMARY KEY (entity_type, entity_id)
                )
                """,
            ]
        ),
        // The user's cursor when an entity was deleted: a create of the id tells a late resend
        // (queued before the delete) from one queued after it (an archive imported again, D37).
        ("v6-deleted-versions", ["ALTER TABLE deleted_entities ADD COLUMN version BIGINT"]),
    ]
}
