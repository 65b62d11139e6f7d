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
    /// Entities that a waiting local change or a local delete protects from server state.
    private let protected: Set<Key>
    private var events: EventRowWriter?

    /// Looks up which of `keys` are protected: two cached queries per kind of entity, the ids
    /// passed as one JSON array.
    init(_ db: Database, keys: some Sequence<(SyncEntity, String)>) throws {
        self.db = db
        var byEntity: [SyncEntity: Set<String>] = [:]
        for (entity, id) in keys { byEntity[entity, default: []].insert(id) }
        var protected: Set<Key> = []
        for (entity, ids) in byEntity {
            let list = String(decoding: try JSONEncoder().encode(Array(ids)), as: UTF8.self)
            for sql in [
                """
                SELECT entity_id FROM outbox WHERE entity = ?1 AND state != 'failed'
                AND entity_id IN (SELECT value FROM json_each(?2))
                """,
                "SELECT entity_id FROM tombstones WHERE entity = ?1 AND entity_id IN (SELECT value FROM json_each(?2))",
            ] {
                let ids = try String.fetchAll(db.cachedStatement(sql: sql), arguments: [entity.rawValue, list])
                for id in ids { protected.insert(Key(entity: entity, id: id)) }
            }
        }
        self.protected = protected
    }

    private func blocked(_ entity: SyncEntity, _ id: String) -> Bool {
        !protected.isEmpty && protected.contains(Key(entity: entity, id: id))
    }

    /// Stores `data` unless it is protected; true when it was stored. `wire` is the entity's
    /// JSON as received, when the reader kept it: it is stored as it is instead of re-encoded.
    func upsert(_ data: ChangeData, wire: String? = nil) throws -> Bool {
        switch data {
        case .eventType(let t):
            let id = t.value.id.description
            guard !blocked(.eventType, id) else { return false }
            try db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO local_event_types (id, name, color, icon, sync_status)
                    VALUES (?, ?, ?, ?, 'synced')
                    """
            ).execute(arguments: [id, t.value.name, t.value.color, t.value.icon])
        case .event(let e):
            let id = e.value.id.description
            guard !blocked(.event, id) else { return false }
            if events == nil { events = try EventRowWriter(db) }
            try events?.write(id: id, e.value, body: wire ?? e.value.wireJSON())
        case .geofence(let g):
            let id = g.value.id.description
            guard !blocked(.geofence, id) else { return false }
            try db.cachedStatement(
                sql:
                    "INSERT OR REPLACE INTO local_geofences (id, body, is_active, sync_status) VALUES (?, ?, ?, 'synced')"
            ).execute(arguments: [id, try SQLiteLocalStore.encode(g.value), g.value.isActive])
        case .onboarding:
            return false
        }
        return true
    }
}
