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
    public init(path: String?) throws {
        db = try ServerDatabase.open(path: path)
    }

    /// Appends a change to the user's feed and answers its cursor. Cursors are numbered per
    /// user (the next is one more than the user's last), so a cursor says nothing about what
    /// other users write; SQLite's single writer makes the numbering race-free.
    @discardableResult
    static func appendChange(
        _ db: Database, userId: String, entity: ChangeEntity, id: String, operation: ChangeOperation, data: String?,
        now: Date
    ) throws -> Int64 {
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO change_log (user_id, seq, entity_type, entity_id, operation, data, created_at)
                VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM change_log WHERE user_id = ?), ?, ?, ?, ?, ?)
                RETURNING seq
                """)
        let cursor = try Int64.fetchOne(
            statement,
            arguments: [
                userId, userId, entity.rawValue, id, operation.rawValue, data, now.timeIntervalSince1970,
            ])
        guard let cursor else { throw DatabaseError(message: "the change feed did not number a change") }
        return cursor
    }

    // MARK: Users and sessions

    /// Implements `ServerStore.createUser`.
    public func createUser(
        id: String, email: String, passwordHash: String, userMetadata: [String: JSONValue], now: Date
    ) async throws -> StoredUser {
        let metadata = try StoreRules.encode(userMetadata)
        return try await db.write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM users WHERE email = ?", arguments: [email]) == true {
                throw StoreError.emailTaken
            }
            try db.execute(
                sql: """
                    INSERT INTO users (id, email, password_hash, created_at, updated_at, user_metadata)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [id, email, passwordHash, now.timeIntervalSince1970, now.timeIntervalSince1970, metadata])
            return StoredUser(
                id: id, email: email, passwordHash: passwordHash, createdAt: now, updatedAt: now, lastSignInAt: nil,
                userMetadata: userMetadata)
        }
    }

    /// Implements `ServerStore.updateUserMetadata`.
    public func updateUserMetadata(userId: String, _ data: [String: JSONValue], maximumBytes: Int, now: Date)
        async throws -> StoredUser?
    {
        try await db.write { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM users WHERE id = ?", arguments: [userId]) else {
                return nil
            }
            let (user, merged) = try StoreRules.mergedMetadata(
                Self.user(from: row), data, maximumBytes: maximumBytes, now: now)
            try db.execute(
                sql: "UPDATE users SET user_metadata = ?, updated_at = ? WHERE id = ?",
                arguments: [merged, now.timeIntervalSince1970, userId])
            return user
        }
    }

    /// Implements `ServerStore.sessionStart`.
    public func sessionStart(_ sessionId: String) async throws -> Date? {
        try await db.read { db in
            try Double.fetchOne(db, sql: "SELECT created_at FROM sessions WHERE id = ?", arguments: [sessionId])
                .map(Date.init(timeIntervalSince1970:))
        }
    }

    /// Implements `ServerStore.startReauthentication`.
    public func startReauthentication(userId: String, codeHash: String, now: Date, minimumInterval: TimeInterval)
        async throws -> ReauthenticationStart
    {
        try await db.write { db in
            let sent = try Double.fetchOne(
                db, sql: "SELECT reauthentication_sent_at FROM users WHERE id = ?", arguments: [userId])
            if let wait = StoreRules.reauthenticationWait(sentAt: sent, now: now, minimumInterval: minimumInterval) {
                return .tooSoon(retryAfter: wait)
            }
            try db.execute(
                sql: """
                    UPDATE users SET reauthentication_hash = ?, reauthentication_sent_at = ?,
                    reauthentication_failures = 0 WHERE id = ?
                    """,
                arguments: [codeHash, now.timeIntervalSince1970, userId])
            return .started
        }
    }

    /// Implements `ServerStore.cancelReauthentication`.
    public func cancelReauthentication(userId: String) async throws {
        try await db.write { db in
            try db.execute(
                sql: "UPDATE users SET reauthentication_hash = NULL, reauthentication_sent_at = NULL WHERE id = ?",
                arguments: [userId])
        }
    }

    /// Implements `ServerStore.consumeReauthentication`.
    public func consumeReauthentication(
        userId: String, codeHash: String, now: Date, lifetime: TimeInterval, maximumFailures: Int
    ) async throws -> Bool {
        try await db.write { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT reauthentication_hash, reauthentication_sent_at, reauthentication_failures
                        FROM users WHERE id = ?
                        """, arguments: [userId]),
                let stored = row[0] as String?, let sent = row[1] as Double?
            else { return false }
            let decision = StoreRules.reauthentication(
                stored: stored, sentAt: sent, failures: row[2] as Int? ?? 0, presented: codeHash, now: now,
                lifetime: lifetime, maximumFailures: maximumFailures)
            try db.execute(
                sql: """
                    UPDATE users SET reauthentication_failures = ?,
                    reauthentication_hash = CASE WHEN ? THEN NULL ELSE reauthentication_hash END WHERE id = ?
                    """,
                arguments: [decision.failures, decision.clearCode, userId])
            return decision.accepted
        }
    }

    /// Implements `ServerStore.updatePassword`.
    public func updatePassword(userId: String, passwordHash: String, now: Date) async throws -> StoredUser? {
        try await db.write { db in
            try db.execute(
                sql: "UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ?",
                arguments: [passwordHash, now.timeIntervalSince1970, userId])
            return try Row.fetchOne(db, sql: "SELECT * FROM users WHERE id = ?", arguments: [userId]).map(Self.user)
        }
    }

    static func user(from row: Row) -> StoredUser {
        StoredUser(
            id: row["id"], email: row["email"], passwordHash: row["password_hash"],
            createdAt: Date(timeIntervalSince1970: row["created_at"]),
            updatedAt: Date(timeIntervalSince1970: row["updated_at"]),
            lastSignInAt: (row["last_sign_in_at"] as Double?).map(Date.init(timeIntervalSince1970:)),
            userMetadata: (row["user_metadata"] as String?).flatMap {
                try? StoreRules.decode([String: JSONValue].self, $0)
            } ?? [:]
        )
    }

    /// Implements `ServerStore.user`.
    public func user(email: String) async throws -> StoredUser? {
        try await db.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM users WHERE email = ?", arguments: [email]).map(Self.user(from:))
        }
    }

    /// Implements `ServerStore.user`.
    public func user(id: String) async throws -> StoredUser? {
        try await db.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM users WHERE id = ?", arguments: [id]).map(Self.user(from:))
        }
    }

    /// Implements `ServerStore.recordSignIn`.
    public func recordSignIn(userId: String, now: Date) async throws {
        try await db.write { db in
            try db.execute(
                sql: "UPDATE users SET last_sign_in_at = ? WHERE id = ?",
                arguments: [now.timeIntervalSince1970, userId])
        }
    }

    /// Implements `ServerStore.createSession`.
    public func createSession(userId: String, refreshToken: String, now: Date) async throws -> String {
        let sessionId = UUID().uuidString.lowercased()
        try await db.write { db in
            try db.execute(
                sql: "INSERT INTO sessions (id, user_id, created_at) VALUES (?, ?, ?)",
                arguments: [sessionId, userId, now.timeIntervalSince1970])
            try db.execute(
                sql: "INSERT INTO refresh_tokens (token, session_id, created_at) VALUES (?, ?, ?)",
                arguments: [refreshToken, sessionId, now.timeIntervalSince1970])
        }
        return sessionId
    }

    /// Implements `ServerStore.rotateRefreshToken`.
    public func rotateRefreshToken(_ token: String, newToken: String, reuseInterval: TimeInterval, now: Date)
        async throws -> RefreshOutcome
    {
        try await db.write { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT t.session_id, t.revoked, t.revoked_at, s.user_id, s.revoked_at AS session_revoked
                        FROM refresh_tokens t JOIN sessions s ON s.id = t.session_id WHERE t.token = ?
                        """, arguments: [token])
            else { return .notFound }
            let sessionId: String = row["session_id"]
            let userId: String = row["user_id"]
            if (row["session_revoked"] as Double?) != nil { return .notFound }
            if (row["revoked"] as Int) == 0 {
                try db.execute(
                    sql: "UPDATE refresh_tokens SET revoked = 1, revoked_at = ? WHERE token = ?",
                    arguments: [now.timeIntervalSince1970, token])
                try db.execute(
                    sql: "INSERT INTO refresh_tokens (token, session_id, parent, created_at) VALUES (?, ?, ?, ?)",
                    arguments: [newToken, sessionId, token, now.timeIntervalSince1970])
                return .rotated(sessionId: sessionId, userId: userId, newToken: newToken)
            }
            let revokedAt = (row["revoked_at"] as Double?) ?? 0
            if now.timeIntervalSince1970 - revokedAt <= reuseInterval,
                let current = try String.fetchOne(
                    db,
                    sql: """
                        SELECT token FROM refresh_tokens WHERE session_id = ? AND revoked = 0
                        ORDER BY created_at DESC LIMIT 1
                        """, arguments: [sessionId])
            {
                return .reused(sessionId: sessionId, userId: userId, currentToken: current)
            }
            // Reuse outside the window: treat as a stolen token and end the session.
            try db.execute(
                sql: "UPDATE sessions SET revoked_at = ? WHERE id = ?",
                arguments: [now.timeIntervalSince1970, sessionId])
            try db.execute(
                sql: "UPDATE refresh_tokens SET revoked = 1, revoked_at = COALESCE(revoked_at, ?) WHERE session_id = ?",
                arguments: [now.timeIntervalSince1970, sessionId])
            return .alreadyUsed
        }
    }

    /// Implements `ServerStore.isSessionActive`.
    public func isSessionActive(_ sessionId: String, userId: String) async throws -> Bool {
        try await db.read { db in
            try Bool.fetchOne(
                db, sql: "SELECT 1 FROM sessions WHERE id = ? AND user_id = ? AND revoked_at IS NULL",
                arguments: [sessionId, userId]) ?? false
        }
    }

    /// Implements `ServerStore.revokeSessions`.
    public func revokeSessions(userId: String, scope: LogoutScope, currentSession: String, now: Date) async throws {
        try await db.write { db in
            let condition: String
            switch scope {
            case .global: condition = "user_id = ?"
            case .local: condition = "user_id = ? AND id = ?"
            case .others: condition = "user_id = ? AND id != ?"
            }
            let args: StatementArguments =
                scope == .global
                ? [now.timeIntervalSince1970, userId] : [now.timeIntervalSince1970, userId, currentSession]
            try db.execute(
                sql: "UPDATE sessions SET revoked_at = ? WHERE revoked_at IS NULL AND \(condition)", arguments: args)
            try db.execute(
                sql: """
                    UPDATE refresh_tokens SET revoked = 1, revoked_at = COALESCE(revoked_at, ?)
                    WHERE session_id IN (SELECT id FROM sessions WHERE revoked_at IS NOT NULL AND user_id = ?)
                    """, arguments: [now.timeIntervalSince1970, userId])
        }
    }

    // MARK: Operations

    /// Implements `ServerStore.isReady`: the file can be read.
    public func isReady() async -> Bool {
        (try? await db.read { db in try Int.fetchOne(db, sql: "SELECT 1") }) == 1
    }

    /// Implements `ServerStore.poolUsage`: SQLite has no connection pool to watch.
    public var poolUsage: (inUse: Int, capacity: Int)? { nil }

    /// Implements `ServerStore.close`: GRDB closes the file when the store is released.
    public func close() async {}

    // MARK: Settings

    /// Implements `ServerStore.setting`.
    public func setting(_ key: String) async throws -> String? {
        try await db.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM server_settings WHERE key = ?", arguments: [key])
        }
    }

    /// Implements `ServerStore.initialSetting`.
    public func initialSetting(_ key: String, value: String) async throws -> String {
        try await db.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO server_settings (key, value) VALUES (?, ?)", arguments: [key, value])
            return try String.fetchOne(db, sql: "SELECT value FROM server_settings WHERE key = ?", arguments: [key])
                ?? value
        }
    }

    // MARK: Idempotency

    /// Implements `ServerStore.claimIdempotencyKey` (the statement is PostgreSQL's too).
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

    /// Implements `ServerStore.releaseIdempotencyKey`.
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

    /// Implements `ServerStore.storeIdempotentResponse`.
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
