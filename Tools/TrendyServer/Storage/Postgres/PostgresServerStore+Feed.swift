import Foundation
import NIOCore
import PostgresNIO
import TrendyAPI
import TrendyModels

extension PostgresServerStore {
    // MARK: Onboarding

    static func fetchOnboarding(_ s: PostgresSession, userId: String) async throws -> OnboardingStatus? {
        try await s.value("SELECT body FROM onboarding WHERE user_id = \(userId)", as: String.self)
            .map { try StoreRules.decode(OnboardingStatus.self, $0) }
    }

    static func saveOnboarding(_ s: PostgresSession, userId: String, _ status: OnboardingStatus, now: Date, log: Bool)
        async throws
    {
        let body = try StoreRules.encode(status)
        try await s.run(
            """
            INSERT INTO onboarding (user_id, body, updated_at) VALUES (\(userId), \(body), \(now.timeIntervalSince1970))
            ON CONFLICT (user_id) DO UPDATE SET body = EXCLUDED.body, updated_at = EXCLUDED.updated_at
            """)
        if log {
            try await appendChange(
                s, userId: userId, entity: .onboarding, id: userId, operation: .update, data: body, now: now)
        }
    }

    public func onboarding(userId: String, now: Date) async throws -> OnboardingStatus {
        try await database.transaction(feedOf: userId) { s in
            if let stored = try await Self.fetchOnboarding(s, userId: userId) { return stored }
            var initial = OnboardingStatus.initial
            initial.updatedAt = now
            try await Self.saveOnboarding(s, userId: userId, initial, now: now, log: false)
            return initial
        }
    }

    public func updateOnboarding(userId: String, _ update: OnboardingUpdate, now: Date) async throws
        -> OnboardingStatus
    {
        try await database.transaction(feedOf: userId) { s in
            let current = try await Self.fetchOnboarding(s, userId: userId) ?? .initial
            let updated = update.apply(to: current, now: now)
            try await Self.saveOnboarding(s, userId: userId, updated, now: now, log: true)
            return updated
        }
    }

    public func resetOnboarding(userId: String, now: Date) async throws -> OnboardingStatus {
        try await database.transaction(feedOf: userId) { s in
            var initial = OnboardingStatus.initial
            initial.updatedAt = now
            try await Self.saveOnboarding(s, userId: userId, initial, now: now, log: true)
            return initial
        }
    }

    // MARK: Change feed

    /// The body is written from the rows' bytes (entity
    /// JSON is stored ready to send), as the SQLite store does. A change left out for `device`
    /// (D57) still counts toward the page and moves `next_cursor`; its data is not read.
    public func changesPage(userId: String, since: Int64, limit: Int, omitting device: String?) async throws
        -> FeedPage
    {
        let rows = try await database.read { s in
            var rows: [FeedPageStatement.Row] = []
            for try await row in try await s.connection.execute(
                FeedPageStatement(userId: userId, since: since, limit: Int64(limit) + 2, device: device),
                logger: s.logger)
            {
                rows.append(row)
            }
            return rows
        }
        var out: [UInt8] = []
        out.reserveCapacity(min(rows.count, limit) * 480 + 64)
        out.append(contentsOf: #"{"changes":["#.utf8)
        // The change `since` names comes first (its time checks the device's cursor, D59).
        let sinceAt = rows.first.flatMap { $0.0 == since ? $0.4 : nil }
        let page = rows.dropFirst(sinceAt == nil ? 0 : 1)
        var last = since
        var lastAt: Double?
        var count = 0
        var newest: Double?
        for row in page.prefix(limit) {
            last = row.0
            lastAt = row.4
            if row.6 { continue }
            if count > 0 { out.append(UInt8(ascii: ",")) }
            count += 1
            newest = row.4
            out.append(contentsOf: #"{"cursor":"#.utf8)
            out.append(contentsOf: String(last).utf8)
            for (key, text) in [(#","entity_type":"#, row.1), (#","entity_id":"#, row.2), (#","operation":"#, row.3)] {
                out.append(contentsOf: key.utf8)
                text.withUnsafeReadableBytes { WireText.appendString($0, to: &out) }
            }
            out.append(contentsOf: #","created_at":""#.utf8)
            out.append(contentsOf: ISO8601.format(Date(timeIntervalSince1970: row.4)).utf8)
            out.append(contentsOf: #"","data":"#.utf8)
            if let data = row.5 {
                out.append(contentsOf: data.readableBytesView)
            } else {
                out.append(contentsOf: "null".utf8)
            }
            out.append(UInt8(ascii: "}"))
        }
        FeedPage.appendEnd(to: &out, next: last, at: lastAt ?? sinceAt, hasMore: page.count > limit)
        return FeedPage(
            body: out, count: count, newestChangeAt: newest.map(Date.init(timeIntervalSince1970:)),
            scanned: min(page.count, limit), sinceChangeAt: sinceAt)
    }

    public func latestCursor(userId: String) async throws -> LatestCursor {
        let last = try await database.read { s in
            try await s.one(
                "SELECT seq, created_at FROM change_log WHERE user_id = \(userId) ORDER BY seq DESC LIMIT 1",
                as: (Int64, Double).self)
        }
        return LatestCursor(
            cursor: last?.0 ?? 0, at: last.map { ISO8601.format(Date(timeIntervalSince1970: $0.1)) })
    }

    /// The counts and the newest change from one snapshot.
    public func syncSummary(userId: String) async throws -> SyncSummary {
        try await database.read { s in
            guard
                let (events, types, geofences, seq, at) = try await s.one(
                    """
                    SELECT (SELECT COUNT(*) FROM events WHERE user_id = \(userId)),
                    (SELECT COUNT(*) FROM event_types WHERE user_id = \(userId)),
                    (SELECT COUNT(*) FROM geofences WHERE user_id = \(userId)),
                    last.seq, last.created_at
                    FROM (SELECT 1) AS one LEFT JOIN LATERAL (
                        SELECT seq, created_at FROM change_log WHERE user_id = \(userId) ORDER BY seq DESC LIMIT 1
                    ) AS last ON TRUE
                    """, as: (Int, Int, Int, Int64?, Double?).self)
            else {
                return SyncSummary(
                    eventCount: 0, eventTypeCount: 0, geofenceCount: 0, latestCursor: 0, lastChangeAt: nil)
            }
            return SyncSummary(
                eventCount: events, eventTypeCount: types, geofenceCount: geofences, latestCursor: seq ?? 0,
                lastChangeAt: at.map(Date.init(timeIntervalSince1970:)))
        }
    }
}

/// The feed page query as a named prepared statement: the hottest read is parsed and planned
/// once per connection, then only bound and run.
struct FeedPageStatement: PostgresPreparedStatement {
    static let name = "trendy_feed_page_v3"
    static let sql = """
        SELECT seq, entity_type, entity_id, operation, created_at,
        CASE WHEN echo_device = $4 THEN NULL ELSE data END, COALESCE(echo_device = $4, FALSE) FROM change_log
        WHERE user_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3
        """
    typealias Row = (Int64, ByteBuffer, ByteBuffer, ByteBuffer, Double, ByteBuffer?, Bool)

    var userId: String
    var since: Int64
    var limit: Int64
    var device: String?

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(userId)
        bindings.append(since)
        bindings.append(limit)
        bindings.append(device)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}
