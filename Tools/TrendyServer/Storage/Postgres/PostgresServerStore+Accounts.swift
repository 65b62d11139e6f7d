import Foundation
import PostgresNIO
import TrendyAPI
import TrendyModels

/// Accounts, sessions and refresh tokens (the ``AccountStore`` role).
extension PostgresServerStore {
    static let userColumns: PostgresQuery = """
        SELECT id, email, password_hash, created_at, updated_at, last_sign_in_at, user_metadata FROM users
        """

    static func user(_ s: PostgresSession, _ condition: PostgresQuery) async throws -> StoredUser? {
        var query = userColumns
        query.sql += " " + condition.sql
        query.binds = condition.binds
        guard
            let (id, email, hash, created, updated, lastSignIn, metadata) = try await s.one(
                query, as: (String, String, String, Double, Double, Double?, String).self)
        else { return nil }
        return StoredUser(
            id: id, email: email, passwordHash: hash, createdAt: Date(timeIntervalSince1970: created),
            updatedAt: Date(timeIntervalSince1970: updated),
            lastSignInAt: lastSignIn.map(Date.init(timeIntervalSince1970:)),
            userMetadata: (try? StoreRules.decode([String: JSONValue].self, metadata)) ?? [:])
    }

    public func createUser(
        id: String, email: String, passwordHash: String, userMetadata: [String: JSONValue], now: Date
    ) async throws -> StoredUser {
        let metadata = try StoreRules.encode(userMetadata)
        let seconds = now.timeIntervalSince1970
        // Two sign-ups with one email on two instances: the unique index lets one in.
        let inserted = try await database.read { s in
            try await s.run(
                """
                INSERT INTO users (id, email, password_hash, created_at, updated_at, user_metadata)
                VALUES (\(id), \(email), \(passwordHash), \(seconds), \(seconds), \(metadata))
                ON CONFLICT DO NOTHING RETURNING 1
                """)
        }
        guard inserted == 1 else { throw StoreError.emailTaken }
        return StoredUser(
            id: id, email: email, passwordHash: passwordHash, createdAt: now, updatedAt: now, lastSignInAt: nil,
            userMetadata: userMetadata)
    }

    public func updateUserMetadata(userId: String, _ data: [String: JSONValue], maximumBytes: Int, now: Date)
        async throws -> StoredUser?
    {
        try await database.transaction(feedOf: nil) { s in
            guard let user = try await Self.user(s, "WHERE id = \(userId) FOR UPDATE") else { return nil }
            let (merged, json) = try StoreRules.mergedMetadata(user, data, maximumBytes: maximumBytes, now: now)
            try await s.run(
                "UPDATE users SET user_metadata = \(json), updated_at = \(now.timeIntervalSince1970) WHERE id = \(userId)"
            )
            return merged
        }
    }

    public func sessionStart(_ sessionId: String) async throws -> Date? {
        try await database.read { s in
            try await s.value("SELECT created_at FROM sessions WHERE id = \(sessionId)", as: Double.self)
                .map(Date.init(timeIntervalSince1970:))
        }
    }

    public func startReauthentication(userId: String, codeHash: String, now: Date, minimumInterval: TimeInterval)
        async throws -> ReauthenticationStart
    {
        try await database.transaction(feedOf: nil) { s in
            let sent = try await s.value(
                "SELECT reauthentication_sent_at FROM users WHERE id = \(userId) FOR UPDATE", as: Double?.self)
            if let wait = StoreRules.reauthenticationWait(
                sentAt: sent ?? nil, now: now, minimumInterval: minimumInterval)
            {
                return .tooSoon(retryAfter: wait)
            }
            try await s.run(
                """
                UPDATE users SET reauthentication_hash = \(codeHash),
                reauthentication_sent_at = \(now.timeIntervalSince1970), reauthentication_failures = 0
                WHERE id = \(userId)
                """)
            return .started
        }
    }

    public func cancelReauthentication(userId: String) async throws {
        try await database.read { s in
            try await s.run(
                """
                UPDATE users SET reauthentication_hash = NULL, reauthentication_sent_at = NULL WHERE id = \(userId)
                """)
        }
    }

    public func consumeReauthentication(
        userId: String, codeHash: String, now: Date, lifetime: TimeInterval, maximumFailures: Int
    ) async throws -> Bool {
        try await database.transaction(feedOf: nil) { s in
            guard
                let (stored, sent, failures) = try await s.one(
                    """
                    SELECT reauthentication_hash, reauthentication_sent_at, reauthentication_failures
                    FROM users WHERE id = \(userId) FOR UPDATE
                    """, as: (String?, Double?, Int).self),
                let stored, let sent
            else { return false }
            let decision = StoreRules.reauthentication(
                stored: stored, sentAt: sent, failures: failures, presented: codeHash, now: now, lifetime: lifetime,
                maximumFailures: maximumFailures)
            try await s.run(
                """
                UPDATE users SET reauthentication_failures = \(decision.failures),
                reauthentication_hash = CASE WHEN \(decision.clearCode) THEN NULL ELSE reauthentication_hash END
                WHERE id = \(userId)
                """)
            return decision.accepted
        }
    }

    public func updatePassword(userId: String, passwordHash: String, now: Date) async throws -> StoredUser? {
        try await database.read { s in
            try await s.run(
                """
                UPDATE users SET password_hash = \(passwordHash), updated_at = \(now.timeIntervalSince1970)
                WHERE id = \(userId)
                """)
            return try await Self.user(s, "WHERE id = \(userId)")
        }
    }

    public func user(email: String) async throws -> StoredUser? {
        try await database.read { s in
            try await Self.user(s, "WHERE lower(email) = lower(\(email)::text COLLATE \"C\")")
        }
    }

    public func user(id: String) async throws -> StoredUser? {
        try await database.read { s in try await Self.user(s, "WHERE id = \(id)") }
    }

    public func recordSignIn(userId: String, now: Date) async throws {
        try await database.read { s in
            try await s.run("UPDATE users SET last_sign_in_at = \(now.timeIntervalSince1970) WHERE id = \(userId)")
        }
    }

    public func createSession(userId: String, refreshToken: String, now: Date) async throws -> String {
        let sessionId = UUID().uuidString.lowercased()
        let seconds = now.timeIntervalSince1970
        try await database.transaction(feedOf: nil) { s in
            try await s.run(
                "INSERT INTO sessions (id, user_id, created_at) VALUES (\(sessionId), \(userId), \(seconds))")
            try await s.run(
                """
                INSERT INTO refresh_tokens (token, session_id, created_at) VALUES (\(refreshToken), \(sessionId), \(seconds))
                """)
        }
        return sessionId
    }

    /// The token's row is locked: the same token
    /// presented to two instances at once is rotated by one; the other waits, then finds it
    /// rotated moments ago and answers the session's current token (the reuse window).
    public func rotateRefreshToken(_ token: String, newToken: String, reuseInterval: TimeInterval, now: Date)
        async throws -> RefreshOutcome
    {
        let seconds = now.timeIntervalSince1970
        return try await database.transaction(feedOf: nil) { s in
            var facts: StoreRules.RefreshFacts?
            if let (sessionId, revoked, revokedAt, userId, sessionRevoked) = try await s.one(
                """
                SELECT t.session_id, t.revoked, t.revoked_at, s.user_id, s.revoked_at
                FROM refresh_tokens t JOIN sessions s ON s.id = t.session_id WHERE t.token = \(token)
                FOR UPDATE OF t, s
                """, as: (String, Bool, Double?, String, Double?).self)
            {
                facts = StoreRules.RefreshFacts(
                    sessionId: sessionId, userId: userId, revokedAt: revoked ? revokedAt ?? 0 : nil,
                    sessionRevoked: sessionRevoked != nil,
                    current: revoked
                        ? try await s.value(
                            """
                            SELECT token FROM refresh_tokens WHERE session_id = \(sessionId) AND NOT revoked
                            ORDER BY created_at DESC LIMIT 1
                            """, as: String.self) : nil)
            }
            let decision = StoreRules.refresh(facts, now: now, reuseInterval: reuseInterval)
            switch (decision, facts?.sessionId) {
            case (.rotate, let sessionId?):
                try await s.run(
                    "UPDATE refresh_tokens SET revoked = TRUE, revoked_at = \(seconds) WHERE token = \(token)")
                try await s.run(
                    """
                    INSERT INTO refresh_tokens (token, session_id, parent, created_at)
                    VALUES (\(newToken), \(sessionId), \(token), \(seconds))
                    """)
            case (.endSession, let sessionId?):
                try await s.run("UPDATE sessions SET revoked_at = \(seconds) WHERE id = \(sessionId)")
                try await s.run(
                    """
                    UPDATE refresh_tokens SET revoked = TRUE, revoked_at = COALESCE(revoked_at, \(seconds))
                    WHERE session_id = \(sessionId)
                    """)
            default: break
            }
            return StoreRules.outcome(decision, facts, newToken: newToken)
        }
    }

    public func isSessionActive(_ sessionId: String, userId: String) async throws -> Bool {
        try await database.read { s in
            var found = false
            for try await _ in try await s.connection.execute(
                ActiveSessionStatement(sessionId: sessionId, userId: userId), logger: s.logger)
            {
                found = true
            }
            return found
        }
    }

    public func revokeSessions(userId: String, scope: LogoutScope, currentSession: String, now: Date) async throws {
        let seconds = now.timeIntervalSince1970
        try await database.transaction(feedOf: nil) { s in
            switch scope {
            case .global:
                try await s.run(
                    "UPDATE sessions SET revoked_at = \(seconds) WHERE revoked_at IS NULL AND user_id = \(userId)")
            case .local:
                try await s.run(
                    """
                    UPDATE sessions SET revoked_at = \(seconds)
                    WHERE revoked_at IS NULL AND user_id = \(userId) AND id = \(currentSession)
                    """)
            case .others:
                try await s.run(
                    """
                    UPDATE sessions SET revoked_at = \(seconds)
                    WHERE revoked_at IS NULL AND user_id = \(userId) AND id <> \(currentSession)
                    """)
            }
            try await s.run(
                """
                UPDATE refresh_tokens SET revoked = TRUE, revoked_at = COALESCE(revoked_at, \(seconds))
                WHERE session_id IN (SELECT id FROM sessions WHERE revoked_at IS NOT NULL AND user_id = \(userId))
                """)
        }
    }
}

/// Every API request's session check as a named prepared statement: parsed and planned once per
/// connection, not with each request.
struct ActiveSessionStatement: PostgresPreparedStatement {
    static let name = "trendy_active_session_v1"
    static let sql = "SELECT 1 FROM sessions WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL"
    typealias Row = PostgresRow

    var sessionId: String
    var userId: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(sessionId)
        bindings.append(userId)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { row }
}
