import Foundation
import GRDB
import TrendyAPI
import TrendyModels
import TrendySync

/// Applying server state: change-feed pages and the bootstrap download.
extension SQLiteLocalStore {
    /// A server delete: the entity goes, with any local change for it that is not on the wire
    /// (waiting or failed: none is left behind pointing at nothing). A deleted type takes its
    /// events with it, except those with a local change the server has not taken: an event
    /// logged here is never discarded because another device deleted its type — its create is
    /// refused ("no such event type") and surfaced, and editing it to another type sends it (D35).
    static func applyDelete(_ db: Database, _ entity: SyncEntity, _ id: String) throws {
        try keepEditsOfDeleted(db, entity, id)
        try db.execute(
            sql: "DELETE FROM outbox WHERE entity = ? AND entity_id = ? AND state != 'in_flight'",
            arguments: [entity.rawValue, id])
        if entity == .eventType {
            try db.execute(
                sql: """
                    DELETE FROM local_events WHERE event_type_id = ?
                    AND id NOT IN (SELECT entity_id FROM outbox WHERE entity = 'event')
                    """, arguments: [id])
            try clearTypeReferences(db, id)
        }
        try db.execute(sql: "DELETE FROM \(table(entity)) WHERE id = ?", arguments: [id])
    }

    /// Applies one page of the feed and moves the cursor, in one transaction. Returns how many
    /// changes altered local state.
    package func apply(_ page: ChangesPage) async throws -> Int {
        try await db.write { db in
            var applied = 0
            let keyed = page.changes.compactMap { change in change.syncEntity.map { (change, $0) } }
            let writer = try ServerStateWriter(
                db, keys: keyed.lazy.map { ($0.1, $0.0.data?.entityKey?.id ?? $0.0.entityId) })
            for change in page.changes where change.entityType == .conflict {
                if change.operation == .delete {
                    try Self.resolvedElsewhere(change.entityId, db)
                } else if case .conflict(let conflict) = change.data {
                    try Self.keep(conflict, db)
                }
            }
            for (change, entity) in keyed {
                if change.operation == .delete {
                    try Self.applyDelete(db, entity, change.entityId)
                    applied += 1
                } else if let data = change.data, try writer.upsert(data, wire: change.dataJSON) {
                    applied += 1
                }
            }
            try Self.setCursor(db, page.nextCursor)
            return applied
        }
    }

    /// Starts a full download: remembers which server ids arrive, so synced local entities the
    /// server no longer has can be removed at the end.
    func beginBootstrap() async throws {
        try await db.write { db in
            try db.execute(
                sql: "CREATE TABLE IF NOT EXISTS bootstrap_seen (entity TEXT, id TEXT, PRIMARY KEY (entity, id))")
            try db.execute(sql: "DELETE FROM bootstrap_seen")
        }
    }

    /// Stores one downloaded batch. `remember` false skips recording the ids as seen: for
    /// events of a bulk load that began on a store without events, where nothing stored could be
    /// missing from the server. `wire`: each item's JSON as received (one per item), stored as
    /// the row's body instead of encoding the item again.
    func bootstrap(_ items: [ChangeData], wire: [String]? = nil, remember: Bool = true) async throws {
        let wire = wire?.count == items.count ? wire : nil
        let keyed = items.indices.compactMap { i in items[i].entityKey.map { (i, $0) } }
        try await db.write { db in
            let writer = try ServerStateWriter(
                db, keys: keyed.lazy.map { ($0.1.entity, $0.1.id) }, download: true)
            for (i, key) in keyed {
                _ = try writer.upsert(items[i], wire: wire?[i])
                guard remember else { continue }
                try db.cachedStatement(sql: "INSERT OR IGNORE INTO bootstrap_seen (entity, id) VALUES (?, ?)")
                    .execute(arguments: [key.entity.rawValue, key.id])
            }
        }
    }

    /// Ends the download: drops synced entities the server does not have and sets the cursor.
    /// `everyEventArrived`: the events were not remembered (see ``bootstrap(_:remember:)``), and
    /// every synced event in the store came with this download.
    func finishBootstrap(cursor: Int64, everyEventArrived: Bool = false) async throws {
        try await db.write { db in
            for entity in SyncEntity.allCases where !(everyEventArrived && entity == .event) {
                try db.execute(
                    sql: """
                        DELETE FROM \(Self.table(entity)) WHERE sync_status = 'synced'
                        AND id NOT IN (SELECT id FROM bootstrap_seen WHERE entity = ?)
                        """, arguments: [entity.rawValue])
            }
            try db.execute(sql: "DELETE FROM bootstrap_seen")
            try Self.setCursor(db, cursor, force: true)
        }
    }
}

extension Change {
    /// The local kind of entity this change is about (nil for onboarding, which Sync does not store).
    var syncEntity: SyncEntity? { entityType.syncEntity }
}

extension ChangeData {
    /// The local entity kind and id this data is about (nil for onboarding, which Sync does not store).
    var entityKey: (entity: SyncEntity, id: String)? {
        switch self {
        case .event(let e): (.event, e.value.id.description)
        case .eventType(let t): (.eventType, t.value.id.description)
        case .geofence(let g): (.geofence, g.value.id.description)
        case .onboarding, .conflict: nil
        }
    }
}
