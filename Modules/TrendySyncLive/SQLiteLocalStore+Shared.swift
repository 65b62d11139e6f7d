import Foundation
import GRDB
import TrendyAPI
import TrendyModels
import TrendySync

/// Entity operations inside a caller's transaction: what ``SQLiteLocalTransaction`` (the
/// `LocalUnitOfWork` port, D43) offers other modules.
extension SQLiteLocalStore {
    /// Inserts an event and its outbox entry inside the caller's transaction; the type must exist.
    static func insertEvent(_ db: Database, _ event: Event, now: Date) throws {
        do { try event.validate() } catch { throw LocalStoreError.invalid(error) }
        try requireType(db, event)
        try requireProperties(db, event, before: [:])
        try insert(db, event, now: now)
    }

    /// Replaces an event's fields inside the caller's transaction and queues an update of the
    /// fields that changed (nothing when none did).
    /// The type must exist only when the change moves the event to it: an event whose type was
    /// deleted elsewhere before its create went (kept, refused, surfaced — D35) can still be ended,
    /// noted or moved away (outside tester: leaving the place of such a visit dropped the exit).
    static func replaceEvent(_ db: Database, _ event: Event, now: Date) throws {
        do { try event.validate() } catch { throw LocalStoreError.invalid(error) }
        guard let old = try storedEvent(db, id: event.id) else { throw LocalStoreError.notFound("event") }
        if old.eventTypeId != event.eventTypeId { try requireType(db, event) }
        guard let patch = try FieldPatch.diff(EventUpdate.self, from: old, to: event) else { return }
        try requireProperties(db, event, before: old.properties)
        if old.eventTypeId != event.eventTypeId || old.timestamp != event.timestamp {
            try requireNoTwin(db, event)
        }
        let body = try encode(event)
        // Cached: compiling an UPDATE of `local_events` compiles every trigger on it too (search,
        // insights, the outbox's), and GRDB's authorizer is called for each column those read —
        // a third of a bulk edit's CPU when each edit compiled it again.
        try db.cachedStatement(
            sql: """
                UPDATE local_events SET event_type_id = ?, timestamp_ms = ?, source_type = ?, body = ?,
                sync_status = 'pending' WHERE id = ?
                """
        ).execute(
            arguments: [
                event.eventTypeId.description, milliseconds(event.timestamp), event.sourceType.rawValue, body,
                event.id.description,
            ])
        guard db.changesCount > 0 else { throw LocalStoreError.notFound("event") }
        try Outbox.enqueue(db, .event, event.id.description, .update, payload: patch, whole: body, now: now)
    }

    /// The server keeps one manual or imported event per type and time (it merges a second into
    /// the first); so does this install: a second one is refused here, at once, with a way out,
    /// instead of two local copies whose values would overwrite each other when merged.
    static func requireNoTwin(_ db: Database, _ event: Event) throws {
        guard event.sourceType == .manual || event.sourceType == .imported else { return }
        guard
            let twin = try String.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT id FROM local_events WHERE event_type_id = ? AND timestamp_ms = ?
                        AND source_type IN ('manual', 'imported') AND id != ? LIMIT 1
                        """),
                arguments: [event.eventTypeId.description, milliseconds(event.timestamp), event.id.description])
        else { return }
        throw LocalStoreError.conflict(
            "an event of this type already exists at this time (\(twin)); edit that one, or pick another time")
    }

    /// One stored event, inside the caller's transaction.
    static func storedEvent(_ db: Database, id: UUIDv7) throws -> Event? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT body, sync_status FROM local_events WHERE id = ?"),
            arguments: [id.description]
        ).map { try event($0).value }
    }

    /// Whether an event type exists, inside the caller's transaction.
    static func eventTypeExists(_ db: Database, id: UUIDv7) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM local_event_types WHERE id = ?"), arguments: [id.description])
            == true
    }

    /// One stored geofence, inside the caller's transaction.
    static func storedGeofence(_ db: Database, id: UUIDv7) throws -> Geofence? {
        try String.fetchOne(
            db.cachedStatement(sql: "SELECT body FROM local_geofences WHERE id = ?"), arguments: [id.description]
        ).map { try decode(Geofence.self, $0) }
    }
}
