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
            try dropDefinitions(db, ofType: id, keep: true)
        }
        try db.execute(sql: "DELETE FROM \(table(entity)) WHERE id = ?", arguments: [id])
    }

    /// Applies one page of the feed and moves the cursor, in one transaction. Returns how many
    /// changes altered local state.
    package func apply(_ page: ChangesPage) async throws -> Int {
        try await db.write { db in try SearchIndex.deferring(db) { try Self.apply(page, db) } }
    }

    /// Applies one page inside the caller's transaction (see ``apply(_:)``).
    static func apply(_ page: ChangesPage, _ db: Database) throws -> Int {
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
        let watched = try Self.changedHere(db, keyed.filter { $0.1 == .event }.map(\.0.entityId))
        for (change, entity) in keyed {
            if change.operation == .delete {
                try Self.applyDelete(db, entity, change.entityId)
                applied += 1
            } else if let data = change.data {
                // An event changed here that another device changes too (to any value, even
                // back to this device's): its local-change mark moves, so an undo does not
                // overwrite it. This device's own change coming back leaves the fields as they are.
                let before = watched.contains(change.entityId) ? try Self.undoFields(db, change.entityId) : nil
                if try writer.upsert(data, wire: change.dataJSON) { applied += 1 }
                if let before, try Self.undoFields(db, change.entityId) != before {
                    try db.cachedStatement(sql: "UPDATE local_changes SET mark = ? WHERE entity_id = ?")
                        .execute(arguments: [try OutboxClock.tick(db), change.entityId])
                }
            }
        }
        try Self.setCursor(db, page.nextCursor)
        return applied
    }

    /// Which of the events `ids` were changed here (they have a local-change mark).
    static func changedHere(_ db: Database, _ ids: [String]) throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        var found: Set<String> = []
        for chunk in stride(from: 0, to: ids.count, by: 500).map({ ids[$0..<min($0 + 500, ids.count)] }) {
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            found.formUnion(
                try String.fetchAll(
                    db, sql: "SELECT entity_id FROM local_changes WHERE entity_id IN (\(marks))",
                    arguments: StatementArguments(Array(chunk))))
        }
        return found
    }

    /// The fields an undo puts back, as stored: type, time and note.
    static func undoFields(_ db: Database, _ id: String) throws -> [String?]? {
        try Row.fetchOne(
            db.cachedStatement(
                sql: "SELECT event_type_id, timestamp_ms, json_extract(body, '$.notes') FROM local_events WHERE id = ?"),
            arguments: [id]
        ).map { [$0[0], ($0[1] as Int64?).map(String.init), $0[2]] }
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
            try SearchIndex.deferring(db) {
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
    }

    /// Ends the download: drops synced entities the server does not have and sets the cursor.
    /// `everyEventArrived`: the events were not remembered (see ``bootstrap(_:remember:)``), and
    /// every synced event in the store came with this download.
    func finishBootstrap(cursor: Int64, everyEventArrived: Bool = false) async throws {
        try await db.write { db in
            // A type the server no longer has was deleted elsewhere: it goes as a feed's delete
            // would take it, with its cascade — a definition made here on it and never sent is kept
            // as a `deleted` conflict, not left behind to fail (the simulation, seed 718 on two
            // instances: a device whose first download came after the type's delete).
            for id in try String.fetchAll(
                db,
                sql: """
                    SELECT id FROM local_event_types WHERE sync_status = 'synced'
                    AND id NOT IN (SELECT id FROM bootstrap_seen WHERE entity = ?)
                    """, arguments: [SyncEntity.eventType.rawValue])
            {
                try Self.applyDelete(db, .eventType, id)
            }
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
        case .propertyDefinition(let d): (.propertyDefinition, d.value.id.description)
        case .onboarding, .conflict: nil
        }
    }
}
