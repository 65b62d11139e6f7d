import Foundation
import GRDB
import TrendyAPI
import TrendyModels

/// ``ServerStore`` over SQLite (GRDB): WAL for files, in-memory for tests.
///
/// Events and geofences are stored as their wire JSON (with timestamps) next to the columns
/// that are indexed or de-duplicated on; the same JSON is the change-log payload.
public final class SQLiteServerStore: ServerStore {
    let db: any DatabaseWriter

    /// Opens (and migrates) the database at `path`, or an in-memory one when nil.
    public init(path: String?, qos: DispatchQoS? = nil) throws {
        db = try ServerDatabase.open(path: path, qos: qos)
    }

    /// Appends a change to the user's feed and answers its cursor. Cursors are numbered per
    /// user (the next is one more than the user's last), so a cursor says nothing about what
    /// other users write; SQLite's single writer makes the numbering race-free. `echo`: the
    /// device whose feed leaves the change out (D57).
    @discardableResult
    static func appendChange(
        _ db: Database, userId: String, entity: ChangeEntity, id: String, operation: ChangeOperation, data: String?,
        now: Date, echo: String? = nil
    ) throws -> Int64 {
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO change_log (user_id, seq, entity_type, entity_id, operation, data, created_at, echo_device)
                VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM change_log WHERE user_id = ?), ?, ?, ?, ?, ?, ?)
                RETURNING seq
                """)
        let cursor = try Int64.fetchOne(
            statement,
            arguments: [
                userId, userId, entity.rawValue, id, operation.rawValue, data, now.timeIntervalSince1970, echo,
            ])
        guard let cursor else { throw DatabaseError(message: "the change feed did not number a change") }
        return cursor
    }

    /// Appends a change of an entity made by `owner`'s device, left out of that device's feed
    /// when ``EchoRule`` says it holds the change already; keeps the entity's ``EchoState``.
    static func appendChange(
        _ db: Database, userId: String, entity: ChangeEntity, id: String, operation: ChangeOperation, data: String?,
        now: Date, owner: ChangeBase?
    ) throws -> Int64 {
        guard EchoRule.tracked.contains(entity) else {
            return try appendChange(
                db, userId: userId, entity: entity, id: id, operation: operation, data: data, now: now)
        }
        guard EchoRule.device(of: owner) != nil else {
            let cursor = try appendChange(
                db, userId: userId, entity: entity, id: id, operation: operation, data: data, now: now)
            try db.cachedStatement(
                sql:
                    "UPDATE echo_state SET shared = ?, device = NULL, own = NULL WHERE entity_type = ? AND entity_id = ?"
            ).execute(arguments: [cursor, entity.rawValue, id])
            return cursor
        }
        let state = try Row.fetchOne(
            db.cachedStatement(
                sql: "SELECT shared, device, own FROM echo_state WHERE entity_type = ? AND entity_id = ?"),
            arguments: [entity.rawValue, id]
        ).map { EchoState(shared: $0[0], device: $0[1], own: $0[2]) }
        let skipped = EchoRule.skips(state, owner: owner, operation: operation)
        let cursor = try appendChange(
            db, userId: userId, entity: entity, id: id, operation: operation, data: data, now: now,
            echo: skipped ? EchoRule.device(of: owner) : nil)
        try saveEcho(db, entity, id, EchoRule.after(state, owner: owner, skipped: skipped, cursor: cursor))
        return cursor
    }

    static func saveEcho(_ db: Database, _ entity: ChangeEntity, _ id: String, _ state: EchoState) throws {
        try db.cachedStatement(
            sql:
                "INSERT OR REPLACE INTO echo_state (entity_type, entity_id, shared, device, own) VALUES (?, ?, ?, ?, ?)"
        ).execute(arguments: [entity.rawValue, id, state.shared, state.device, state.own])
    }

    // MARK: Operations

    /// The file can be read.
    public func isReady() async -> Bool {
        (try? await db.read { db in try Int.fetchOne(db, sql: "SELECT 1") }) == 1
    }

    /// SQLite has no connection pool to watch.
    public var poolUsage: (inUse: Int, capacity: Int)? { nil }

    /// GRDB closes the file when the store is released.
    public func close() async {}

    // MARK: Settings

    public func setting(_ key: String) async throws -> String? {
        try await db.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM server_settings WHERE key = ?", arguments: [key])
        }
    }

    public func initialSetting(_ key: String, value: String) async throws -> String {
        try await db.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO server_settings (key, value) VALUES (?, ?)", arguments: [key, value])
            return try String.fetchOne(db, sql: "SELECT value FROM server_settings WHERE key = ?", arguments: [key])
                ?? value
        }
    }

    // MARK: Idempotency

    /// One statement claims the key (the same statement as PostgreSQL's).
    public func claimIdempotencyKey(
        userId: String, method: String, path: String, key: String, bodyHash: String, token: String, now: Date,
        maxAge: TimeInterval, lease: TimeInterval
    ) async throws -> IdempotencyClaim {
        let seconds = now.timeIntervalSince1970
        return try await db.write { db in
            let claimed = try Row.fetchOne(
                db,
                sql: """
                    INSERT INTO idempotency_keys
                    (user_id, method, path, key, body_hash, status, response, created_at, claim_token)
                    VALUES (?, ?, ?, ?, ?, 0, x'', ?, ?)
                    ON CONFLICT (user_id, method, path, key) DO UPDATE SET body_hash = excluded.body_hash,
                    status = 0, response = x'', created_at = excluded.created_at, claim_token = excluded.claim_token
                    WHERE idempotency_keys.created_at <= ?
                    OR (idempotency_keys.status = 0 AND idempotency_keys.created_at <= ?)
                    RETURNING 1
                    """,
                arguments: [userId, method, path, key, bodyHash, seconds, token, seconds - maxAge, seconds - lease])
            if claimed != nil { return .claimed }
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT body_hash, status, response FROM idempotency_keys
                        WHERE user_id = ? AND method = ? AND path = ? AND key = ?
                        """, arguments: [userId, method, path, key])
            else { return .busy }
            let status: Int = row["status"]
            return status == 0
                ? .busy : .stored(StoredResponse(bodyHash: row["body_hash"], status: status, body: row["response"]))
        }
    }

    public func releaseIdempotencyKey(userId: String, method: String, path: String, key: String, token: String)
        async throws
    {
        try await db.write { db in
            try db.execute(
                sql: """
                    DELETE FROM idempotency_keys WHERE user_id = ? AND method = ? AND path = ? AND key = ?
                    AND status = 0 AND claim_token = ?
                    """, arguments: [userId, method, path, key, token])
        }
    }

    public func storeIdempotentResponse(
        userId: String, method: String, path: String, key: String, token: String, response: StoredResponse, now: Date
    ) async throws {
        try await db.write { db in
            try db.execute(
                sql: "DELETE FROM idempotency_keys WHERE created_at < ?",
                arguments: [now.timeIntervalSince1970 - 86_400])
            try db.execute(
                sql: """
                    UPDATE idempotency_keys SET body_hash = ?, status = ?, response = ?, created_at = ?, claim_token = NULL
                    WHERE user_id = ? AND method = ? AND path = ? AND key = ? AND claim_token = ?
                    """,
                arguments: [
                    response.bodyHash, response.status, response.body, now.timeIntervalSince1970, userId, method, path,
                    key, token,
                ])
        }
    }
}
