import Foundation
import GRDB
import TrendyAPI
import TrendyModels

extension SQLiteServerStore {
    // MARK: Onboarding

    static func fetchOnboarding(_ db: Database, userId: String) throws -> OnboardingStatus? {
        try String.fetchOne(db, sql: "SELECT body FROM onboarding WHERE user_id = ?", arguments: [userId])
            .map { try decode(OnboardingStatus.self, $0) }
    }

    static func saveOnboarding(_ db: Database, userId: String, _ status: OnboardingStatus, now: Date, log: Bool) throws
    {
        let body = try encode(status)
        try db.execute(
            sql: "INSERT OR REPLACE INTO onboarding (user_id, body, updated_at) VALUES (?, ?, ?)",
            arguments: [userId, body, now.timeIntervalSince1970])
        if log {
            try appendChange(
                db, userId: userId, entity: .onboarding, id: userId, operation: .update, data: body, now: now)
        }
    }

    /// Implements `ServerStore.onboarding`.
    public func onboarding(userId: String, now: Date) async throws -> OnboardingStatus {
        try await db.write { db in
            if let stored = try Self.fetchOnboarding(db, userId: userId) { return stored }
            var initial = OnboardingStatus.initial
            initial.updatedAt = now
            try Self.saveOnboarding(db, userId: userId, initial, now: now, log: false)
            return initial
        }
    }

    /// Implements `ServerStore.updateOnboarding`.
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

    /// Implements `ServerStore.resetOnboarding`.
    public func resetOnboarding(userId: String, now: Date) async throws -> OnboardingStatus {
        try await db.write { db in
            var initial = OnboardingStatus.initial
            initial.updatedAt = now
            try Self.saveOnboarding(db, userId: userId, initial, now: now, log: true)
            return initial
        }
    }

    // MARK: Change feed

    /// Implements `ServerStore.changes`.
    public func changes(userId: String, since: Int64, limit: Int) async throws -> (rows: [ChangeRow], hasMore: Bool) {
        try await db.read { db in
            let rows = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT id, entity_type, entity_id, operation, data, created_at FROM change_log
                        WHERE user_id = ? AND id > ? ORDER BY id LIMIT ?
                        """), arguments: [userId, since, limit + 1])
            let changes = rows.prefix(limit).map { row in
                ChangeRow(
                    cursor: row["id"], entityType: row["entity_type"], entityId: row["entity_id"],
                    operation: row["operation"], data: row["data"],
                    createdAt: Date(timeIntervalSince1970: row["created_at"]))
            }
            return (Array(changes), rows.count > limit)
        }
    }

    /// Implements `ServerStore.latestCursor`.
    public func latestCursor(userId: String) async throws -> Int64 {
        try await db.read { db in
            try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM change_log WHERE user_id = ?", arguments: [userId]) ?? 0
        }
    }

    /// Implements `ServerStore.syncSummary`.
    public func syncSummary(userId: String) async throws -> SyncSummary {
        try await db.read { db in
            let events = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM events WHERE user_id = ?", arguments: [userId])
            let types = try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM event_types WHERE user_id = ?", arguments: [userId])
            let geofences = try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM geofences WHERE user_id = ?", arguments: [userId])
            let last = try Row.fetchOne(
                db, sql: "SELECT id, created_at FROM change_log WHERE user_id = ? ORDER BY id DESC LIMIT 1",
                arguments: [userId])
            return SyncSummary(
                eventCount: events ?? 0, eventTypeCount: types ?? 0, geofenceCount: geofences ?? 0,
                latestCursor: last?["id"] ?? 0,
                lastChangeAt: (last?["created_at"] as Double?).map(Date.init(timeIntervalSince1970:)))
        }
    }
}
