import Foundation
import Logging
import TrendyGeofence
import TrendyModels
import TrendySync

/// ``GeofenceVisitLedger`` in the install database, through Sync's ``LocalUnitOfWork`` port. Each
/// crossing is one write transaction: the handled-id check, the visit state, the event and its
/// outbox entry commit together or not at all, so a kill at any point leaves either nothing or
/// everything, and SQLite's single writer makes concurrent deliveries take turns.
public final class SQLiteVisitLedger: GeofenceVisitLedger {
    let local: any LocalUnitOfWork
    let ids: UUIDv7Generator
    let now: @Sendable () -> Date
    let logger: Logger

    /// Uses the install's local database (migrated with ``GeofenceSchema``).
    public init(
        local: any LocalUnitOfWork, ids: UUIDv7Generator, now: @escaping @Sendable () -> Date = Date.init,
        logger: Logger
    ) {
        self.local = local
        self.ids = ids
        self.now = now
        self.logger = logger
    }

    static func ms(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
    static func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }

    static func state(_ row: [String: LocalValue]) -> RegionVisitState? {
        guard let id = row["geofence_id"]?.text.flatMap(UUIDv7.init) else { return nil }
        return RegionVisitState(
            geofenceId: id, inside: row["inside"]?.bool ?? false,
            openEventId: row["open_event_id"]?.text.flatMap(UUIDv7.init),
            lastTransitionAt: row["last_transition_ms"]?.integer.map(date),
            lastKind: row["last_kind"]?.text.flatMap(CrossingKind.init(rawValue:)))
    }

    public func states() async throws -> [UUIDv7: RegionVisitState] {
        try await local.read { tx in
            var out: [UUIDv7: RegionVisitState] = [:]
            for row in try tx.rows("SELECT * FROM geofence_visit_states", []) {
                if let s = Self.state(row) { out[s.geofenceId] = s }
            }
            return out
        }
    }

    public func state(of geofence: UUIDv7) async throws -> RegionVisitState? {
        try await local.read { tx in
            try tx.rows("SELECT * FROM geofence_visit_states WHERE geofence_id = ?", [.text(geofence.description)])
                .first.flatMap(Self.state)
        }
    }

    public func lastCrossings() async throws -> [UUIDv7: HandledCrossing] {
        try await local.read { tx in
            var out: [UUIDv7: HandledCrossing] = [:]
            let rows = try tx.rows(
                """
                SELECT c.body, c.outcome, c.handled_ms FROM geofence_crossings c
                JOIN (SELECT MAX(seq) AS seq FROM geofence_crossings GROUP BY geofence_id) m ON c.seq = m.seq
                """, [])
            for row in rows {
                guard let body = row["body"]?.text,
                    let crossing = try? TrendyJSON.decoder().decode(RegionCrossing.self, from: Data(body.utf8))
                else { continue }
                out[crossing.geofenceId] = HandledCrossing(
                    crossing: crossing,
                    outcome: CrossingOutcome.Kind(stored: row["outcome"]?.text ?? ""),
                    handledAt: Self.date(row["handled_ms"]?.integer ?? 0))
            }
            return out
        }
    }

    public func record(_ crossing: RegionCrossing) async throws -> CrossingOutcome {
        let at = now()
        let body = String(decoding: try TrendyJSON.encoder().encode(crossing), as: UTF8.self)
        let ids = ids
        let logger = logger
        return try await local.write { tx -> CrossingOutcome in
            if try !tx.rows("SELECT 1 FROM geofence_crossings WHERE id = ?", [.text(crossing.id)]).isEmpty {
                return .alreadyHandled
            }
            let state = try tx.rows(
                "SELECT * FROM geofence_visit_states WHERE geofence_id = ?", [.text(crossing.geofenceId.description)]
            ).first.flatMap(Self.state)
            let geofence = try tx.geofence(crossing.geofenceId)
            let outcome: CrossingOutcome
            switch VisitRules.decide(crossing, state: state, geofence: geofence, newId: ids.next) {
            case .nothing(let o):
                outcome = o
            case .enter(var next, let event):
                if let event, try Self.create(tx, event, now: at, logger: logger) {
                    outcome = .created(eventId: event.id)
                } else {
                    next.openEventId = nil
                    outcome = .recorded
                }
                try Self.save(tx, next)
            case .exit(let next, let closeId, let end, let exitEvent):
                if let exitEvent, try Self.create(tx, exitEvent, now: at, logger: logger) {
                    outcome = .created(eventId: exitEvent.id)
                } else if let closeId, var open = try tx.event(closeId), open.endDate == nil {
                    open.endDate = max(end, open.timestamp)
                    try tx.replaceEvent(open, now: at)
                    outcome = .closed(eventId: closeId)
                } else {
                    outcome = .recorded
                }
                try Self.save(tx, next)
            }
            try tx.execute(
                "INSERT INTO geofence_crossings (id, geofence_id, body, outcome, handled_ms) VALUES (?, ?, ?, ?, ?)",
                [
                    .text(crossing.id), .text(crossing.geofenceId.description), .text(body), .text(outcome.name),
                    .integer(Self.ms(at)),
                ])
            let seq = tx.lastInsertedRowID
            if seq % 1_000 == 0 {
                try tx.execute(
                    "DELETE FROM geofence_crossings WHERE seq <= ?",
                    [.integer(seq - Int64(GeofenceSchema.crossingHistoryLimit))])
            }
            return outcome
        }
    }

    /// Writes `event` unless its type is gone (deleted since the geofence was set up): then the
    /// visit is recorded without an event rather than lost in an error loop.
    static func create(_ tx: any LocalTransaction, _ event: Event, now: Date, logger: Logger) throws -> Bool {
        guard try tx.eventTypeExists(event.eventTypeId) else {
            logger.warning(
                "The geofence's event type no longer exists; visit recorded without an event",
                metadata: [
                    "geofence_id": .string(event.geofenceId?.description ?? "-"),
                    "event_type_id": .string(event.eventTypeId.description),
                ])
            return false
        }
        try tx.insertEvent(event, now: now)
        return true
    }

    static func save(_ tx: any LocalTransaction, _ s: RegionVisitState) throws {
        try tx.execute(
            """
            INSERT OR REPLACE INTO geofence_visit_states (geofence_id, inside, open_event_id, last_transition_ms,
            last_kind) VALUES (?, ?, ?, ?, ?)
            """,
            [
                .text(s.geofenceId.description), LocalValue(s.inside), LocalValue(s.openEventId?.description),
                LocalValue(s.lastTransitionAt.map(ms)), LocalValue(s.lastKind?.rawValue),
            ])
    }
}
