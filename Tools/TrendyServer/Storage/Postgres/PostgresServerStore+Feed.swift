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

    /// The body is written from the rows' bytes (entity JSON is stored ready to send) by the page
    /// writer both stores share, as the rows arrive: each row's cells are read in place, not
    /// decoded into a tuple (the generic decode of seven columns was a fifth of the server's CPU
    /// for a page).
    public func changesPage(userId: String, since: Int64, limit: Int, omitting device: String?) async throws
        -> FeedPage
    {
        try await database.read { s in
            var writer = FeedPageWriter(since: since, limit: limit)
            let rows = try await s.connection.execute(
                FeedPageStatement(userId: userId, since: since, limit: Int64(limit) + 2, device: device),
                logger: s.logger)
            for try await row in rows where !writer.isFull {
                try FeedPageStatement.write(row, into: &writer)
            }
            return writer.page()
        }
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
    typealias Row = PostgresRow

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

    func decodeRow(_ row: PostgresRow) throws -> Row { row }

    /// Offers one row to `writer`, reading its cells where they are: the columns' types are
    /// fixed by the schema and PostgresNIO asks for every result in binary format.
    static func write(_ row: PostgresRow, into writer: inout FeedPageWriter) throws {
        var cells = row.makeIterator()
        func next(_ type: PostgresDataType, nullable: Bool = false) throws -> ByteBuffer? {
            guard let cell = cells.next(), cell.format == .binary, cell.dataType == type,
                nullable || cell.bytes != nil
            else { throw StoreError.unavailable("the change feed's page query answered an unexpected row") }
            return cell.bytes
        }
        func integer<T: FixedWidthInteger>(_ type: PostgresDataType, as: T.Type) throws -> T {
            guard let bytes = try next(type), let value = bytes.getInteger(at: bytes.readerIndex, as: T.self),
                bytes.readableBytes == MemoryLayout<T>.size
            else { throw StoreError.unavailable("the change feed's page query answered an unexpected row") }
            return value
        }
        let seq = try integer(.int8, as: Int64.self)
        let texts = [try next(.text), try next(.text), try next(.text)]
        let createdAt = Double(bitPattern: try integer(.float8, as: UInt64.self))
        let data = try next(.text, nullable: true)
        let omitted = try integer(.bool, as: UInt8.self) != 0
        guard writer.start(seq: seq, createdAt: createdAt, omitted: omitted) else { return }
        for (index, text) in texts.enumerated() {
            text?.withUnsafeReadableBytes { writer.text(index, $0) }
        }
        if let data {
            data.withUnsafeReadableBytes { writer.finish(data: $0) }
        } else {
            writer.finish(data: nil)
        }
    }
}
