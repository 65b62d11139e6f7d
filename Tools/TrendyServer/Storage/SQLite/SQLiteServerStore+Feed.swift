import Foundation
import GRDB
import GRDBSQLite
import TrendyAPI
import TrendyModels

extension SQLiteServerStore {
    // MARK: Onboarding

    static func fetchOnboarding(_ db: Database, userId: String) throws -> OnboardingStatus? {
        try String.fetchOne(db, sql: "SELECT body FROM onboarding WHERE user_id = ?", arguments: [userId])
            .map { try StoreRules.decode(OnboardingStatus.self, $0) }
    }

    static func saveOnboarding(_ db: Database, userId: String, _ status: OnboardingStatus, now: Date, log: Bool) throws
    {
        let body = try StoreRules.encode(status)
        try db.execute(
            sql: "INSERT OR REPLACE INTO onboarding (user_id, body, updated_at) VALUES (?, ?, ?)",
            arguments: [userId, body, now.timeIntervalSince1970])
        if log {
            try appendChange(
                db, userId: userId, entity: .onboarding, id: userId, operation: .update, data: body, now: now)
        }
    }

    public func onboarding(userId: String, now: Date) async throws -> OnboardingStatus {
        try await db.write { db in
            if let stored = try Self.fetchOnboarding(db, userId: userId) { return stored }
            var initial = OnboardingStatus.initial
            initial.updatedAt = now
            try Self.saveOnboarding(db, userId: userId, initial, now: now, log: false)
            return initial
        }
    }

    public func updateOnboarding(userId: String, _ update: OnboardingUpdate, now: Date) async throws
        -> OnboardingStatus
    {
        try await db.write { db in
            let current = try Self.fetchOnboarding(db, userId: userId) ?? .initial
            let updated = update.apply(to: current, now: now)
            try Self.saveOnboarding(db, userId: userId, updated, now: now, log: true)
            return updated
        }
    }

    public func resetOnboarding(userId: String, now: Date) async throws -> OnboardingStatus {
        try await db.write { db in
            var initial = OnboardingStatus.initial
            initial.updatedAt = now
            try Self.saveOnboarding(db, userId: userId, initial, now: now, log: true)
            return initial
        }
    }

    // MARK: Change feed

    /// The body is written straight from SQLite's buffers
    /// (no row objects, no strings per column; entity JSON is stored ready to send), by the
    /// page writer both stores share.
    public func changesPage(userId: String, since: Int64, limit: Int, omitting device: String?) async throws
        -> FeedPage
    {
        try await db.read { db in
            let statement = try db.cachedStatement(
                sql: """
                    SELECT seq, entity_type, entity_id, operation, created_at, data, echo_device = ? FROM change_log
                    WHERE user_id = ? AND seq >= ? ORDER BY seq LIMIT ?
                    """)
            var writer = FeedPageWriter(since: since, limit: limit)
            let sqlite = statement.sqliteStatement
            // The row's text straight from SQLite's buffers (valid until the next step).
            func text(_ column: Int32) -> UnsafeRawBufferPointer? {
                guard let bytes = sqlite3_column_text(sqlite, column) else { return nil }
                return UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(sqlite, column)))
            }
            let rows = try Row.fetchCursor(statement, arguments: [device, userId, since, limit + 2])
            while !writer.isFull, try rows.next() != nil {
                guard
                    writer.start(
                        seq: sqlite3_column_int64(sqlite, 0), createdAt: sqlite3_column_double(sqlite, 4),
                        omitted: sqlite3_column_int(sqlite, 6) == 1)
                else { continue }
                for column in 0..<3 {
                    writer.text(column, text(Int32(column) + 1) ?? UnsafeRawBufferPointer(start: nil, count: 0))
                }
                writer.finish(data: text(5))
            }
            return writer.page()
        }
    }

    public func latestCursor(userId: String) async throws -> LatestCursor {
        try await db.read { db in
            let last = try Row.fetchOne(
                db, sql: "SELECT seq, created_at FROM change_log WHERE user_id = ? ORDER BY seq DESC LIMIT 1",
                arguments: [userId])
            return LatestCursor(
                cursor: last?["seq"] ?? 0,
                at: (last?["created_at"] as Double?).map { ISO8601.format(Date(timeIntervalSince1970: $0)) })
        }
    }

    public func syncSummary(userId: String) async throws -> SyncSummary {
        try await db.read { db in
            let events = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM events WHERE user_id = ?", arguments: [userId])
            let types = try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM event_types WHERE user_id = ?", arguments: [userId])
            let geofences = try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM geofences WHERE user_id = ?", arguments: [userId])
            let last = try Row.fetchOne(
                db, sql: "SELECT seq, created_at FROM change_log WHERE user_id = ? ORDER BY seq DESC LIMIT 1",
                arguments: [userId])
            return SyncSummary(
                eventCount: events ?? 0, eventTypeCount: types ?? 0, geofenceCount: geofences ?? 0,
                latestCursor: last?["seq"] ?? 0,
                lastChangeAt: (last?["created_at"] as Double?).map(Date.init(timeIntervalSince1970:)))
        }
    }
}
