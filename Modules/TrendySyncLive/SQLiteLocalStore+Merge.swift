import Foundation
import GRDB
import TrendyAPI
import TrendyModels
import TrendySync

/// De-duplicated creates: the server keeps one manual or imported event per (type, time), so a
/// create this device sent can be answered with another device's event of the same type and time
/// (both imported one file; "Coffee at 08:00" logged on a phone and a watch). Nothing set here is
/// dropped: the fields this device set reach the surviving event as ordinary field-level edits,
/// with base 0 (this device never saw the surviving event's values: the server keeps each one the
/// edit replaces as a conflict both devices list, D37); every later change to this device's copy
/// follows it.
extension SQLiteLocalStore {
    /// Turns the delivered create `entry`, which the server answered with `serverId`, into edits of
    /// that event, inside the caller's transaction (the entry itself is already removed; `clocks`
    /// are its field clocks, read before).
    static func mergeIntoServerCopy(
        _ db: Database, _ entry: OutboxEntry, clocks: [String: Int64], serverId: String, now: Date
    ) throws {
        let localId = entry.entityId
        // The person deleted the other copy of this event here and kept this one: the event stays
        // (it is this copy now), so that delete is not sent.
        let copyAlive =
            try Bool.fetchOne(db, sql: "SELECT 1 FROM local_events WHERE id = ?", arguments: [localId]) ?? false
        // The person deleted this copy before learning it was merged (its create's answer was
        // lost, then `events rm`): what they deleted is their copy, not the event another device
        // keeps. Without a lost answer the create and the delete fold into nothing; so here too
        // nothing of the copy is sent and the surviving event stays (outside tester: one dropped
        // answer turned "delete my copy" into a delete of the other device's event everywhere).
        let copyDeleted =
            try !copyAlive
            && Bool.fetchOne(
                db, sql: "SELECT 1 FROM tombstones WHERE entity = 'event' AND entity_id = ?", arguments: [localId])
                == true
        if copyDeleted {
            try db.execute(
                sql: "DELETE FROM outbox WHERE entity = 'event' AND entity_id = ? AND state != 'in_flight'",
                arguments: [localId])
            try db.execute(
                sql: "DELETE FROM tombstones WHERE entity = 'event' AND entity_id = ?", arguments: [localId])
            try rememberMerge(db, localId, into: serverId)
            return
        }
        if copyAlive {
            try db.execute(
                sql: """
                    DELETE FROM outbox WHERE entity = 'event' AND entity_id = ? AND kind = 'delete'
                    AND state != 'in_flight'
                    """, arguments: [serverId])
            try db.execute(
                sql: "DELETE FROM tombstones WHERE entity = 'event' AND entity_id = ?", arguments: [serverId])
        }
        // Every later change to this device's copy is a change to the surviving event, made without
        // having seen it (base 0: what it replaces that another device set is kept as a conflict).
        try db.execute(
            sql: "UPDATE outbox SET entity_id = ?, base_version = 0 WHERE entity = 'event' AND entity_id = ?",
            arguments: [serverId, localId])
        try db.execute(
            sql: "UPDATE OR IGNORE tombstones SET entity_id = ? WHERE entity = 'event' AND entity_id = ?",
            arguments: [serverId, localId])
        let deletedHere =
            try Bool.fetchOne(
                db, sql: "SELECT 1 FROM outbox WHERE entity = 'event' AND entity_id = ? AND kind = 'delete'",
                arguments: [serverId]) ?? false
        if !deletedHere, let patch = try setFields(entry.payload) {
            // In the create's place in the queue, so edits made after it still come after it; a
            // field the surviving event's waiting edits also set goes only with the value written
            // last (``OutboxClock``).
            try OutboxClock.addKeepingLastWrites(
                db, event: serverId, .init(seq: entry.seq, patch: patch, clocks: clocks, fixed: false), now: now)
        }
        let serverCopyHere =
            try Bool.fetchOne(db, sql: "SELECT 1 FROM local_events WHERE id = ?", arguments: [serverId]) ?? false
        if serverCopyHere {
            try db.execute(sql: "DELETE FROM local_events WHERE id = ?", arguments: [localId])
        } else {
            // Shown under the surviving id at once; the next pull brings the server's copy with
            // these edits laid over it.
            try db.execute(
                sql: "UPDATE local_events SET id = ?1, body = json_set(body, '$.id', ?1) WHERE id = ?2",
                arguments: [serverId, localId])
        }
        let waiting =
            try Bool.fetchOne(
                db, sql: "SELECT 1 FROM outbox WHERE entity = 'event' AND entity_id = ? LIMIT 1", arguments: [serverId])
            ?? false
        try db.execute(
            sql: "UPDATE local_events SET sync_status = ? WHERE id = ?",
            arguments: [waiting ? EntitySyncStatus.pending.rawValue : EntitySyncStatus.synced.rawValue, serverId])
        try rememberMerge(db, localId, into: serverId)
    }

    /// Remembers where a copy went (`sync explain <old id>`).
    private static func rememberMerge(_ db: Database, _ localId: String, into serverId: String) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO merged_events (local_id, server_id) VALUES (?, ?)",
            arguments: [localId, serverId])
    }

    /// The fields a create set (everything but the type and time it was matched on, with a value
    /// other than the default), as a patch; nil when it set none.
    static func setFields(_ payload: String?) throws -> String? {
        guard let payload else { return nil }
        let event = try TrendyJSON.decoder().decode(Event.self, from: Data(payload.utf8))
        var blank = event
        blank.notes = nil
        blank.endDate = nil
        blank.isAllDay = false
        blank.externalId = nil
        blank.geofenceId = nil
        blank.location = nil
        blank.locationName = nil
        blank.properties = [:]
        return try FieldPatch.diff(EventUpdate.self, from: blank, to: event)
    }

    /// The event the server de-duplicated `localId` into, if it did.
    public func mergedInto(_ localId: String) async throws -> String? {
        try await db.read { db in try Self.mergedInto(db, localId) }
    }

    /// ``mergedInto(_:)`` inside the caller's transaction.
    static func mergedInto(_ db: Database, _ localId: String) throws -> String? {
        try String.fetchOne(
            db, sql: "SELECT server_id FROM merged_events WHERE local_id = ? AND revived = 0", arguments: [localId])
    }

    /// The id `localId` went again under, when the server had deleted it before this device's
    /// create was queued (``reviveDeletedCreate(_:as:)``).
    static func revivedAs(_ db: Database, _ localId: String) throws -> String? {
        try String.fetchOne(
            db, sql: "SELECT server_id FROM merged_events WHERE local_id = ? AND revived = 1", arguments: [localId])
    }

    /// A create the server answered `deleted` that was queued after the delete (see
    /// ``OutboxSyncEngine/isLateResend(_:deletedVersion:)``): its id came from elsewhere (an
    /// archive or a backup imported again after the event was deleted everywhere). The person
    /// brought it back on purpose, and a deleted id never comes back (D37), so the event goes
    /// again under `newId`: the row, its waiting changes and a tombstone of a delete made since
    /// follow, the create is queued again as never sent, and `sync explain <old id>` says where it
    /// went. Before, the device marked it synced while the server and every other device lacked
    /// it, and a full sync later removed it without a word (an outsider's attack).
    func reviveDeletedCreate(_ entry: OutboxEntry, as newId: UUIDv7) async throws {
        try await db.write { db in
            let old = entry.entityId
            let new = newId.description
            try db.execute(
                sql: "UPDATE local_events SET id = ?1, body = json_set(body, '$.id', ?1) WHERE id = ?2",
                arguments: [new, old])
            try db.execute(
                sql: """
                    UPDATE outbox SET payload = json_set(payload, '$.id', ?1), state = 'pending', sent = 0,
                    batch = NULL, next_attempt_at = 0 WHERE seq = ?2
                    """, arguments: [new, entry.seq])
            try db.execute(
                sql: "UPDATE outbox SET entity_id = ? WHERE entity = 'event' AND entity_id = ?", arguments: [new, old])
            // The tombstone of a delete made here since goes with it; the one the server's delete
            // left (sent long ago) stays with the old id, which no pull brings back.
            try db.execute(
                sql: """
                    UPDATE OR IGNORE tombstones SET entity_id = ?1 WHERE entity = 'event' AND entity_id = ?2
                    AND EXISTS (SELECT 1 FROM outbox WHERE entity = 'event' AND entity_id = ?1 AND kind = 'delete')
                    """, arguments: [new, old])
            try db.execute(
                sql: "UPDATE OR IGNORE local_changes SET entity_id = ? WHERE entity_id = ?", arguments: [new, old])
            try db.execute(
                sql: "INSERT OR REPLACE INTO merged_events (local_id, server_id, revived) VALUES (?, ?, 1)",
                arguments: [old, new])
        }
    }
}
