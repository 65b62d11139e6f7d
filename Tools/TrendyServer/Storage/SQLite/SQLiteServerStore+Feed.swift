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

    /// The text columns of a feed row and the JSON that leads each.
    static let feedTextColumns: [(Int32, String)] = [
        (1, #","entity_type":"#), (2, #","entity_id":"#), (3, #","operation":"#),
    ]

    /// The body is written straight from SQLite's buffers
    /// (no row objects, no strings per column; entity JSON is stored ready to send). A change
    /// left out for `device` (D57) still counts toward the page and moves `next_cursor`.
    /// The change at `since` is read too: its time is the page's `sinceChangeAt` (D59).
    public func changesPage(userId: String, since: Int64, limit: Int, omitting device: String?) async throws
        -> FeedPage
    {
        try await db.read { db in
            let statement = try db.cachedStatement(
                sql: """
                    SELECT seq, entity_type, entity_id, operation, created_at, data, echo_device = ? FROM change_log
                    WHERE user_id = ? AND seq >= ? ORDER BY seq LIMIT ?
                    """)
            var out: [UInt8] = []
            out.reserveCapacity(limit * 480 + 64)
            out.append(contentsOf: #"{"changes":["#.utf8)
            var scanned = 0
            var count = 0
            var last = since
            var hasMore = false
            var newest: Double?
            var sinceAt: Double?
            var lastAt: Double?
            // The change `since` names comes first (its time checks the device's cursor), then
            // the page, then one more to tell whether more follow.
            let rows = try Row.fetchCursor(statement, arguments: [device, userId, since, limit + 2])
            while let row = try rows.next() {
                let seq: Int64 = row[0]
                if seq == since {
                    sinceAt = row[4]
                    continue
                }
                guard scanned < limit else {
                    hasMore = true
                    break
                }
                scanned += 1
                last = seq
                lastAt = row[4]
                let sqlite = statement.sqliteStatement
                if sqlite3_column_int(sqlite, 6) == 1 { continue }
                if count > 0 { out.append(UInt8(ascii: ",")) }
                count += 1
                out.append(contentsOf: #"{"cursor":"#.utf8)
                out.append(contentsOf: String(last).utf8)
                // The row's text straight from SQLite's buffers (valid until the next step).
                func text(_ column: Int32) -> UnsafeRawBufferPointer? {
                    guard let bytes = sqlite3_column_text(sqlite, column) else { return nil }
                    return UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(sqlite, column)))
                }
                for (index, key) in Self.feedTextColumns {
                    out.append(contentsOf: key.utf8)
                    WireText.appendString(text(index) ?? UnsafeRawBufferPointer(start: nil, count: 0), to: &out)
                }
                out.append(contentsOf: #","created_at":""#.utf8)
                let createdAt: Double = row[4]
                newest = createdAt
                out.append(contentsOf: ISO8601.format(Date(timeIntervalSince1970: createdAt)).utf8)
                out.append(contentsOf: #"","data":"#.utf8)
                out.append(contentsOf: text(5) ?? UnsafeRawBufferPointer(start: nil, count: 0))
                if sqlite3_column_type(sqlite, 5) == SQLITE_NULL { out.append(contentsOf: "null".utf8) }
                out.append(UInt8(ascii: "}"))
            }
            FeedPage.appendEnd(to: &out, next: last, at: lastAt ?? sinceAt, hasMore: hasMore)
            return FeedPage(
                body: out, count: count, newestChangeAt: newest.map(Date.init(timeIntervalSince1970:)),
                scanned: scanned, sinceChangeAt: sinceAt)
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
