import Foundation
import PostgresNIO
import TrendyAPI
import TrendyModels

/// The PostgreSQL half of every write flow (``StoreFlows``, D50): the facts a flow reads, and the
/// one executor that writes a plan, inside the caller's transaction (which holds the user's feed
/// lock).
extension PostgresServerStore {
    // MARK: Facts

    /// The fields of the entity other devices set after `base`, oldest first.
    static func changedFields(_ s: PostgresSession, entity: ChangeEntity, id: String, since base: ChangeBase?)
        async throws -> [FieldVersion]
    {
        guard let base else { return [] }
        return try await s.all(
            """
            SELECT field, device, changed_at, version FROM field_versions
            WHERE entity_type = \(entity.rawValue) AND entity_id = \(id) AND version > \(base.version)
            AND device <> \(base.deviceId) ORDER BY version
            """, as: (String, String, Double, Int64).self
        ).map { FieldVersion(field: $0.0, device: $0.1, changedAt: $0.2, version: $0.3) }
    }

    /// What an edit or delete of the entity reads; `fetch` reads the user's entity.
    static func editFacts<Entity: Codable & Sendable & Hashable>(
        _ s: PostgresSession, userId: String, entity: ChangeEntity, id: String, base: ChangeBase?,
        fetch: (PostgresSession, String, String) async throws -> Timestamped<Entity>?
    ) async throws -> EditFacts<Entity> {
        if let stored = try await fetch(s, userId, id) {
            return EditFacts(
                stored: stored, tombstone: nil,
                changed: try await changedFields(s, entity: entity, id: id, since: base))
        }
        let tombstone = try await s.one(
            """
            SELECT body, device, deleted_at FROM deleted_entities
            WHERE entity_type = \(entity.rawValue) AND entity_id = \(id) AND user_id = \(userId)
            """, as: (String, String, Double).self
        ).flatMap { $0.0.isEmpty ? nil : Tombstone(body: $0.0, device: $0.1, deletedAt: $0.2) }
        return EditFacts(stored: nil, tombstone: tombstone, changed: [])
    }

    /// What a create of an event type or geofence (`table`) reads.
    static func createFacts<Entity: Codable & Sendable & Hashable>(
        _ s: PostgresSession, userId: String, entity: ChangeEntity, table: String, id: String,
        fetch: (PostgresSession, String, String) async throws -> Timestamped<Entity>?
    ) async throws -> CreateFacts<Entity> {
        let taken = try await s.run("SELECT 1 FROM \(unescaped: table) WHERE id = \(id)") > 0
        let deleted = taken ? nil : try await self.deleted(s, userId: userId, entity: entity, id: id)
        return CreateFacts(
            taken: taken, stored: taken ? try await fetch(s, userId, id) : nil, deleted: deleted != nil,
            deletedVersion: deleted?.version)
    }

    /// Whether this user deleted an entity under `id`, and their cursor then.
    static func deleted(_ s: PostgresSession, userId: String, entity: ChangeEntity, id: String) async throws
        -> DeletedId?
    {
        try await s.one(
            """
            SELECT version, 1 FROM deleted_entities
            WHERE entity_type = \(entity.rawValue) AND entity_id = \(id) AND user_id = \(userId)
            """, as: (Int64?, Int32).self
        ).map { DeletedId(version: $0.0) }
    }

    /// Which of the event types `ids` are the user's.
    static func knownTypes(_ s: PostgresSession, userId: String, _ ids: [String]) async throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        return Set(
            try await s.column(
                "SELECT id FROM event_types WHERE user_id = \(userId) AND id = ANY(\(ids)::text[])", as: String.self))
    }

    // MARK: Edits and deletes of one entity

    /// An edit of one entity (``StoreFlows/edit(_:id:what:_:facts:edited:refusal:base:now:row:)``):
    /// its facts, the store's answer about the edited entity (`refusal`), the plan written.
    func edit<Patch: EntityPatch>(
        _ entity: ChangeEntity, id: String, what: String, userId: String, _ update: Patch, base: ChangeBase?,
        now: Date,
        fetch: @escaping @Sendable (PostgresSession, String, String) async throws -> Timestamped<Patch.Entity>?,
        refusal:
            @escaping @Sendable (
                PostgresSession, EditFacts<Patch.Entity>, (before: Patch.Entity, after: Patch.Entity)?
            ) async throws -> StoreError?,
        row: @escaping @Sendable (Patch.Entity, String) -> RowWrite
    ) async throws -> Timestamped<Patch.Entity> where Patch.Entity: Codable & Sendable & Hashable & Validating {
        try await database.transaction(feedOf: userId) { s in
            try await Self.edit(
                s, entity, id: id, what: what, userId: userId, update, base: base, now: now, fetch: fetch,
                refusal: refusal, row: row)
        }.get()
    }

    /// The edit inside the caller's transaction: throws a refusal before anything is written;
    /// answers `gone` or `notFound` with what the plan wrote (an edit of a deleted entity is kept).
    static func edit<Patch: EntityPatch>(
        _ s: PostgresSession, _ entity: ChangeEntity, id: String, what: String, userId: String, _ update: Patch,
        base: ChangeBase?, now: Date,
        fetch: (PostgresSession, String, String) async throws -> Timestamped<Patch.Entity>?,
        refusal: (PostgresSession, EditFacts<Patch.Entity>, (before: Patch.Entity, after: Patch.Entity)?)
            async throws -> StoreError?,
        row: (Patch.Entity, String) -> RowWrite
    ) async throws -> Result<Timestamped<Patch.Entity>, StoreError>
    where Patch.Entity: Codable & Sendable & Hashable & Validating {
        let facts = try await editFacts(s, userId: userId, entity: entity, id: id, base: base, fetch: fetch)
        let edited = try StoreFlows.edited(facts, update)
        let plan = try StoreFlows.edit(
            entity, id: id, what: what, update, facts: facts, edited: edited,
            refusal: try await refusal(s, facts, edited), base: base, now: now, row: row)
        try await write(plan.writes, s, userId: userId, now: now)
        return plan.answer
    }

    /// A delete of one event or geofence (``StoreFlows/delete(_:id:what:facts:as:base:now:row:)``).
    func delete<Patch: EntityPatch>(
        _ entity: ChangeEntity, id: String, what: String, userId: String, as patch: Patch.Type, base: ChangeBase?,
        now: Date,
        fetch: @escaping @Sendable (PostgresSession, String, String) async throws -> Timestamped<Patch.Entity>?,
        row: RowWrite
    ) async throws where Patch.Entity: Codable & Sendable & Hashable {
        let found = try await database.transaction(feedOf: userId) { s in
            try await Self.delete(
                s, entity, id: id, what: what, userId: userId, as: patch, base: base, now: now, fetch: fetch, row: row)
        }
        if !found { throw StoreError.notFound(what) }
    }

    /// The delete inside the caller's transaction; false when the user has no such entity (its id
    /// is then marked deleted, and the caller answers `notFound` after the commit).
    static func delete<Patch: EntityPatch>(
        _ s: PostgresSession, _ entity: ChangeEntity, id: String, what: String, userId: String, as patch: Patch.Type,
        base: ChangeBase?, now: Date,
        fetch: (PostgresSession, String, String) async throws -> Timestamped<Patch.Entity>?, row: RowWrite
    ) async throws -> Bool where Patch.Entity: Codable & Sendable & Hashable {
        let facts = try await editFacts(s, userId: userId, entity: entity, id: id, base: base, fetch: fetch)
        let plan = try StoreFlows.delete(
            entity, id: id, what: what, facts: facts, as: patch, base: base, now: now, row: row)
        try await write(plan.writes, s, userId: userId, now: now)
        return plan.answer
    }

    // MARK: The executor

    /// Writes `writes` in order; answers the ids of new events another user took meanwhile.
    @discardableResult
    static func write(_ writes: [StoreWrite], _ s: PostgresSession, userId: String, now: Date) async throws
        -> Set<String>
    {
        var lastChange: Int64 = 0
        var rejected: Set<String> = []
        let seconds = now.timeIntervalSince1970
        for write in writes {
            switch write {
            case .row(let row):
                rejected.formUnion(try await self.write(row, s, userId: userId, now: now))
            case .change(let entity, let id, let operation, let data, let echo):
                lastChange = try await appendChange(
                    s, userId: userId, entity: entity, id: id, operation: operation, data: data, now: now, owner: echo)
            case .fieldVersions(let entity, let id, let fields, let device, let at, let replace):
                guard !fields.isEmpty else { continue }
                let version: Int64
                switch at {
                case .lastChange: version = lastChange
                case .fixed(let fixed): version = fixed
                }
                let onConflict =
                    replace
                    ? """
                    ON CONFLICT (entity_type, entity_id, field) DO UPDATE SET version = EXCLUDED.version,
                    device = EXCLUDED.device, changed_at = EXCLUDED.changed_at
                    """ : "ON CONFLICT (entity_type, entity_id, field) DO NOTHING"
                try await s.run(
                    """
                    INSERT INTO field_versions (entity_type, entity_id, field, version, device, changed_at)
                    SELECT \(entity.rawValue), \(id), f, \(version), \(device), \(seconds)
                    FROM unnest(\(fields)::text[]) AS f \(unescaped: onConflict)
                    """)
            case .conflicts(let conflicts):
                try await record(conflicts, s, userId: userId, now: now)
            case .tombstone(let entity, let id, let body, let device):
                try await s.run(
                    "DELETE FROM field_versions WHERE entity_type = \(entity.rawValue) AND entity_id = \(id)")
                try await s.run(
                    """
                    INSERT INTO deleted_entities (entity_type, entity_id, user_id, body, device, deleted_at, version)
                    VALUES (\(entity.rawValue), \(id), \(userId), \(body), \(device), \(seconds),
                            (SELECT coalesce(max(seq), 0) FROM change_log WHERE user_id = \(userId)))
                    ON CONFLICT (entity_type, entity_id) DO UPDATE SET user_id = EXCLUDED.user_id,
                    body = EXCLUDED.body, device = EXCLUDED.device, deleted_at = EXCLUDED.deleted_at,
                    version = EXCLUDED.version
                    """)
            case .mark(let entity, let id, let device):
                try await s.run(
                    """
                    INSERT INTO deleted_entities (entity_type, entity_id, user_id, body, device, deleted_at, version)
                    VALUES (\(entity.rawValue), \(id), \(userId), '', \(device), \(seconds),
                            (SELECT coalesce(max(seq), 0) FROM change_log WHERE user_id = \(userId)))
                    ON CONFLICT (entity_type, entity_id) DO NOTHING
                    """)
            }
        }
        return rejected
    }

    /// Keeps conflicts and announces each in the feed once (`ON CONFLICT DO NOTHING` on the loss).
    static func record(_ conflicts: [KeptConflict], _ s: PostgresSession, userId: String, now: Date) async throws {
        for (conflict, lostVersion) in conflicts {
            let body = try StoreRules.encode(conflict)
            let inserted = try await s.run(
                """
                INSERT INTO conflicts (id, user_id, entity_id, field, lost_value, lost_by, lost_version, body)
                VALUES (\(conflict.id), \(userId), \(conflict.entityId), \(conflict.field ?? ""), \(conflict.lostValue),
                \(conflict.lostBy), \(lostVersion), \(body))
                ON CONFLICT DO NOTHING RETURNING 1
                """)
            guard inserted > 0 else { continue }
            try await appendChange(
                s, userId: userId, entity: .conflict, id: conflict.id, operation: .create, data: body, now: now)
        }
    }

    /// Writes one entity row; answers the ids of new events it could not insert. An id another
    /// user stores at this very moment (under their own lock, not ours) is theirs: `ON CONFLICT DO
    /// NOTHING`, and the create is refused.
    static func write(_ row: RowWrite, _ s: PostgresSession, userId: String, now: Date) async throws -> Set<String> {
        let seconds = now.timeIntervalSince1970
        switch row {
        case .insertEventType(let type):
            let inserted = try await s.run(
                """
                INSERT INTO event_types (id, user_id, name, color, icon, created_at, updated_at)
                VALUES (\(type.id.description), \(userId), \(type.name), \(type.color), \(type.icon), \(seconds),
                \(seconds)) ON CONFLICT DO NOTHING RETURNING 1
                """)
            guard inserted == 1 else { throw StoreError.conflict("the id \(type.id) is already in use") }
        case .updateEventType(let type):
            try await s.run(
                """
                UPDATE event_types SET name = \(type.name), color = \(type.color), icon = \(type.icon),
                updated_at = \(seconds) WHERE id = \(type.id.description)
                """)
        case .deleteEventType(let id):
            try await s.run("DELETE FROM event_types WHERE id = \(id)")
        case .insertEvents(let new):
            return try await insert(new, s, userId: userId, now: now)
        case .updateEvent(let event, let body):
            try await s.run(
                """
                UPDATE events SET event_type_id = \(event.eventTypeId.description),
                timestamp_ms = \(StoreRules.milliseconds(event.timestamp)), external_id = \(event.externalId),
                body = \(body), updated_at = \(seconds) WHERE id = \(event.id.description)
                """)
        case .deleteEvent(let id):
            try await s.run("DELETE FROM events WHERE id = \(id) AND user_id = \(userId)")
        case .deleteEventsOfType(let id):
            try await s.run("DELETE FROM events WHERE user_id = \(userId) AND event_type_id = \(id)")
        case .insertGeofence(let geofence, let body):
            let inserted = try await s.run(
                """
                INSERT INTO geofences (id, user_id, is_active, body, created_at, updated_at)
                VALUES (\(geofence.id.description), \(userId), \(geofence.isActive), \(body), \(seconds), \(seconds))
                ON CONFLICT DO NOTHING RETURNING 1
                """)
            guard inserted == 1 else { throw StoreError.conflict("the id \(geofence.id) is already in use") }
        case .updateGeofence(let id, let isActive, let body):
            try await s.run(
                """
                UPDATE geofences SET is_active = COALESCE(\(isActive), is_active), body = \(body),
                updated_at = \(seconds) WHERE id = \(id)
                """)
        case .deleteGeofence(let id):
            try await s.run("DELETE FROM geofences WHERE id = \(id) AND user_id = \(userId)")
        case .insertPropertyDefinition(let definition, let body):
            let inserted = try await s.run(
                """
                INSERT INTO property_definitions
                (id, user_id, event_type_id, key_lower, display_order, body, created_at, updated_at)
                VALUES (\(definition.id.description), \(userId), \(definition.eventTypeId.description),
                \(definition.key.lowercased()), \(definition.displayOrder), \(body), \(seconds), \(seconds))
                ON CONFLICT DO NOTHING RETURNING 1
                """)
            guard inserted == 1 else { throw StoreError.conflict("the id \(definition.id) is already in use") }
        case .updatePropertyDefinition(let id, let body):
            let order = try StoreRules.decode(Timestamped<PropertyDefinition>.self, body).value.displayOrder
            try await s.run(
                """
                UPDATE property_definitions SET display_order = \(order), body = \(body), updated_at = \(seconds)
                WHERE id = \(id)
                """)
        case .deletePropertyDefinition(let id):
            try await s.run("DELETE FROM property_definitions WHERE id = \(id) AND user_id = \(userId)")
        case .deletePropertyDefinitionsOfType(let id):
            try await s.run("DELETE FROM property_definitions WHERE user_id = \(userId) AND event_type_id = \(id)")
        }
        return []
    }

    /// Inserts new events and announces the inserted ones as creates, in two statements whatever
    /// the batch's size; answers the ids it could not insert.
    static func insert(_ new: [NewEvent], _ s: PostgresSession, userId: String, now: Date) async throws
        -> Set<String>
    {
        let ids = new.map { $0.event.id.description }
        let seconds = now.timeIntervalSince1970
        let inserted = Set(
            try await s.column(
                """
                INSERT INTO events (id, user_id, event_type_id, timestamp_ms, source_type, external_id, body,
                created_at, updated_at)
                SELECT id, \(userId), type_id, ms, source, CASE WHEN has_external THEN external END, body,
                \(seconds), \(seconds)
                FROM unnest(\(ids)::text[], \(new.map { $0.event.eventTypeId.description })::text[],
                \(new.map { StoreRules.milliseconds($0.event.timestamp) })::bigint[],
                \(new.map { $0.event.sourceType.rawValue })::text[],
                \(new.map { $0.event.externalId ?? "" })::text[],
                \(new.map { $0.event.externalId != nil })::boolean[], \(new.map(\.body))::text[])
                AS n(id, type_id, ms, source, external, has_external, body)
                ON CONFLICT DO NOTHING RETURNING id
                """, as: String.self))
        let logged = new.filter { inserted.contains($0.event.id.description) }
        // Each create its sender holds is left out of that device's feed (D57), in the same statement.
        try await s.run(
            """
            WITH ins AS (
                INSERT INTO change_log (
                    user_id, seq, entity_type, entity_id, operation, data, created_at, echo_device, echo_decided)
                SELECT \(userId), last.seq + n.ord, 'event', n.id, 'create', n.body, \(seconds), NULLIF(n.echo, ''), TRUE
                FROM (SELECT COALESCE(MAX(seq), 0) AS seq FROM change_log WHERE user_id = \(userId)) AS last,
                unnest(\(logged.map { $0.event.id.description })::text[], \(logged.map(\.body))::text[],
                \(logged.map { $0.echo ?? "" })::text[])
                WITH ORDINALITY AS n(id, body, echo, ord)
                RETURNING entity_id, seq, echo_device
            )
            INSERT INTO echo_state (entity_type, entity_id, shared, device, own)
            SELECT 'event', entity_id, 0, echo_device, seq FROM ins WHERE echo_device IS NOT NULL
            ON CONFLICT (entity_type, entity_id)
            DO UPDATE SET shared = EXCLUDED.shared, device = EXCLUDED.device, own = EXCLUDED.own
            """)
        return Set(ids).subtracting(inserted)
    }

    public func conflicts(userId: String) async throws -> [String] {
        try await database.read { s in
            try await s.column(
                "SELECT body FROM conflicts WHERE user_id = \(userId) AND resolved_at IS NULL ORDER BY position",
                as: String.self)
        }
    }

    public func resolveConflict(userId: String, id: String, now: Date) async throws {
        try await database.transaction(feedOf: userId) { s in
            let open = try await s.column(
                "SELECT resolved_at IS NULL FROM conflicts WHERE id = \(id) AND user_id = \(userId) FOR UPDATE",
                as: Bool.self)
            guard let first = open.first else { throw StoreError.notFound("no conflict \(id)") }
            guard first else { return }
            try await s.run(
                "UPDATE conflicts SET resolved_at = \(now.timeIntervalSince1970) WHERE id = \(id)")
            try await Self.appendChange(
                s, userId: userId, entity: .conflict, id: id, operation: .delete, data: nil, now: now)
        }
    }
}
