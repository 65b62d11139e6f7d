import Foundation
import GRDB
import TrendyAPI
import TrendyModels

/// The SQLite half of every write flow (``StoreFlows``, D50): the facts a flow reads, and the one
/// executor that writes a plan. Field-level versions and conflicts are D37's: every update records,
/// per field it changes, the feed position of the change and the device that made it.
extension SQLiteServerStore {
    // MARK: Facts

    /// The fields of the entity other devices set after `base`, oldest first.
    static func changedFields(_ db: Database, entity: ChangeEntity, id: String, since base: ChangeBase?) throws
        -> [FieldVersion]
    {
        guard let base else { return [] }
        return try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT field, device, changed_at, version FROM field_versions
                    WHERE entity_type = ? AND entity_id = ? AND version > ? AND device != ? ORDER BY version
                    """), arguments: [entity.rawValue, id, base.version, base.deviceId]
        ).map { FieldVersion(field: $0[0], device: $0[1], changedAt: $0[2], version: $0[3]) }
    }

    /// What an edit or delete of the entity reads; `fetch` reads the user's entity.
    static func editFacts<Entity: Codable & Sendable & Hashable>(
        _ db: Database, userId: String, entity: ChangeEntity, id: String, base: ChangeBase?,
        fetch: (Database, String, String) throws -> Timestamped<Entity>?
    ) throws -> EditFacts<Entity> {
        if let stored = try fetch(db, userId, id) {
            return EditFacts(
                stored: stored, tombstone: nil, changed: try changedFields(db, entity: entity, id: id, since: base))
        }
        let tombstone = try Row.fetchOne(
            db,
            sql: """
                SELECT body, device, deleted_at FROM deleted_entities
                WHERE entity_type = ? AND entity_id = ? AND user_id = ?
                """, arguments: [entity.rawValue, id, userId]
        ).flatMap { row -> Tombstone? in
            let body: String = row["body"]
            return body.isEmpty ? nil : Tombstone(body: body, device: row["device"], deletedAt: row["deleted_at"])
        }
        return EditFacts(stored: nil, tombstone: tombstone, changed: [])
    }

    /// What a create of an event type or geofence (`table`) reads.
    static func createFacts<Entity: Codable & Sendable & Hashable>(
        _ db: Database, userId: String, entity: ChangeEntity, table: String, id: String,
        fetch: (Database, String, String) throws -> Timestamped<Entity>?
    ) throws -> CreateFacts<Entity> {
        let taken = try Bool.fetchOne(db, sql: "SELECT 1 FROM \(table) WHERE id = ?", arguments: [id]) ?? false
        let deleted = taken ? nil : try self.deleted(db, userId: userId, entity: entity, id: id)
        return CreateFacts(
            taken: taken, stored: taken ? try fetch(db, userId, id) : nil, deleted: deleted != nil,
            deletedVersion: deleted?.version)
    }

    /// Whether this user deleted an entity under `id`, and their cursor then.
    static func deleted(_ db: Database, userId: String, entity: ChangeEntity, id: String) throws -> DeletedId? {
        try Row.fetchOne(
            db.cachedStatement(
                sql: "SELECT version FROM deleted_entities WHERE entity_type = ? AND entity_id = ? AND user_id = ?"),
            arguments: [entity.rawValue, id, userId]
        ).map { DeletedId(version: $0[0]) }
    }

    /// Which of the event types `ids` are the user's.
    static func knownTypes(_ db: Database, userId: String, _ ids: [String]) throws -> Set<String> {
        try Set(
            ids.filter {
                try Bool.fetchOne(
                    db.cachedStatement(sql: "SELECT 1 FROM event_types WHERE id = ? AND user_id = ?"),
                    arguments: [$0, userId]) ?? false
            })
    }

    // MARK: Edits and deletes of one entity

    /// An edit of one entity (``StoreFlows/edit(_:id:what:_:facts:edited:refusal:base:now:row:)``):
    /// its facts, the store's answer about the edited entity (`refusal`), the plan written.
    func edit<Patch: EntityPatch>(
        _ entity: ChangeEntity, id: String, what: String, userId: String, _ update: Patch, base: ChangeBase?,
        now: Date, fetch: @escaping @Sendable (Database, String, String) throws -> Timestamped<Patch.Entity>?,
        refusal:
            @escaping @Sendable (Database, EditFacts<Patch.Entity>, (before: Patch.Entity, after: Patch.Entity)?)
            throws -> StoreError?,
        row: @escaping @Sendable (Patch.Entity, String) -> RowWrite
    ) async throws -> Timestamped<Patch.Entity> where Patch.Entity: Codable & Sendable & Hashable & Validating {
        try await db.write { db in
            try Self.edit(
                db, entity, id: id, what: what, userId: userId, update, base: base, now: now, fetch: fetch,
                refusal: refusal, row: row)
        }.get()
    }

    /// The edit inside the caller's transaction: throws a refusal before anything is written;
    /// answers `gone` or `notFound` with what the plan wrote (an edit of a deleted entity is kept).
    static func edit<Patch: EntityPatch>(
        _ db: Database, _ entity: ChangeEntity, id: String, what: String, userId: String, _ update: Patch,
        base: ChangeBase?, now: Date, fetch: (Database, String, String) throws -> Timestamped<Patch.Entity>?,
        refusal: (Database, EditFacts<Patch.Entity>, (before: Patch.Entity, after: Patch.Entity)?) throws ->
            StoreError?,
        row: (Patch.Entity, String) -> RowWrite
    ) throws -> Result<Timestamped<Patch.Entity>, StoreError>
    where Patch.Entity: Codable & Sendable & Hashable & Validating {
        let facts = try editFacts(db, userId: userId, entity: entity, id: id, base: base, fetch: fetch)
        let edited = try StoreFlows.edited(facts, update)
        let plan = try StoreFlows.edit(
            entity, id: id, what: what, update, facts: facts, edited: edited,
            refusal: try refusal(db, facts, edited), base: base, now: now, row: row)
        try write(plan.writes, db, userId: userId, now: now)
        return plan.answer
    }

    /// A delete of one event or geofence (``StoreFlows/delete(_:id:what:facts:as:base:now:row:)``).
    func delete<Patch: EntityPatch>(
        _ entity: ChangeEntity, id: String, what: String, userId: String, as patch: Patch.Type, base: ChangeBase?,
        now: Date, fetch: @escaping @Sendable (Database, String, String) throws -> Timestamped<Patch.Entity>?,
        row: RowWrite
    ) async throws where Patch.Entity: Codable & Sendable & Hashable {
        let found = try await db.write { db in
            try Self.delete(
                db, entity, id: id, what: what, userId: userId, as: patch, base: base, now: now, fetch: fetch, row: row)
        }
        if !found { throw StoreError.notFound(what) }
    }

    /// The delete inside the caller's transaction; false when the user has no such entity (its id
    /// is then marked deleted, and the caller answers `notFound` after the commit).
    static func delete<Patch: EntityPatch>(
        _ db: Database, _ entity: ChangeEntity, id: String, what: String, userId: String, as patch: Patch.Type,
        base: ChangeBase?, now: Date, fetch: (Database, String, String) throws -> Timestamped<Patch.Entity>?,
        row: RowWrite
    ) throws -> Bool where Patch.Entity: Codable & Sendable & Hashable {
        let facts = try editFacts(db, userId: userId, entity: entity, id: id, base: base, fetch: fetch)
        let plan = try StoreFlows.delete(
            entity, id: id, what: what, facts: facts, as: patch, base: base, now: now, row: row)
        try write(plan.writes, db, userId: userId, now: now)
        return plan.answer
    }

    // MARK: The executor

    /// Writes `writes` in order; answers the ids of new events another user took meanwhile.
    @discardableResult
    static func write(_ writes: [StoreWrite], _ db: Database, userId: String, now: Date) throws -> Set<String> {
        var lastChange: Int64 = 0
        var rejected: Set<String> = []
        for write in writes {
            switch write {
            case .row(let row):
                rejected.formUnion(try self.write(row, db, userId: userId, now: now))
            case .change(let entity, let id, let operation, let data, let echo):
                lastChange = try appendChange(
                    db, userId: userId, entity: entity, id: id, operation: operation, data: data, now: now, owner: echo)
            case .fieldVersions(let entity, let id, let fields, let device, let at, let replace):
                let version: Int64
                switch at {
                case .lastChange: version = lastChange
                case .fixed(let fixed): version = fixed
                }
                let statement = try db.cachedStatement(
                    sql: """
                        INSERT OR \(replace ? "REPLACE" : "IGNORE") INTO field_versions
                        (entity_type, entity_id, field, version, device, changed_at) VALUES (?, ?, ?, ?, ?, ?)
                        """)
                for field in fields {
                    try statement.execute(arguments: [
                        entity.rawValue, id, field, version, device, now.timeIntervalSince1970,
                    ])
                }
            case .conflicts(let conflicts):
                try record(conflicts, db, userId: userId, now: now)
            case .tombstone(let entity, let id, let body, let device):
                try db.execute(
                    sql: "DELETE FROM field_versions WHERE entity_type = ? AND entity_id = ?",
                    arguments: [entity.rawValue, id])
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO deleted_entities
                        (entity_type, entity_id, user_id, body, device, deleted_at, version)
                        VALUES (?, ?, ?, ?, ?, ?, (SELECT coalesce(max(seq), 0) FROM change_log WHERE user_id = ?))
                        """, arguments: [entity.rawValue, id, userId, body, device, now.timeIntervalSince1970, userId])
            case .mark(let entity, let id, let device):
                try db.execute(
                    sql: """
                        INSERT OR IGNORE INTO deleted_entities
                        (entity_type, entity_id, user_id, body, device, deleted_at, version)
                        VALUES (?, ?, ?, '', ?, ?, (SELECT coalesce(max(seq), 0) FROM change_log WHERE user_id = ?))
                        """, arguments: [entity.rawValue, id, userId, device, now.timeIntervalSince1970, userId])
            }
        }
        return rejected
    }

    /// Keeps conflicts and announces each in the feed once (`INSERT OR IGNORE` on the loss).
    static func record(_ conflicts: [KeptConflict], _ db: Database, userId: String, now: Date) throws {
        for (conflict, lostVersion) in conflicts {
            let body = try StoreRules.encode(conflict)
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO conflicts
                    (id, user_id, entity_id, field, lost_value, lost_by, lost_version, body)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    conflict.id, userId, conflict.entityId, conflict.field ?? "", conflict.lostValue, conflict.lostBy,
                    lostVersion, body,
                ])
            guard db.changesCount > 0 else { continue }
            try appendChange(
                db, userId: userId, entity: .conflict, id: conflict.id, operation: .create, data: body, now: now)
        }
    }

    /// Writes one entity row; answers the ids of new events it could not insert.
    static func write(_ row: RowWrite, _ db: Database, userId: String, now: Date) throws -> Set<String> {
        let seconds = now.timeIntervalSince1970
        switch row {
        case .insertEventType(let type):
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO event_types (id, user_id, name, color, icon, created_at, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [type.id.description, userId, type.name, type.color, type.icon, seconds, seconds])
            guard db.changesCount == 1 else { throw StoreError.conflict("the id \(type.id) is already in use") }
        case .updateEventType(let type):
            try db.execute(
                sql: "UPDATE event_types SET name = ?, color = ?, icon = ?, updated_at = ? WHERE id = ?",
                arguments: [type.name, type.color, type.icon, seconds, type.id.description])
        case .deleteEventType(let id):
            try db.execute(sql: "DELETE FROM event_types WHERE id = ?", arguments: [id])
        case .insertEvents(let new):
            return try insert(new, db, userId: userId, now: now)
        case .updateEvent(let event, let body):
            try db.cachedStatement(
                sql: """
                    UPDATE events SET event_type_id = ?, timestamp_ms = ?, external_id = ?, body = ?, updated_at = ?
                    WHERE id = ?
                    """
            ).execute(
                arguments: [
                    event.eventTypeId.description, StoreRules.milliseconds(event.timestamp), event.externalId, body,
                    seconds, event.id.description,
                ])
        case .deleteEvent(let id):
            try db.execute(sql: "DELETE FROM events WHERE id = ? AND user_id = ?", arguments: [id, userId])
        case .deleteEventsOfType(let id):
            try db.execute(sql: "DELETE FROM events WHERE user_id = ? AND event_type_id = ?", arguments: [userId, id])
        case .insertGeofence(let geofence, let body):
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO geofences (id, user_id, is_active, body, created_at, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """, arguments: [geofence.id.description, userId, geofence.isActive, body, seconds, seconds])
            guard db.changesCount == 1 else { throw StoreError.conflict("the id \(geofence.id) is already in use") }
        case .updateGeofence(let id, let isActive, let body):
            try db.execute(
                sql: "UPDATE geofences SET is_active = COALESCE(?, is_active), body = ?, updated_at = ? WHERE id = ?",
                arguments: [isActive, body, seconds, id])
        case .deleteGeofence(let id):
            try db.execute(sql: "DELETE FROM geofences WHERE id = ? AND user_id = ?", arguments: [id, userId])
        case .insertPropertyDefinition(let definition, let body):
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO property_definitions
                    (id, user_id, event_type_id, key_lower, display_order, body, created_at, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    definition.id.description, userId, definition.eventTypeId.description,
                    definition.key.lowercased(), definition.displayOrder, body, seconds, seconds,
                ])
            guard db.changesCount == 1 else { throw StoreError.conflict("the id \(definition.id) is already in use") }
        case .updatePropertyDefinition(let id, let body):
            try db.execute(
                sql: """
                    UPDATE property_definitions SET display_order = json_extract(?1, '$.display_order'), body = ?1,
                    updated_at = ?2 WHERE id = ?3
                    """, arguments: [body, seconds, id])
        case .deletePropertyDefinition(let id):
            try db.execute(
                sql: "DELETE FROM property_definitions WHERE id = ? AND user_id = ?", arguments: [id, userId])
        case .deletePropertyDefinitionsOfType(let id):
            try db.execute(
                sql: "DELETE FROM property_definitions WHERE user_id = ? AND event_type_id = ?",
                arguments: [userId, id])
        }
        return []
    }

    /// Inserts new events, each announced as a create; answers the ids it could not insert.
    static func insert(_ new: [NewEvent], _ db: Database, userId: String, now: Date) throws -> Set<String> {
        let insert = try db.cachedStatement(
            sql: """
                INSERT OR IGNORE INTO events (id, user_id, event_type_id, timestamp_ms, source_type, external_id, body,
                created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        var rejected: Set<String> = []
        for item in new {
            let event = item.event
            let id = event.id.description
            try insert.execute(arguments: [
                id, userId, event.eventTypeId.description, StoreRules.milliseconds(event.timestamp),
                event.sourceType.rawValue, event.externalId, item.body, now.timeIntervalSince1970,
                now.timeIntervalSince1970,
            ])
            guard db.changesCount == 1 else {
                rejected.insert(id)
                continue
            }
            let cursor = try appendChange(
                db, userId: userId, entity: .event, id: id, operation: .create, data: item.body, now: now,
                echo: item.echo)
            if let device = item.echo {
                try saveEcho(db, .event, id, EchoState(shared: 0, device: device, own: cursor))
            }
        }
        return rejected
    }

    public func conflicts(userId: String) async throws -> [String] {
        try await db.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT body FROM conflicts WHERE user_id = ? AND body IS NOT NULL AND resolved_at IS NULL
                    ORDER BY rowid
                    """,
                arguments: [userId])
        }
    }

    public func resolveConflict(userId: String, id: String, now: Date) async throws {
        try await db.write { db in
            let open = try Bool.fetchOne(
                db, sql: "SELECT resolved_at IS NULL FROM conflicts WHERE id = ? AND user_id = ?",
                arguments: [id, userId])
            guard let open else { throw StoreError.notFound("no conflict \(id)") }
            guard open else { return }
            try db.execute(
                sql: "UPDATE conflicts SET resolved_at = ? WHERE id = ?", arguments: [now.timeIntervalSince1970, id])
            try Self.appendChange(
                db, userId: userId, entity: .conflict, id: id, operation: .delete, data: nil, now: now)
        }
    }
}
