import Foundation
import GRDB
import Testing
import TrendyAPI
import TrendyModels
import TrendySyncLive

/// An outbox written before entries recorded whether they were sent: the upgrade judges them by
/// what they went through, so none that may be on the server can be folded into later.
struct OutboxMigrationTests {
    @Test func entriesFromBeforeTheSentColumnAreJudgedByTheirAttempts() throws {
        var migrator = DatabaseMigrator()
        SyncSchema.register(in: &migrator)
        let db = try DatabaseQueue()
        try migrator.migrate(db, upTo: "sync.v2-outbox-counts")
        try db.write { db in
            for (id, state, attempts) in [
                ("a", "pending", 0), ("b", "pending", 2), ("c", "in_flight", 0), ("d", "failed", 1),
            ] {
                try db.execute(
                    sql: """
                        INSERT INTO outbox (entity, entity_id, kind, idempotency_key, state, attempts, created_at)
                        VALUES ('event', ?, 'update', ?, ?, ?, 0)
                        """, arguments: [id, "key-\(id)", state, attempts])
            }
        }
        try migrator.migrate(db)
        let sent = try db.read { db in
            try Row.fetchAll(db, sql: "SELECT entity_id, sent FROM outbox ORDER BY entity_id").map {
                "\($0["entity_id"] as String)=\($0["sent"] as Int)"
            }
        }
        #expect(sent == ["a=0", "b=1", "c=1", "d=1"])
    }

    /// Updates queued before field-level changes held the whole entity: they become patches of
    /// every field, sent without a base (last write wins, as they always were); creates keep
    /// their whole entity; the install gets a device id.
    @Test func wholeEntityUpdatesBecomePatchesOfEveryFieldWithoutABase() throws {
        var migrator = DatabaseMigrator()
        SyncSchema.register(in: &migrator)
        let db = try DatabaseQueue()
        try migrator.migrate(db, upTo: "sync.v3-outbox-sent")
        let ids = UUIDv7Generator()
        let event = Event(
            id: ids.next(), eventTypeId: ids.next(), timestamp: Date(timeIntervalSince1970: 1e9), notes: "n")
        let geofence = Geofence(
            id: ids.next(), name: "Gym", center: Coordinate(latitude: 1, longitude: 2), radius: 150)
        let body = { (value: any Encodable) in String(decoding: try TrendyJSON.encoder().encode(value), as: UTF8.self) }
        try db.write { db in
            for (entity, id, kind, payload) in [
                ("event", event.id.description, "update", try body(event)),
                ("geofence", geofence.id.description, "update", try body(geofence)),
                ("event", event.id.description, "create", try body(event)),
            ] {
                try db.execute(
                    sql: """
                        INSERT INTO outbox (entity, entity_id, kind, payload, idempotency_key, created_at)
                        VALUES (?, ?, ?, ?, ?, 0)
                        """, arguments: [entity, id, kind, payload, UUID().uuidString])
            }
        }
        try migrator.migrate(db)
        let rows = try db.read { db in try Row.fetchAll(db, sql: "SELECT * FROM outbox ORDER BY seq") }
        let eventPatch = FieldPatch.object(text: rows[0]["payload"])
        #expect(eventPatch["notes"] as? String == "n")
        #expect(eventPatch["end_date"] is NSNull)
        #expect(eventPatch["id"] == nil)
        #expect(try FieldPatch.decode(EventUpdate.self, rows[0]["payload"]).apply(to: event) == event)
        #expect(try FieldPatch.decode(GeofenceUpdate.self, rows[1]["payload"]).apply(to: geofence) == geofence)
        #expect((rows[2]["payload"] as String) == (try body(event)))
        #expect(rows.allSatisfy { ($0["base_version"] as Int64?) == nil })
        let device = try db.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'device_id'")
        }
        #expect(device?.count == 32)
    }
}
