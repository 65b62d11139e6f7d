import Foundation
import Logging
import PostgresNIO
import TrendyAPI
import TrendyModels

/// ``ServerStore`` over PostgreSQL (PostgresNIO): the production backend, which several server
/// instances can share (D46).
///
/// The rules are the SQLite store's (``StoreRules`` holds what both apply); what differs is how
/// concurrent writers are kept apart. SQLite has one writer; here each transaction that writes a
/// user's data first takes that user's feed lock (``PostgresDatabase/transaction(feedOf:_:)``),
/// so one user's writes run one after another, whichever instance they reach, and their feed
/// cursors become visible in order. Auth rows are locked row by row (`FOR UPDATE`), and inserts
/// that may race another user's use `ON CONFLICT DO NOTHING`.
public final class PostgresServerStore: ServerStore {
    let database: PostgresDatabase

    /// Connects (lazily: the pool opens connections as they are needed) and migrates.
    public init(location: PostgresLocation, maximumConnections: Int = 10, logger: Logger) async throws {
        database = PostgresDatabase(location: location, maximumConnections: maximumConnections, logger: logger)
        do {
            try await database.probe()
            try await database.migrate()
        } catch {
            await database.close()
            throw StoreSetupError(location: location, underlying: error)
        }
    }

    public func close() async { await database.close() }

    public func isReady() async -> Bool { await database.ping() }

    public var poolUsage: (inUse: Int, capacity: Int)? { (database.leased, database.maximumConnections) }

    /// Appends a change to the user's feed and answers its cursor: one more than the user's last.
    /// The caller's transaction holds the user's feed lock, so no other transaction numbers a
    /// change of this user until it commits. `owner`: the base of the device that made it; a
    /// tracked entity's ``EchoState`` is kept in the same statement (D57).
    @discardableResult
    static func appendChange(
        _ s: PostgresSession, userId: String, entity: ChangeEntity, id: String, operation: ChangeOperation,
        data: String?, now: Date, owner: ChangeBase? = nil
    ) async throws -> Int64 {
        var statement = AppendChangeStatement(
            userId: userId, entity: entity.rawValue, id: id, operation: operation.rawValue, data: data,
            createdAt: now.timeIntervalSince1970, echo: nil, keptShared: nil, tracked: false)
        if EchoRule.tracked.contains(entity) {
            statement.tracked = true
            if EchoRule.device(of: owner) != nil {
                let state = try await s.one(
                    """
                    SELECT shared, device, own FROM echo_state
                    WHERE entity_type = \(entity.rawValue) AND entity_id = \(id)
                    """, as: (Int64, String?, Int64?).self
                ).map { EchoState(shared: $0.0, device: $0.1, own: $0.2) }
                let skipped = EchoRule.skips(state, owner: owner, operation: operation)
                statement.echo = skipped ? EchoRule.device(of: owner) : nil
                // Kept when left out; else the change's own cursor (NULL here).
                statement.keptShared =
                    skipped ? EchoRule.after(state, owner: owner, skipped: true, cursor: 0).shared : nil
                statement.upsert = true
            }
        }
        var cursor: Int64?
        // Read to the end (the statement's completion), so the connection is ready for the next one.
        for try await row in try await s.connection.execute(statement, logger: s.logger) { cursor = row }
        guard let cursor else { throw StoreError.conflict("the change feed did not number a change") }
        return cursor
    }

    // MARK: Settings

    public func setting(_ key: String) async throws -> String? {
        try await database.read { s in
            try await s.value("SELECT value FROM server_settings WHERE key = \(key)", as: String.self)
        }
    }

    public func initialSetting(_ key: String, value: String) async throws -> String {
        try await database.read { s in
            try await s.run("INSERT INTO server_settings (key, value) VALUES (\(key), \(value)) ON CONFLICT DO NOTHING")
            return try await s.value("SELECT value FROM server_settings WHERE key = \(key)", as: String.self) ?? value
        }
    }

    // MARK: Idempotency

    /// The key's row is the claim, so the same key
    /// sent to two instances at once runs once (the unique key lets one insert in; the other waits).
    public func claimIdempotencyKey(
        userId: String, method: String, path: String, key: String, bodyHash: String, token: String, now: Date,
        maxAge: TimeInterval, lease: TimeInterval
    ) async throws -> IdempotencyClaim {
        let seconds = now.timeIntervalSince1970
        return try await database.read { s in
            let claimed = try await s.run(
                """
                INSERT INTO idempotency_keys
                (user_id, method, path, key, body_hash, status, response, created_at, claim_token)
                VALUES (\(userId), \(method), \(path), \(key), \(bodyHash), 0, '', \(seconds), \(token))
                ON CONFLICT (user_id, method, path, key) DO UPDATE SET body_hash = EXCLUDED.body_hash,
                status = 0, response = '', created_at = EXCLUDED.created_at, claim_token = EXCLUDED.claim_token
                WHERE idempotency_keys.created_at <= \(seconds - maxAge)
                OR (idempotency_keys.status = 0 AND idempotency_keys.created_at <= \(seconds - lease))
                RETURNING 1
                """)
            if claimed == 1 { return .claimed }
            guard
                let (hash, status, body) = try await s.one(
                    """
                    SELECT body_hash, status, response FROM idempotency_keys
                    WHERE user_id = \(userId) AND method = \(method) AND path = \(path) AND key = \(key)
                    """, as: (String, Int, Data).self)
            else { return .busy }
            return status == 0 ? .busy : .stored(StoredResponse(bodyHash: hash, status: status, body: body))
        }
    }

    public func releaseIdempotencyKey(userId: String, method: String, path: String, key: String, token: String)
        async throws
    {
        try await database.read { s in
            try await s.run(
                """
                DELETE FROM idempotency_keys
                WHERE user_id = \(userId) AND method = \(method) AND path = \(path) AND key = \(key) AND status = 0
                AND claim_token = \(token)
                """)
        }
    }

    public func storeIdempotentResponse(
        userId: String, method: String, path: String, key: String, token: String, response: StoredResponse, now: Date
    ) async throws {
        let seconds = now.timeIntervalSince1970
        try await database.transaction(feedOf: nil) { s in
            try await s.run("DELETE FROM idempotency_keys WHERE created_at < \(seconds - 86_400)")
            try await s.run(
                """
                UPDATE idempotency_keys SET body_hash = \(response.bodyHash), status = \(response.status),
                response = \(response.body), created_at = \(seconds), claim_token = NULL
                WHERE user_id = \(userId) AND method = \(method) AND path = \(path) AND key = \(key)
                AND claim_token = \(token)
                """)
        }
    }
}

/// Appending one change (every single-entity write does) as a named prepared statement. A
/// tracked entity's ``EchoState`` moves with it (D57): `upsert` stores the state of a change by a
/// known device (`keptShared` when it is left out of that device's feed, else the change's own
/// cursor); otherwise an existing state only learns the change reached everyone.
struct AppendChangeStatement: PostgresPreparedStatement {
    static let name = "trendy_append_change_v2"
    static let sql = """
        WITH ins AS (
            INSERT INTO change_log (
                user_id, seq, entity_type, entity_id, operation, data, created_at, echo_device, echo_decided)
            VALUES (
                $1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM change_log WHERE user_id = $1), $2, $3, $4, $5, $6, $7, TRUE)
            RETURNING seq
        ), kept AS (
            INSERT INTO echo_state (entity_type, entity_id, shared, device, own)
            SELECT $2, $3, COALESCE($8, ins.seq), $7, CASE WHEN $7 IS NULL THEN NULL ELSE ins.seq END
            FROM ins WHERE $9 AND $10
            ON CONFLICT (entity_type, entity_id)
            DO UPDATE SET shared = EXCLUDED.shared, device = EXCLUDED.device, own = EXCLUDED.own
        ), cleared AS (
            UPDATE echo_state SET shared = (SELECT seq FROM ins), device = NULL, own = NULL
            WHERE $9 AND NOT $10 AND entity_type = $2 AND entity_id = $3
        )
        SELECT seq FROM ins
        """
    typealias Row = Int64

    var userId: String
    var entity: String
    var id: String
    var operation: String
    var data: String?
    var createdAt: Double
    var echo: String?
    var keptShared: Int64?
    var tracked: Bool
    var upsert = false

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 10)
        bindings.append(userId)
        bindings.append(entity)
        bindings.append(id)
        bindings.append(operation)
        bindings.append(data)
        bindings.append(createdAt)
        bindings.append(echo)
        bindings.append(keptShared)
        bindings.append(tracked)
        bindings.append(upsert)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int64.self) }
}

/// The PostgreSQL store could not start: the database is unreachable, refuses the role, or the
/// schema could not be brought up to date.
public struct StoreSetupError: Error, CustomStringConvertible {
    /// Where it tried.
    public let location: PostgresLocation
    /// What PostgreSQL or the network answered.
    public let underlying: any Error

    /// A readable explanation, without the password.
    public var description: String {
        "cannot use the database \(location.redacted): \(PostgresDatabase.reason(underlying))"
    }
}
