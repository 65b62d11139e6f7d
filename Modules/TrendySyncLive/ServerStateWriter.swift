import Foundation
import GRDB
import TrendyAPI
import TrendyModels
import TrendySync

/// Stores server entities (a change-feed page or a download batch) inside one write
/// transaction, unless a waiting local change or a local delete takes precedence: those are
/// looked up once for the whole batch, not per entity.
final class ServerStateWriter {
    private struct Key: Hashable {
        var entity: SyncEntity
        var id: String
    }

    private let db: Database
    /// A local delete that protects an entity from server state (no resurrection).
    private struct Tombstone {
        /// For an event deleted with its type, that type: only a server copy still of that type
        /// is held back.
        var cascadeOf: String?
        /// A delete no longer waiting here, delivered at this server time (a batch's answer names
        /// it). In a download after a loss, a server that lists the entity older than that, or
        /// created after it, lost the delete (D61, ``lost(_:by:_:)``); one that lists it newer
        /// changed it after the delete, and it is taken. In a pull, a copy created after it.
        var deliveredAt: Date?
    }
    private let tombstoned: [Key: Tombstone]
    /// Entities with local changes: the fields those changes set (all their update patches,
    /// merged in order), whether one was refused, and whether a create not yet sent makes the
    /// whole entity local. Server state is stored with those fields kept as they are here (D37).
    private let local: [Key: (patch: String?, failed: Bool, unsentCreate: Bool)]
    private var events: EventRowWriter?
    /// Whether this writer serves a full download (``init(_:keys:download:recovering:now:)``).
    private let download: Bool
    private let now: Date
    /// Deletes this writer queued again (one per entity, however many changes name it).
    private var resent: Set<Key> = []
    /// What this device knows of an entity, in server time: when the server took each field of
    /// this device's delivered updates (`pushed_versions`). Not what it pulled: another device's
    /// edit is that device's to send again — a copy pulled here re-sent first made the entity
    /// newer on the server than the author's own newer edit, which was then never sent again
    /// (the seeded restore test, seed 160).
    /// Field name → server time, in a download after the server lost changes
    /// (``init(_:keys:download:recovering:now:)``).
    private let known: [Key: [String: Date]]

    /// Looks up which of `keys` have local changes or tombstones: two cached queries per kind of
    /// entity, the ids passed as one JSON array. `download`: the entities are the server's current
    /// state (a full download), not a change that a later one in the feed may undo — a tombstone
    /// then holds only while its delete still waits here to be sent; otherwise the server kept the
    /// entity (a type's cascade that did not take it), and it comes back.
    ///
    /// `recovering`: the download follows a server that lost changes (D59, D60). An entity the
    /// server now has in a version older than one this device knows is not taken: this device's
    /// copy goes to it again (D61).
    /// `now`: when a delete this writer queues again was queued.
    init(
        _ db: Database, keys: some Sequence<(SyncEntity, String)>, download: Bool = false, recovering: Bool = false,
        now: Date = Date()
    ) throws {
        self.db = db
        self.now = now
        self.download = download
        var byEntity: [SyncEntity: Set<String>] = [:]
        for (entity, id) in keys { byEntity[entity, default: []].insert(id) }
        var tombstoned: [Key: Tombstone] = [:]
        var local: [Key: (patch: String?, failed: Bool, unsentCreate: Bool)] = [:]
        var known: [Key: [String: Date]] = [:]
        for (entity, ids) in byEntity {
            let list = String(decoding: try JSONEncoder().encode(Array(ids)), as: UTF8.self)
            if recovering { try Self.knownVersions(db, entity, list, into: &known) }
            let rows = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT entity_id, kind, state, sent, payload FROM outbox WHERE entity = ?1
                        AND entity_id IN (SELECT value FROM json_each(?2)) ORDER BY seq
                        """), arguments: [entity.rawValue, list])
            var deleting: Set<String> = []
            for row in rows {
                let key = Key(entity: entity, id: row["entity_id"])
                if (row["kind"] as String) == MutationKind.delete.rawValue { deleting.insert(key.id) }
                var entry = local[key] ?? (nil, false, false)
                if (row["kind"] as String) == MutationKind.update.rawValue, let patch = row["payload"] as String? {
                    entry.patch = entry.patch.map { FieldPatch.merge($0, patch) } ?? patch
                }
                entry.failed = entry.failed || (row["state"] as String) == OutboxState.failed.rawValue
                entry.unsentCreate =
                    entry.unsentCreate
                    || ((row["kind"] as String) == MutationKind.create.rawValue && !(row["sent"] as Bool))
                local[key] = entry
            }
            let stones = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT t.entity_id, t.cascade_of, EXISTS (SELECT 1 FROM outbox o WHERE o.entity = t.entity
                            AND o.entity_id = t.entity_id AND o.kind = 'delete') AS waiting
                        FROM tombstones t WHERE t.entity = ?1 AND t.entity_id IN (SELECT value FROM json_each(?2))
                        """), arguments: [entity.rawValue, list])
            // In a pull, when this device's delete reached the server, for each plain tombstone
            // whose delete is not waiting (few: only those the page names).
            let settled = stones.filter { ($0["cascade_of"] as String?) == nil && !($0["waiting"] as Bool) }
            var delivered: [Key: [String: Date]] = [:]
            if !download, !settled.isEmpty {
                let ids = String(
                    decoding: try JSONEncoder().encode(settled.map { $0["entity_id"] as String }), as: UTF8.self)
                try Self.knownVersions(db, entity, ids, into: &delivered)
            }
            for row in stones {
                let cascadeOf: String? = row["cascade_of"]
                // In a download a plain tombstone whose delete is no longer waiting is outvoted —
                // unless the server took the delete after the time of the copy it lists (D61, upsert).
                let key = Key(entity: entity, id: row["entity_id"])
                if download, cascadeOf == nil, !(row["waiting"] as Bool) {
                    if let deliveredAt = known[key]?[SQLiteLocalStore.deletedField] {
                        tombstoned[key] = Tombstone(deliveredAt: deliveredAt)
                    } else {
                        try db.execute(
                            sql: "DELETE FROM tombstones WHERE entity = ? AND entity_id = ?",
                            arguments: [entity.rawValue, row["entity_id"] as String])
                    }
                    continue
                }
                tombstoned[key] = Tombstone(
                    cascadeOf: cascadeOf, deliveredAt: delivered[key]?[SQLiteLocalStore.deletedField])
            }
            // A type's delete leaves no tombstone of its own (its events' name it, D47). While it
            // waits here, the server's copy is held back as any entity's is; once the server took
            // it, its booked time (D61) is its tombstone — in a pull, and in a download after a
            // loss only (a plain download is the truth, D47). Types are few: one read per page
            // that has any.
            if entity == .eventType {
                let stoneless = ids.subtracting(stones.map { $0["entity_id"] as String })
                var times = known
                if !download, !recovering, !stoneless.isEmpty {
                    let list = String(decoding: try JSONEncoder().encode(Array(stoneless)), as: UTF8.self)
                    try Self.knownVersions(db, entity, list, into: &times)
                }
                for id in stoneless {
                    let key = Key(entity: entity, id: id)
                    if deleting.contains(id) {
                        tombstoned[key] = Tombstone()
                    } else if !download || recovering, let at = times[key]?[SQLiteLocalStore.deletedField] {
                        tombstoned[key] = Tombstone(deliveredAt: at)
                    }
                }
            }
        }
        self.tombstoned = tombstoned
        self.local = local
        self.known = known
    }

    /// Adds to `known` what this device knows of each entity in `list` (a JSON array of ids).
    private static func knownVersions(
        _ db: Database, _ entity: SyncEntity, _ list: String, into known: inout [Key: [String: Date]]
    ) throws {
        for row in try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT entity_id, field, at FROM pushed_versions WHERE entity = ?1
                    AND entity_id IN (SELECT value FROM json_each(?2))
                    """), arguments: [entity.rawValue, list])
        {
            guard let at = ISO8601.parse(row["at"]) else { continue }
            known[Key(entity: entity, id: row["entity_id"]), default: [:]][row["field"]] = at
        }
    }

    /// Whether a server copy created at `createdAt` and last changed at `updatedAt` lacks what
    /// the server took from this device at `at`: the copy is older than that write, or was created
    /// after it — stored again after the server lost it, from another device's copy that may
    /// predate the write (an outsider's F1: a device that had only pulled the entity re-sent it
    /// first, and its copy's newer time then hid the author's later edit or delete for good).
    static func lost(_ at: Date, by createdAt: Date, _ updatedAt: Date) -> Bool {
        at > updatedAt || at < createdAt
    }

    /// When the server's copy is older than something this device knows (``known``): the patch
    /// that gives the server what it lost — the fields of this device's updates the server took
    /// after its copy's time, as they are here (a field this device never sent may be stale here:
    /// the server's stays). Queued by ``SQLiteLocalStore/finishBootstrap(cursor:everyEventArrived:resendBatch:recovering:)``.
    private func newerHere(_ data: ChangeData, _ key: Key) throws -> String? {
        guard !known.isEmpty, let knowledge = known[key], let uuid = UUIDv7(key.id) else { return nil }
        func patch<P: EntityPatch>(_: P.Type, _ server: Timestamped<P.Entity>, _ here: P.Entity?) throws -> String? {
            let fields = Set(knowledge.filter { Self.lost($0.value, by: server.createdAt, server.updatedAt) }.keys)
            guard !fields.isEmpty, let here, let diff = try FieldPatch.diff(P.self, from: server.value, to: here)
            else { return nil }
            return FieldPatch.removing(FieldPatch.fields(diff).filter { !fields.contains($0) }, from: diff)
        }
        switch data {
        case .event(let e):
            return try patch(EventUpdate.self, e, try SQLiteLocalStore.storedEvent(db, id: uuid))
        case .eventType(let t):
            let here = try Row.fetchOne(db, sql: "SELECT * FROM local_event_types WHERE id = ?", arguments: [key.id])
                .flatMap(SQLiteLocalStore.eventType)?.value
            return try patch(EventTypeUpdate.self, t, here)
        case .geofence(let g):
            return try patch(GeofenceUpdate.self, g, try SQLiteLocalStore.storedGeofence(db, id: uuid))
        case .propertyDefinition(let d):
            return try patch(PropertyDefinitionUpdate.self, d, try SQLiteLocalStore.storedDefinition(db, id: uuid))
        case .onboarding, .conflict:
            return nil
        }
    }

    /// Stores `data` unless a local delete protects it, with the fields of waiting local
    /// changes laid over it; true when it was stored. `wire` is the entity's JSON as received,
    /// when the reader kept it: it is stored as it is instead of re-encoded.
    func upsert(_ data: ChangeData, wire: String? = nil) throws -> Bool {
        guard let (entity, id) = data.entityKey else { return false }
        let key = Key(entity: entity, id: id)
        if !tombstoned.isEmpty, let stone = tombstoned[key] {
            if !download, stone.cascadeOf == nil {
                // A pull: the server refuses an id it deleted, so a copy created after this
                // device's delete reached it was stored again after the server lost the delete —
                // by a device that still held it and recovered later (an outsider's F1, this
                // device first). The delete goes again, based on what this device had seen before
                // this page (the copy's content, held back here, is unseen: what the delete takes
                // of it is kept as a conflict); the tombstone stays.
                if let deliveredAt = stone.deliveredAt, let times = data.times, deliveredAt < times.createdAt,
                    resent.insert(key).inserted
                {
                    try Outbox.insert(db, entity, id, .delete, payload: nil, base: try Outbox.cursor(db), now: now)
                }
                return false
            }
            if let deliveredAt = stone.deliveredAt {
                if let times = data.times, Self.lost(deliveredAt, by: times.createdAt, times.updatedAt) {
                    // The server lost this device's delete: it goes again; the tombstone stays.
                    try db.cachedStatement(
                        sql: "INSERT OR REPLACE INTO bootstrap_behind (entity, id, patch) VALUES (?, ?, NULL)"
                    ).execute(arguments: [entity.rawValue, id])
                    return false
                }
                // Changed there after this device's delete reached it (after a restore), in the
                // copy the delete reached: taken.
            } else {
                // Deleted here with its type: the server's copy goes with the type only while it
                // is still of that type (the server's cascade is the truth).
                guard let type = stone.cascadeOf, case .event(let e) = data, e.value.eventTypeId.description != type
                else { return false }
            }
            try db.execute(
                sql: "DELETE FROM tombstones WHERE entity = ? AND entity_id = ?", arguments: [entity.rawValue, id])
        }
        var mine = local.isEmpty ? nil : local[key]
        // A create the server cannot have taken yet: the entity is this device's alone.
        if mine?.unsentCreate == true { return false }
        // The server lost changes of it that this device has: they are laid over the server's
        // copy like waiting changes (older than those), and go to the server again when the
        // download ends.
        if let behind = try newerHere(data, key) {
            try db.cachedStatement(
                sql: "INSERT OR REPLACE INTO bootstrap_behind (entity, id, patch) VALUES (?, ?, ?)"
            ).execute(arguments: [entity.rawValue, id, behind])
            var entry = mine ?? (nil, false, false)
            entry.patch = entry.patch.map { FieldPatch.merge(behind, $0) } ?? behind
            mine = entry
        }
        func overlay<P: EntityPatch>(_: P.Type, _ value: P.Entity) throws -> P.Entity {
            guard let patch = mine?.patch else { return value }
            return try FieldPatch.decode(P.self, patch).apply(to: value)
        }
        switch data {
        case .eventType(let t):
            let value = try overlay(EventTypeUpdate.self, t.value)
            try db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO local_event_types (id, name, color, icon, sync_status)
                    VALUES (?, ?, ?, ?, 'synced')
                    """
            ).execute(arguments: [id, value.name, value.color, value.icon])
        case .event(let e):
            if events == nil { events = try EventRowWriter(db) }
            if mine?.patch != nil {
                let value = try overlay(EventUpdate.self, e.value)
                try events?.write(id: id, value, body: value.wireJSON())
            } else {
                try events?.write(id: id, e.value, body: wire ?? e.value.wireJSON())
            }
        case .geofence(let g):
            let value = try overlay(GeofenceUpdate.self, g.value)
            try db.cachedStatement(
                sql:
                    "INSERT OR REPLACE INTO local_geofences (id, body, is_active, sync_status) VALUES (?, ?, ?, 'synced')"
            ).execute(arguments: [id, try SQLiteLocalStore.encode(value), value.isActive])
        case .propertyDefinition(let d):
            let value = try overlay(PropertyDefinitionUpdate.self, d.value)
            try db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO local_property_definitions (id, event_type_id, body, sync_status)
                    VALUES (?, ?, ?, 'synced')
                    """
            ).execute(arguments: [id, value.eventTypeId.description, try SQLiteLocalStore.encode(value)])
        case .onboarding, .conflict:
            return false
        }
        if let mine {
            // Still waiting to reach the server (or refused): say so, not 'synced'.
            try db.execute(
                sql: "UPDATE \(SQLiteLocalStore.table(entity)) SET sync_status = ? WHERE id = ?",
                arguments: [mine.failed ? EntitySyncStatus.failed.rawValue : EntitySyncStatus.pending.rawValue, id])
        }
        return true
    }
}
