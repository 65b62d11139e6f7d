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
    /// Entities a local delete protects from server state (no resurrection).
    private let tombstoned: Set<Key>
    /// Entities with local changes: the fields those changes set (all their update patches,
    /// merged in order), whether one was refused, and whether a create not yet sent makes the
    /// whole entity local. Server state is stored with those fields kept as they are here (D37).
    private let local: [Key: (patch: String?, failed: Bool, unsentCreate: Bool)]
    private var events: EventRowWriter?

    /// Looks up which of `keys` have local changes or tombstones: two cached queries per kind of
    /// entity, the ids passed as one JSON array.
    init(_ db: Database, keys: some Sequence<(SyncEntity, String)>) throws {
        self.db = db
        var byEntity: [SyncEntity: Set<String>] = [:]
        for (entity, id) in keys { byEntity[entity, default: []].insert(id) }
        var tombstoned: Set<Key> = []
        var local: [Key: (patch: String?, failed: Bool, unsentCreate: Bool)] = [:]
        for (entity, ids) in byEntity {
            let list = String(decoding: try JSONEncoder().encode(Array(ids)), as: UTF8.self)
            let rows = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT entity_id, kind, state, sent, payload FROM outbox WHERE entity = ?1
                        AND entity_id IN (SELECT value FROM json_each(?2)) ORDER BY seq
                        """), arguments: [entity.rawValue, list])
            for row in rows {
                let key = Key(entity: entity, id: row["entity_id"])
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
            let ids = try String.fetchAll(
                db.cachedStatement(
                    sql:
                        "SELECT entity_id FROM tombstones WHERE entity = ?1 AND entity_id IN (SELECT value FROM json_each(?2))"
                ), arguments: [entity.rawValue, list])
            for id in ids { tombstoned.insert(Key(entity: entity, id: id)) }
        }
        self.tombstoned = tombstoned
        self.local = local
    }

    /// Stores `data` unless a local delete protects it, with the fields of waiting local
    /// changes laid over it; true when it was stored. `wire` is the entity's JSON as received,
    /// when the reader kept it: it is stored as it is instead of re-encoded.
    func upsert(_ data: ChangeData, wire: String? = nil) throws -> Bool {
        guard let (entity, id) = data.entityKey else { return false }
        let key = Key(entity: entity, id: id)
        if !tombstoned.isEmpty, tombstoned.contains(key) { return false }
        let mine = local.isEmpty ? nil : local[key]
        // A create the server cannot have taken yet: the entity is this device's alone.
        if mine?.unsentCreate == true { return false }
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
