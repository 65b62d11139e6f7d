import Foundation
import GRDB
import TrendyAPI
import TrendyModels
import TrendySync

/// Applying server state: change-feed pages and the bootstrap download.
extension SQLiteLocalStore {
    /// The entities among `ids` that a waiting local change or a local delete protects from
    /// server state, as `entity|id`: two queries for a whole page or download batch.
    static func protectedKeys(_ db: Database, ids: some Collection<String>) throws -> Set<String> {
        let unique = Array(Set(ids))
        guard !unique.isEmpty else { return [] }
        let marks = unique.map { _ in "?" }.joined(separator: ",")
        var keys: Set<String> = []
        for sql in [
            "SELECT entity, entity_id FROM outbox WHERE state != 'failed' AND entity_id IN (\(marks))",
            "SELECT entity, entity_id FROM tombstones WHERE entity_id IN (\(marks))",
        ] {
            for row in try Row.fetchAll(db, sql: sql, arguments: StatementArguments(unique)) {
                keys.insert("\(row["entity"] as String)|\(row["entity_id"] as String)")
            }
        }
        return keys
    }

    /// Stores a server entity unless a local change or a local delete takes precedence
    /// (`protected` comes from ``protectedKeys(_:ids:)``).
    static func upsert(_ db: Database, _ data: ChangeData, protected: Set<String>) throws -> Bool {
        func blocked(_ entity: SyncEntity, _ id: String) -> Bool { protected.contains("\(entity.rawValue)|\(id)") }
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
            try db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO local_events (id, event_type_id, timestamp_ms, source_type, body, sync_status)
                    VALUES (?, ?, ?, ?, ?, 'synced')
                    """
            ).execute(arguments: [
                id, e.value.eventTypeId.description, milliseconds(e.value.timestamp), e.value.sourceType.rawValue,
                e.value.wireJSON(),
            ])
        case .geofence(let g):
            let id = g.value.id.description
            guard !blocked(.geofence, id) else { return false }
            try db.cachedStatement(
                sql:
                    "INSERT OR REPLACE INTO local_geofences (id, body, is_active, sync_status) VALUES (?, ?, ?, 'synced')"
            ).execute(arguments: [id, try encode(g.value), g.value.isActive])
        case .onboarding:
            return false
        }
        return true
    }

    /// A server delete: the entity goes, with any local change still waiting for it.
    static func applyDelete(_ db: Database, _ entity: SyncEntity, _ id: String) throws {
        try db.execute(
            sql: "DELETE FROM outbox WHERE entity = ? AND entity_id = ? AND state = 'pending'",
            arguments: [entity.rawValue, id])
        if entity == .eventType {
            try db.execute(sql: "DELETE FROM local_events WHERE event_type_id = ?", arguments: [id])
        }
        try db.execute(sql: "DELETE FROM \(table(entity)) WHERE id = ?", arguments: [id])
    }

    /// Applies one page of the feed and moves the cursor, in one transaction. Returns how many
    /// changes altered local state.
    package func apply(_ page: ChangesPage) async throws -> Int {
        try await db.write { db in
            var applied = 0
            let protected = try Self.protectedKeys(db, ids: page.changes.map(\.entityId))
            for change in page.changes {
                let entity: SyncEntity
                switch change.entityType {
                case .event: entity = .event
                case .eventType: entity = .eventType
                case .geofence: entity = .geofence
                case .onboarding: continue
                }
                if change.operation == .delete {
                    try Self.applyDelete(db, entity, change.entityId)
                    applied += 1
                } else if let data = change.data, try Self.upsert(db, data, protected: protected) {
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

    /// Stores one downloaded batch.
    func bootstrap(_ items: [ChangeData]) async throws {
        let keyed = items.compactMap { item in item.entityKey.map { (item, $0) } }
        try await db.write { db in
            let protected = try Self.protectedKeys(db, ids: keyed.map(\.1.id))
            for (item, key) in keyed {
                _ = try Self.upsert(db, item, protected: protected)
                try db.cachedStatement(sql: "INSERT OR IGNORE INTO bootstrap_seen (entity, id) VALUES (?, ?)")
                    .execute(arguments: [key.entity.rawValue, key.id])
            }
        }
    }

    /// Ends the download: drops synced entities the server does not have and sets the cursor.
    func finishBootstrap(cursor: Int64) async throws {
        try await db.write { db in
            for entity in SyncEntity.allCases {
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

extension ChangeData {
    /// The local entity kind and id this data is about (nil for onboarding, which Sync does not store).
    var entityKey: (entity: SyncEntity, id: String)? {
        switch self {
        case .event(let e): (.event, e.value.id.description)
        case .eventType(let t): (.eventType, t.value.id.description)
        case .geofence(let g): (.geofence, g.value.id.description)
        case .onboarding: nil
        }
    }
}
