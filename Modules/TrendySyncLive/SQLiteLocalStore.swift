import Foundation
import GRDB
import Logging
import TrendyAPI
import TrendyLogging
import TrendyModels
import TrendySync

/// ``LocalStore`` over the install's SQLite database (GRDB). Each write and its outbox entry
/// commit in one transaction; reads never wait for sync.
public final class SQLiteLocalStore: LocalStore {
    let db: any DatabaseWriter
    let now: @Sendable () -> Date
    let logger: Logger
    /// The zone the device is in now: a new event logged here without one is stamped with it
    /// (its day is then the local date where it happened; nil stamps nothing).
    let zone: @Sendable () -> String?
    /// Other features' tables derived from the events, which a bulk load takes down and builds once.
    let derived: [DerivedFromEvents]

    /// Uses an open, migrated database (see ``SyncSchema``); `derived`: the tables other features'
    /// triggers keep from the events (the insights aggregates), for bulk loads.
    public init(
        database: any DatabaseWriter, now: @escaping @Sendable () -> Date = Date.init,
        zone: @escaping @Sendable () -> String? = { nil }, derived: [DerivedFromEvents] = [], logger: Logger
    ) {
        db = database
        self.now = now
        self.zone = zone
        self.derived = derived
        self.logger = logger
    }

    static func encode<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try TrendyJSON.encoder().encode(value), as: UTF8.self)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try TrendyJSON.decoder().decode(T.self, from: Data(text.utf8))
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    func validate(_ check: () throws(ValidationError) -> Void) throws {
        do { try check() } catch { throw LocalStoreError.invalid(error) }
    }

    // MARK: Event types

    static func eventType(_ row: Row) -> LocalRecord<EventType>? {
        guard let id = UUIDv7(row["id"] as String) else { return nil }
        return LocalRecord(
            EventType(id: id, name: row["name"], color: row["color"], icon: row["icon"]),
            syncStatus: EntitySyncStatus(rawValue: row["sync_status"]) ?? .pending)
    }

    public func eventTypes() async throws -> [LocalRecord<EventType>] {
        try await db.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM local_event_types ORDER BY name").compactMap(Self.eventType)
        }
    }

    public func eventType(id: UUIDv7) async throws -> LocalRecord<EventType>? {
        try await db.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM local_event_types WHERE id = ?", arguments: [id.description])
                .flatMap(Self.eventType)
        }
    }

    /// Any case; the type spelled exactly so first, when two differ only in case (this device's
    /// unsent `coffee` beside the account's `Coffee` until the push adopts it, D36, D65: `Coffee`
    /// found `coffee` — an outsider's attack).
    public func eventType(named name: String) async throws -> LocalRecord<EventType>? {
        try await db.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT * FROM local_event_types WHERE name = ?1
                    ORDER BY (name COLLATE BINARY = ?1) DESC LIMIT 1
                    """, arguments: [name]
            ).flatMap(Self.eventType)
        }
    }

    public func createEventType(_ type: EventType) async throws {
        let (_, created) = try await findOrCreateEventType(type)
        guard created else { throw LocalStoreError.conflict("an event type named \"\(type.name)\" already exists") }
    }

    public func findOrCreateEventType(_ type: EventType) async throws -> (type: EventType, created: Bool) {
        try validate { () throws(ValidationError) in try type.validate() }
        let at = now()
        return try await db.write { db in
            if let existing = try Row.fetchOne(
                db, sql: "SELECT * FROM local_event_types WHERE name = ?", arguments: [type.name]
            ).flatMap(Self.eventType) {
                return (existing.value, false)
            }
            try db.execute(
                sql:
                    "INSERT INTO local_event_types (id, name, color, icon, sync_status) VALUES (?, ?, ?, ?, 'pending')",
                arguments: [type.id.description, type.name, type.color, type.icon])
            try Outbox.enqueue(db, .eventType, type.id.description, .create, payload: try Self.encode(type), now: at)
            return (type, true)
        }
    }

    public func updateEventType(_ type: EventType) async throws {
        try validate { () throws(ValidationError) in try type.validate() }
        let at = now()
        try await db.write { db in try Self.replaceEventType(db, type, now: at) }
    }

    /// Replaces a type's fields inside the caller's transaction and queues an update of the
    /// fields that changed (nothing when none did).
    static func replaceEventType(_ db: Database, _ type: EventType, now: Date) throws {
        if try Bool.fetchOne(
            db, sql: "SELECT 1 FROM local_event_types WHERE name = ? AND id != ?",
            arguments: [type.name, type.id.description]) == true
        {
            throw LocalStoreError.conflict("an event type named \"\(type.name)\" already exists")
        }
        guard
            let old = try Row.fetchOne(
                db, sql: "SELECT * FROM local_event_types WHERE id = ?", arguments: [type.id.description]
            ).flatMap(Self.eventType)
        else { throw LocalStoreError.notFound("event type") }
        guard let patch = try FieldPatch.diff(EventTypeUpdate.self, from: old.value, to: type) else { return }
        try db.execute(
            sql: "UPDATE local_event_types SET name = ?, color = ?, icon = ?, sync_status = 'pending' WHERE id = ?",
            arguments: [type.name, type.color, type.icon, type.id.description])
        try Outbox.enqueue(
            db, .eventType, type.id.description, .update, payload: patch, whole: try Self.encode(type), now: now)
    }

    /// Its events go too (the server does the same).
    public func deleteEventType(id: UUIDv7) async throws {
        let at = now()
        try await db.write { db in
            guard
                try Bool.fetchOne(db, sql: "SELECT 1 FROM local_event_types WHERE id = ?", arguments: [id.description])
                    == true
            else { throw LocalStoreError.notFound("event type") }
            let eventIds = try String.fetchAll(
                db, sql: "SELECT id FROM local_events WHERE event_type_id = ?", arguments: [id.description])
            for eventId in eventIds {
                // Their server copies go with the type; only unsent creates need cancelling. The
                // server's cascade is the truth: an event another device moved to another type
                // before this delete arrives stays, and comes back here (docs/sync.md).
                try Outbox.dropUnsentAndFailed(db, .event, eventId)
                try Outbox.tombstone(db, .event, eventId, cascadeOf: id.description)
            }
            try Self.clearTypeReferences(db, id.description)
            try Self.dropDefinitions(db, ofType: id.description)
            try db.execute(sql: "DELETE FROM local_events WHERE event_type_id = ?", arguments: [id.description])
            try db.execute(sql: "DELETE FROM local_event_types WHERE id = ?", arguments: [id.description])
            try Outbox.enqueue(db, .eventType, id.description, .delete, payload: nil, now: at)
        }
    }

    // MARK: Events

    static func event(_ row: Row) throws -> LocalRecord<Event> {
        let body: String = row["body"]
        return LocalRecord(
            try scanEvent(body) ?? decode(Event.self, body),
            syncStatus: EntitySyncStatus(rawValue: row["sync_status"]) ?? .pending)
    }

    /// A stored body read with the wire format's fast reader (the first screen decodes 50 of
    /// them); nil for what it does not take (typed properties), which `JSONDecoder` then reads.
    static func scanEvent(_ body: String) -> Event? {
        var body = body
        return body.withUTF8 { bytes -> Event? in
            var scanner = WireJSONScanner(bytes)
            guard let scanned = Event.scan(&scanner), scanner.atEnd() else { return nil }
            return scanned.event
        }
    }

    /// An index range scan, whatever the outbox holds.
    public func events(limit: Int, since: Date?) async throws -> [LocalRecord<Event>] {
        try await db.read { db in
            let rows: [Row]
            if let since {
                rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT body, sync_status FROM local_events WHERE timestamp_ms >= ?
                        ORDER BY timestamp_ms DESC, id DESC LIMIT ?
                        """, arguments: [Self.milliseconds(since), limit])
            } else {
                rows = try Row.fetchAll(
                    db,
                    sql: "SELECT body, sync_status FROM local_events ORDER BY timestamp_ms DESC, id DESC LIMIT ?",
                    arguments: [limit])
            }
            return try rows.map(Self.event)
        }
    }

    public func event(id: UUIDv7) async throws -> LocalRecord<Event>? {
        try await db.read { db in
            try Row.fetchOne(
                db, sql: "SELECT body, sync_status FROM local_events WHERE id = ?", arguments: [id.description]
            )
            .map(Self.event)
        }
    }

    static func requireType(_ db: Database, _ event: Event) throws {
        guard
            try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT 1 FROM local_event_types WHERE id = ?"),
                arguments: [event.eventTypeId.description]) == true
        else { throw LocalStoreError.notFound("event type \(event.eventTypeId)") }
    }

    public func createEvent(_ event: Event) async throws {
        var stamped = event
        if stamped.timeZone == nil, let zone = zone(), Event.isZoneName(zone) { stamped.timeZone = zone }
        let event = stamped
        try validate { () throws(ValidationError) in try event.validate() }
        let at = now()
        try await db.write { db in
            try Self.requireType(db, event)
            try Self.requireNoTwin(db, event)
            try Self.requireProperties(db, event, before: [:])
            try Self.insert(db, event, now: at)
        }
    }

    static func insert(_ db: Database, _ event: Event, now: Date) throws {
        let body = event.wireJSON()
        try db.cachedStatement(
            sql: """
                INSERT INTO local_events (id, event_type_id, timestamp_ms, source_type, body, sync_status)
                VALUES (?, ?, ?, ?, ?, 'pending')
                """
        ).execute(arguments: [
            event.id.description, event.eventTypeId.description, milliseconds(event.timestamp),
            event.sourceType.rawValue,
            body,
        ])
        try Outbox.enqueue(db, .event, event.id.description, .create, payload: body, now: now)
    }

    /// One transaction per chunk of 1,000.
    public func insertEvents(_ events: [Event]) async throws -> InsertSummary {
        var summary = InsertSummary(inserted: 0, duplicates: 0)
        for start in stride(from: 0, to: events.count, by: 1_000) {
            let chunk = Array(events[start..<min(start + 1_000, events.count)])
            let at = now()
            // Indexed for search once per chunk, not row by row.
            let part = try await db.write { db -> InsertSummary in
                try SearchIndex.deferring(db) {
                    var s = InsertSummary(inserted: 0, duplicates: 0)
                    for event in chunk {
                        try Self.requireType(db, event)
                        let exists =
                            try Bool.fetchOne(
                                db.cachedStatement(sql: "SELECT 1 FROM local_events WHERE id = ?"),
                                arguments: [event.id.description]) == true
                        // An imported row is one already here when any event of its type has its time: an
                        // export imported back (a place's visit included) adds nothing.
                        let sameTime =
                            event.sourceType == .imported
                            ? "SELECT 1 FROM local_events WHERE event_type_id = ? AND timestamp_ms = ?"
                            : "SELECT 1 FROM local_events WHERE event_type_id = ? AND timestamp_ms = ? "
                                + "AND source_type IN ('manual', 'imported')"
                        let duplicate =
                            try !exists && (event.sourceType == .manual || event.sourceType == .imported)
                            && Bool.fetchOne(
                                db.cachedStatement(sql: sameTime),
                                arguments: [event.eventTypeId.description, Self.milliseconds(event.timestamp)]) == true
                        if exists || duplicate {
                            s.duplicates += 1
                            continue
                        }
                        try Self.insert(db, event, now: at)
                        s.inserted += 1
                    }
                    return s
                }
            }
            summary.inserted += part.inserted
            summary.duplicates += part.duplicates
        }
        return summary
    }

    public func updateEvent(_ event: Event) async throws {
        try validate { () throws(ValidationError) in try event.validate() }
        let at = now()
        try await db.write { db in try Self.replaceEvent(db, event, now: at) }
    }

    public func deleteEvent(id: UUIDv7) async throws {
        let at = now()
        try await db.write { db in
            // Cached, as an edit's UPDATE is: compiling it compiles every trigger on the table.
            try db.cachedStatement(sql: "DELETE FROM local_events WHERE id = ?").execute(arguments: [id.description])
            guard db.changesCount > 0 else { throw LocalStoreError.notFound("event") }
            try Outbox.tombstone(db, .event, id.description)
            try Outbox.enqueue(db, .event, id.description, .delete, payload: nil, now: at)
        }
    }

    // MARK: Geofences

    public func geofences() async throws -> [LocalRecord<Geofence>] {
        try await db.read { db in
            try Row.fetchAll(db, sql: "SELECT body, sync_status FROM local_geofences ORDER BY id").map { row in
                LocalRecord(
                    try Self.decode(Geofence.self, row["body"]),
                    syncStatus: EntitySyncStatus(rawValue: row["sync_status"]) ?? .pending)
            }
        }
    }

    public func createGeofence(_ geofence: Geofence) async throws {
        try validate { () throws(ValidationError) in try geofence.validate() }
        let at = now()
        try await db.write { db in
            let body = try Self.encode(geofence)
            try db.execute(
                sql: "INSERT INTO local_geofences (id, body, is_active, sync_status) VALUES (?, ?, ?, 'pending')",
                arguments: [geofence.id.description, body, geofence.isActive])
            try Outbox.enqueue(db, .geofence, geofence.id.description, .create, payload: body, now: at)
        }
    }

    public func updateGeofence(_ geofence: Geofence) async throws {
        try validate { () throws(ValidationError) in try geofence.validate() }
        let at = now()
        try await db.write { db in try Self.replaceGeofence(db, geofence, now: at) }
    }

    /// Replaces a geofence's fields inside the caller's transaction and queues an update of the
    /// fields that changed (nothing when none did).
    static func replaceGeofence(_ db: Database, _ geofence: Geofence, now: Date) throws {
        guard let old = try storedGeofence(db, id: geofence.id) else { throw LocalStoreError.notFound("geofence") }
        guard let patch = try FieldPatch.diff(GeofenceUpdate.self, from: old, to: geofence) else { return }
        let body = try encode(geofence)
        try db.execute(
            sql: "UPDATE local_geofences SET body = ?, is_active = ?, sync_status = 'pending' WHERE id = ?",
            arguments: [body, geofence.isActive, geofence.id.description])
        try Outbox.enqueue(db, .geofence, geofence.id.description, .update, payload: patch, whole: body, now: now)
    }

    public func deleteGeofence(id: UUIDv7) async throws {
        let at = now()
        try await db.write { db in
            try db.execute(sql: "DELETE FROM local_geofences WHERE id = ?", arguments: [id.description])
            guard db.changesCount > 0 else { throw LocalStoreError.notFound("geofence") }
            try Outbox.tombstone(db, .geofence, id.description)
            try Outbox.enqueue(db, .geofence, id.description, .delete, payload: nil, now: at)
        }
    }

    // MARK: Outbox summary

    public func outboxCounts() async throws -> (pending: Int, failed: Int) {
        try await db.read { db in try Outbox.counts(db) }
    }

    /// The outbox's counter: every new entry takes a number from it, and every change folded
    /// into a waiting entry a tick (``OutboxClock``).
    public func localChangeMark() async throws -> Int64 {
        try await db.read { db in
            try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'outbox'") ?? 0
        }
    }

    public func changedLocally(_ id: String, after mark: Int64) async throws -> Bool {
        try await db.read { db in
            try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT mark FROM local_changes WHERE entity_id = ?"), arguments: [id]
            ).map { $0 > mark } ?? false
        }
    }

    public func failedChanges() async throws -> [FailedChange] {
        try await db.read { db in
            try Row.fetchAll(
                db,
                sql:
                    "SELECT entity, entity_id, kind, last_error, attempts FROM outbox WHERE state = 'failed' ORDER BY seq"
            ).compactMap { row in
                guard let entity = SyncEntity(rawValue: row["entity"]), let kind = MutationKind(rawValue: row["kind"])
                else { return nil }
                return FailedChange(
                    entity: entity, entityId: row["entity_id"], kind: kind, error: row["last_error"] ?? "unknown",
                    attempts: row["attempts"])
            }
        }
    }

    /// Each entry keeps its idempotency key: a change that
    /// ran out of retries may have been applied with its answers lost, and resending it under
    /// the same key makes the server replay that answer instead of applying the old body again
    /// over what other devices did since.
    /// Changes waiting out a delay after a server error are tried at once too (the person asked).
    public func retryFailed() async throws -> Int {
        try await db.write { db in
            try db.execute(
                sql: "UPDATE outbox SET \(Outbox.retried) WHERE state = 'failed'")
            let failed = db.changesCount
            try db.execute(sql: "UPDATE outbox SET next_attempt_at = 0 WHERE state = 'pending' AND next_attempt_at > 0")
            return failed
        }
    }
}
