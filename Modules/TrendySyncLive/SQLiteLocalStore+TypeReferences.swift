import Foundation
import GRDB
import TrendyModels
import TrendySync

/// A deleted event type leaves no reference behind in what this install keeps or sends. The
/// server clears a deleted type from the geofences it has; a geofence it does not have yet (a
/// create waiting here) or an edit naming the type would otherwise be refused for good ("no such
/// event type") — a change stuck forever. Events cannot lose their type: theirs go with it, or are
/// surfaced for the person to move (D35).
extension SQLiteLocalStore {
    /// The geofence fields that name an event type.
    static let geofenceTypePaths = ["$.event_type_entry_id", "$.event_type_exit_id"]

    /// Clears `typeId` from the local geofences and from the geofence changes not on the wire
    /// (a change already sent gets a new key: its body changes). A change the server refused is
    /// put back in the queue: what it was refused for is gone.
    static func clearTypeReferences(_ db: Database, _ typeId: String) throws {
        for path in geofenceTypePaths {
            try db.execute(
                sql: "UPDATE local_geofences SET body = json_set(body, ?1, NULL) WHERE json_extract(body, ?1) = ?2",
                arguments: [path, typeId])
            try db.execute(
                sql: """
                    UPDATE local_geofences SET sync_status = 'pending' WHERE id IN (
                        SELECT entity_id FROM outbox WHERE entity = 'geofence' AND state = 'failed'
                        AND json_extract(payload, ?1) = ?2)
                    """, arguments: [path, typeId])
            try db.execute(
                sql: """
                    UPDATE outbox SET payload = json_set(payload, ?1, NULL),
                    idempotency_key = CASE WHEN sent THEN lower(hex(randomblob(16))) ELSE idempotency_key END,
                    state = CASE WHEN state = 'failed' THEN 'pending' ELSE state END,
                    attempts = CASE WHEN state = 'failed' THEN 0 ELSE attempts END,
                    next_attempt_at = CASE WHEN state = 'failed' THEN 0 ELSE next_attempt_at END,
                    last_error = CASE WHEN state = 'failed' THEN NULL ELSE last_error END
                    WHERE entity = 'geofence' AND state != 'in_flight' AND json_extract(payload, ?1) = ?2
                    """, arguments: [path, typeId])
        }
    }

    /// A geofence change about to be sent, without references to event types this install no
    /// longer has (deleted while the change was on the wire, or refused and retried): the last
    /// net under ``clearTypeReferences(_:_:)``. A change already `sent` gets a new key.
    static func withoutDeletedTypes(_ db: Database, _ entry: OutboxEntry, sent: Bool) throws -> OutboxEntry {
        guard let payload = entry.payload else { return entry }
        var mended = payload
        for path in geofenceTypePaths {
            guard
                let typeId = try String.fetchOne(
                    db.cachedStatement(sql: "SELECT json_extract(?, ?)"), arguments: [mended, path]),
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM local_event_types WHERE id = ?"), arguments: [typeId])
                    != true
            else { continue }
            mended = try String.fetchOne(db, sql: "SELECT json_set(?, ?, NULL)", arguments: [mended, path]) ?? mended
        }
        guard mended != payload else { return entry }
        var out = entry
        out.payload = mended
        if sent { out.idempotencyKey = Outbox.newKey() }
        try db.execute(
            sql: "UPDATE outbox SET payload = ?, idempotency_key = ? WHERE seq = ?",
            arguments: [mended, out.idempotencyKey, entry.seq])
        return out
    }
}
