import Foundation
import GRDB
import TrendyModels
import TrendySync

/// A type made on two devices becomes one (D36).
extension SQLiteLocalStore {
    /// The server has a type of the entry's name under another id (another device made it
    /// first): this device's type becomes the server's, in one transaction. Its events,
    /// geofences and property definitions, and their changes not yet on the server, are re-pointed at the server's type
    /// (none of them can be on the server: it has no type of the local id); changes the server
    /// refused for want of the type go again; the local type, its create and any other change to
    /// it go (the server's name, colour and icon win) (D36).
    func adoptEventType(_ entry: OutboxEntry, as server: EventType) async throws {
        let local = entry.entityId
        let adopted = server.id.description
        try await db.write { db in
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO local_event_types (id, name, color, icon, sync_status)
                    VALUES (?, ?, ?, ?, 'synced')
                    """, arguments: [adopted, server.name, server.color, server.icon])
            try Self.repointType(db, from: local, to: adopted)
            try db.execute(
                sql: "DELETE FROM outbox WHERE entity = 'event_type' AND entity_id = ?", arguments: [local])
            try db.execute(sql: "DELETE FROM local_event_types WHERE id = ?", arguments: [local])
        }
    }

    /// What names a type: (entity, table, JSON path of the type's id in its payload and body).
    static let typeReferences = [
        ("event", "local_events", "$.event_type_id"),
        ("geofence", "local_geofences", "$.event_type_entry_id"),
        ("geofence", "local_geofences", "$.event_type_exit_id"),
        ("property_definition", "local_property_definitions", "$.event_type_id"),
    ]

    /// Changes the server refused for want of the type `id` go back in the queue, as a person's
    /// edit would put them (the type is on its way to the server now).
    static func requeueRefused(_ db: Database, namingType id: String) throws {
        for (entity, table, path) in typeReferences {
            try db.execute(
                sql: """
                    UPDATE \(table) SET sync_status = 'pending' WHERE id IN (
                        SELECT entity_id FROM outbox WHERE entity = ?1 AND state = 'failed' AND sent = 0
                        AND json_extract(payload, ?2) = ?3)
                    """, arguments: [entity, path, id])
            try db.execute(
                sql: """
                    UPDATE outbox SET \(Outbox.retried)
                    WHERE entity = ?1 AND state = 'failed' AND sent = 0 AND json_extract(payload, ?2) = ?3
                    """, arguments: [entity, path, id])
        }
    }

    /// Re-points everything that names the type `local` at `new`, in the caller's transaction:
    /// events, geofences and property definitions with their changes not yet on the server, and
    /// the changes the server refused for want of the type (they go again).
    static func repointType(_ db: Database, from local: String, to new: String) throws {
        let references = typeReferences
        try requeueRefused(db, namingType: local)
        for (entity, table, path) in references {
            try db.execute(
                sql: """
                    UPDATE outbox SET payload = json_set(payload, ?2, ?4)
                    WHERE entity = ?1 AND json_extract(payload, ?2) = ?3
                    """, arguments: [entity, path, local, new])
            if table == "local_geofences" {
                try db.execute(
                    sql:
                        "UPDATE local_geofences SET body = json_set(body, ?1, ?3) WHERE json_extract(body, ?1) = ?2",
                    arguments: [path, local, new])
            }
            if table == "local_property_definitions" {
                // A key the server's type has already goes to it by the adoption of a
                // definition (its fields kept as conflicts) when its create is refused.
                try db.execute(
                    sql: """
                        UPDATE local_property_definitions SET event_type_id = ?2,
                        body = json_set(body, '$.event_type_id', ?2) WHERE event_type_id = ?1
                        """, arguments: [local, new])
            }
        }
        // Events through their type column's index, not a scan of every body.
        try db.execute(
            sql: """
                UPDATE local_events SET event_type_id = ?2, body = json_set(body, '$.event_type_id', ?2)
                WHERE event_type_id = ?1
                """, arguments: [local, new])
    }

    /// An event type's create the server answered `410`, queued after the delete (an archive
    /// imported again after the type was deleted everywhere). The type
    /// goes again under `newId`, with everything that names it, as a revived event does
    /// (``reviveDeletedCreate(_:as:)``); before, the device showed it synced while the server
    /// lacked it, and refused each of its events for want of the type.
    func reviveDeletedType(_ entry: OutboxEntry, as newId: UUIDv7) async throws {
        let old = entry.entityId
        let new = newId.description
        try await db.write { db in
            try db.execute(sql: "UPDATE local_event_types SET id = ? WHERE id = ?", arguments: [new, old])
            try Self.repointType(db, from: old, to: new)
            try db.execute(
                sql: """
                    UPDATE outbox SET entity_id = ?1,
                    payload = CASE WHEN seq = ?3 THEN json_set(payload, '$.id', ?1) ELSE payload END
                    WHERE entity = 'event_type' AND entity_id = ?2
                    """, arguments: [new, old, entry.seq])
            try db.execute(
                sql: "UPDATE outbox SET state = 'pending', sent = 0, batch = NULL, next_attempt_at = 0 WHERE seq = ?",
                arguments: [entry.seq])
        }
    }
}
