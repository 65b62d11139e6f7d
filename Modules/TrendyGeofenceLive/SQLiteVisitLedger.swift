import Foundation
import GRDB
import Logging
import TrendyGeofence
import TrendyModels
import TrendySync
import TrendySyncLive

/// ``GeofenceVisitLedger`` in the install database. Each crossing is one write transaction: the
/// handled-id check, the visit state, the event and its outbox entry commit together or not at
/// all, so a kill at any point leaves either nothing or everything, and SQLite's single writer
/// makes concurrent deliveries take turns.
public final class SQLiteVisitLedger: GeofenceVisitLedger {
    let db: any DatabaseWriter
    let ids: UUIDv7Generator
    let now: @Sendable () -> Date
    let logger: Logger

    /// Uses the local store's database (migrated with ``GeofenceSchema``).
    public init(
        store: SQLiteLocalStore, ids: UUIDv7Generator, now: @escaping @Sendable () -> Date = Date.init, logger: Logger
    ) {
        db = store.database
        self.ids = ids
        self.now = now
        self.logger = logger
    }

    static func ms(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
    static func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }

    static func state(_ row: Row) -> RegionVisitState? {
        guard let id = UUIDv7(row["geofence_id"] as String) else { return nil }
        return RegionVisitState(
            geofenceId: id, inside: row["inside"], openEventId: (row["open_event_id"] as String?).flatMap(UUIDv7.init),
            lastTransitionAt: (row["last_transition_ms"] as Int64?).map(date),
            lastKind: (row["last_kind"] as String?).flatMap(CrossingKind.init(rawValue:)))
    }

    /// Implements ``GeofenceVisitLedger/states()``.
    public func states() async throws -> [UUIDv7: RegionVisitState] {
        try await db.read { db in
            var out: [UUIDv7: RegionVisitState] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT * FROM geofence_visit_states") {
                if let s = Self.state(row) { out[s.geofenceId] = s }
            }
            return out
        }
    }

    /// Implements ``GeofenceVisitLedger/state(of:)``.
    public func state(of geofence: UUIDv7) async throws -> RegionVisitState? {
        try await db.read { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM geofence_visit_states WHERE geofence_id = ?"),
                arguments: [geofence.description]
            ).flatMap(Self.state)
        }
    }

    /// Implements ``GeofenceVisitLedger/lastCrossings()``.
    public func lastCrossings() async throws -> [UUIDv7: HandledCrossing] {
        try await db.read { db in
            var out: [UUIDv7: HandledCrossing] = [:]
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT c.body, c.outcome, c.handled_ms FROM geofence_crossings c
                    JOIN (SELECT MAX(seq) AS seq FROM geofence_crossings GROUP BY geofence_id) m ON c.seq = m.seq
                    """)
            for row in rows {
                guard
                    let crossing = try? TrendyJSON.decoder().decode(
                        RegionCrossing.self, from: Data((row["body"] as String).utf8))
                else { continue }
                out[crossing.geofenceId] = HandledCrossing(
                    crossing: crossing,
                    outcome: CrossingOutcome.Kind(rawValue: row["outcome"] as String) ?? .recorded,
                    handledAt: Self.date(row["handled_ms"]))
            }
            return out
        }
    }

    /// Implements ``GeofenceVisitLedger/record(_:)``.
    public func record(_ crossing: RegionCrossing) async throws -> CrossingOutcome {
        let at = now()
        let body = String(decoding: try TrendyJSON.encoder().encode(crossing), as: UTF8.self)
        let ids = ids
        let logger = logger
        return try await db.write { db -> CrossingOutcome in
            if try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT 1 FROM geofence_crossings WHERE id = ?"), arguments: [crossing.id])
                == true
            {
                return .alreadyHandled
            }
            let state = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM geofence_visit_states WHERE geofence_id = ?"),
                arguments: [crossing.geofenceId.description]
            ).flatMap(Self.state)
            let geofence = try SQLiteLocalStore.storedGeofence(db, id: crossing.geofenceId)
            let outcome: CrossingOutcome
            switch VisitRules.decide(crossing, state: state, geofence: geofence, newId: ids.next) {
            case .nothing(let o):
                outcome = o
            case .enter(var next, let event):
                if let event, try Self.create(db, event, now: at, logger: logger) {
                    outcome = .created(eventId: event.id)
                } else {
                    next.openEventId = nil
                    outcome = .recorded
                }
                try Self.save(db, next)
            case .exit(let next, let closeId, let end, let exitEvent):
                if let exitEvent, try Self.create(db, exitEvent, now: at, logger: logger) {
                    outcome = .created(eventId: exitEvent.id)
                } else if let closeId, var open = try SQLiteLocalStore.storedEvent(db, id: closeId), open.endDate == nil
                {
                    open.endDate = max(end, open.timestamp)
                    try SQLiteLocalStore.replaceEvent(db, open, now: at)
                    outcome = .closed(eventId: closeId)
                } else {
                    outcome = .recorded
                }
                try Self.save(db, next)
            }
            try db.cachedStatement(
                sql:
                    "INSERT INTO geofence_crossings (id, geofence_id, body, outcome, handled_ms) VALUES (?, ?, ?, ?, ?)"
            ).execute(arguments: [crossing.id, crossing.geofenceId.description, body, outcome.name, Self.ms(at)])
            let seq = db.lastInsertedRowID
            if seq % 1_000 == 0 {
                try db.execute(
                    sql: "DELETE FROM geofence_crossings WHERE seq <= ?",
                    arguments: [seq - Int64(GeofenceSchema.crossingHistoryLimit)])
            }
            return outcome
        }
    }

    /// Writes `event` unless its type is gone (deleted since the geofence was set up): then the
    /// visit is recorded without an event rather than lost in an error loop.
    static func create(_ db: Database, _ event: Event, now: Date, logger: Logger) throws -> Bool {
        guard try SQLiteLocalStore.eventTypeExists(db, id: event.eventTypeId) else {
            logger.warning(
                "The geofence's event type no longer exists; visit recorded without an event",
                metadata: [
                    "geofence_id": .string(event.geofenceId?.description ?? "-"),
                    "event_type_id": .string(event.eventTypeId.description),
                ])
            return false
        }
        try SQLiteLocalStore.insertEvent(db, event, now: now)
        return true
    }

    static func save(_ db: Database, _ s: RegionVisitState) throws {
        try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO geofence_visit_states (geofence_id, inside, open_event_id, last_transition_ms,
                last_kind) VALUES (?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            s.geofenceId.description, s.inside, s.openEventId?.description, s.lastTransitionAt.map(ms),
            s.lastKind?.rawValue,
        ])
    }
}
