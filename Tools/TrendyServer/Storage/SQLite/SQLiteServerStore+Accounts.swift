import Foundation
import GRDB
import TrendyAPI
import TrendyModels

/// Accounts, sessions and refresh tokens (the ``AccountStore`` role).
extension SQLiteServerStore {
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

    public func sessionStart(_ sessionId: String) async throws -> Date? {
        try await db.read { db in
            try Double.fetchOne(db, sql: "SELECT created_at FROM sessions WHERE id = ?", arguments: [sessionId])
                .map(Date.init(timeIntervalSince1970:))
        }
    }

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

    public func cancelReauthentication(userId: String) async throws {
        try await db.write { db in
            try db.execute(
                sql: "UPDATE users SET reauthentication_hash = NULL, reauthentication_sent_at = NULL WHERE id = ?",
                arguments: [userId])
        }
    }

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

    public func user(email: String) async throws -> StoredUser? {
        try await db.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM users WHERE email = ?", arguments: [email]).map(Self.user(from:))
        }
    }

    public func user(id: String) async throws -> StoredUser? {
        try await db.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM users WHERE id = ?", arguments: [id]).map(Self.user(from:))
        }
    }

    public func recordSignIn(userId: String, now: Date) async throws {
        try await db.write { db in
            try db.execute(
                sql: "UPDATE users SET last_sign_in_at = ? WHERE id = ?",
                arguments: [now.timeIntervalSince1970, userId])
        }
    }

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

    public func rotateRefreshToken(_ token: String, newToken: String, reuseInterval: TimeInterval, now: Date)
        async throws -> RefreshOutcome
    {
        try await db.write { db in
            var facts: StoreRules.RefreshFacts?
            if let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT t.session_id, t.revoked, t.revoked_at, s.user_id, s.revoked_at AS session_revoked
                    FROM refresh_tokens t JOIN sessions s ON s.id = t.session_id WHERE t.token = ?
                    """, arguments: [token])
            {
                let sessionId: String = row["session_id"]
                let revoked = (row["revoked"] as Int) != 0
                facts = StoreRules.RefreshFacts(
                    sessionId: sessionId, userId: row["user_id"],
                    revokedAt: revoked ? (row["revoked_at"] as Double?) ?? 0 : nil,
                    sessionRevoked: (row["session_revoked"] as Double?) != nil,
                    current: revoked
                        ? try String.fetchOne(
                            db,
                            sql: """
                                SELECT token FROM refresh_tokens WHERE session_id = ? AND revoked = 0
                                ORDER BY created_at DESC LIMIT 1
                                """, arguments: [sessionId]) : nil)
            }
            let decision = StoreRules.refresh(facts, now: now, reuseInterval: reuseInterval)
            switch (decision, facts?.sessionId) {
            case (.rotate, let sessionId?):
                try db.execute(
                    sql: "UPDATE refresh_tokens SET revoked = 1, revoked_at = ? WHERE token = ?",
                    arguments: [now.timeIntervalSince1970, token])
                try db.execute(
                    sql: "INSERT INTO refresh_tokens (token, session_id, parent, created_at) VALUES (?, ?, ?, ?)",
                    arguments: [newToken, sessionId, token, now.timeIntervalSince1970])
            case (.endSession, let sessionId?):
                try db.execute(
                    sql: "UPDATE sessions SET revoked_at = ? WHERE id = ?",
                    arguments: [now.timeIntervalSince1970, sessionId])
                try db.execute(
                    sql: """
                        UPDATE refresh_tokens SET revoked = 1, revoked_at = COALESCE(revoked_at, ?) WHERE session_id = ?
                        """, arguments: [now.timeIntervalSince1970, sessionId])
            default: break
            }
            return StoreRules.outcome(decision, facts, newToken: newToken)
        }
    }

    public func isSessionActive(_ sessionId: String, userId: String) async throws -> Bool {
        try await db.read { db in
            try Bool.fetchOne(
                db, sql: "SELECT 1 FROM sessions WHERE id = ? AND user_id = ? AND revoked_at IS NULL",
                arguments: [sessionId, userId]) ?? false
        }
    }

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
}
