import Foundation
import GRDB
import TrendyAPI
import TrendyModels
import TrendySync

/// Conflicts kept on this install, restoring them, and `sync explain` (D37).
extension SQLiteLocalStore {
    /// Keeps a conflict the feed announced (once).
    static func keep(_ conflict: SyncConflict, _ db: Database) throws {
        try db.execute(
            sql: """
                INSERT OR IGNORE INTO sync_conflicts (id, body, entity, entity_id, detected_at)
                VALUES (?, ?, ?, ?, ?)
                """,
            arguments: [
                conflict.id, try encode(conflict), conflict.entityType.rawValue, conflict.entityId,
                conflict.detectedAt.timeIntervalSince1970,
            ])
    }

    /// A conflict another device restored or dismissed (the feed's `delete` of it): closed here
    /// too, unless this device closed it already (then this is the server hearing of it).
    static func resolvedElsewhere(_ id: String, _ db: Database) throws {
        try db.execute(
            sql: """
                UPDATE sync_conflicts SET resolution_unsent = 0,
                state = CASE state WHEN 'open' THEN 'resolved_elsewhere' ELSE state END WHERE id = ?
                """, arguments: [id])
    }

    /// The conflicts this device resolved that the server has not heard of.
    func unsentResolutions() async throws -> [String] {
        try await db.read { db in
            try String.fetchAll(db, sql: "SELECT id FROM sync_conflicts WHERE resolution_unsent = 1 ORDER BY rowid")
        }
    }

    /// The server heard of the resolution (or never kept the conflict: one kept only here).
    func resolutionSent(_ id: String) async throws {
        try await db.write { db in
            try db.execute(sql: "UPDATE sync_conflicts SET resolution_unsent = 0 WHERE id = ?", arguments: [id])
        }
    }

    /// Keeps conflicts a download listed (once each).
    func keep(_ conflicts: [SyncConflict]) async throws {
        guard !conflicts.isEmpty else { return }
        try await db.write { db in for c in conflicts { try Self.keep(c, db) } }
    }

    /// A server delete is about to remove an entity with local edits the server has not taken:
    /// those edits are kept as a conflict (the delete wins; they can be restored), never dropped
    /// without a trace. Edits in flight reach the server, which keeps them itself (410).
    static func keepEditsOfDeleted(_ db: Database, _ entity: SyncEntity, _ id: String) throws {
        let patches = try String.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT payload FROM outbox WHERE entity = ? AND entity_id = ? AND kind = 'update'
                    AND state != 'in_flight' AND payload IS NOT NULL ORDER BY seq
                    """), arguments: [entity.rawValue, id])
        guard let first = patches.first, let local = try localJSON(db, entity, id) else { return }
        let lost = patches.dropFirst().reduce(first) { FieldPatch.merge($0, $1) }
        let now = Date()
        try keep(
            SyncConflict(
                id: UUID().uuidString.lowercased(), kind: .deleted, entityType: entity.changeEntity, entityId: id,
                field: nil, keptValue: nil, lostValue: lost, keptBy: "another device", keptAt: now,
                lostBy: try Outbox.deviceId(db), lostAt: now, detectedAt: now, entity: local), db)
    }

    /// An entity's local copy as JSON.
    static func localJSON(_ db: Database, _ entity: SyncEntity, _ id: String) throws -> String? {
        switch entity {
        case .event, .geofence, .propertyDefinition:
            return try String.fetchOne(db, sql: "SELECT body FROM \(table(entity)) WHERE id = ?", arguments: [id])
        case .eventType:
            return try Row.fetchOne(db, sql: "SELECT * FROM local_event_types WHERE id = ?", arguments: [id])
                .flatMap(eventType).map { try encode($0.value) }
        }
    }

    public func conflicts(includeClosed: Bool) async throws -> [StoredConflict] {
        try await db.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT body, state FROM sync_conflicts \(includeClosed ? "" : "WHERE state = 'open'")
                    ORDER BY detected_at DESC, id
                    """
            ).map { row in
                StoredConflict(
                    conflict: try Self.decode(SyncConflict.self, row["body"]),
                    state: ConflictState(rawValue: row["state"]) ?? .open)
            }
        }
    }

    public func openConflictCount() async throws -> Int {
        try await db.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sync_conflicts WHERE state = 'open'") ?? 0
        }
    }

    static func storedConflict(_ db: Database, _ id: String) throws -> SyncConflict {
        guard let body = try String.fetchOne(db, sql: "SELECT body FROM sync_conflicts WHERE id = ?", arguments: [id])
        else { throw LocalStoreError.notFound("conflict \(id)") }
        return try decode(SyncConflict.self, body)
    }

    public func dismissConflict(id: String) async throws {
        try await db.write { db in
            _ = try Self.storedConflict(db, id)
            try db.execute(
                sql: "UPDATE sync_conflicts SET state = 'dismissed', resolution_unsent = 1 WHERE id = ?",
                arguments: [id])
        }
    }

    public func restoreConflict(id: String, newId: UUIDv7, eventType: UUIDv7?) async throws -> String {
        let at = now()
        return try await db.write { db in
            let conflict = try Self.storedConflict(db, id)
            if try String.fetchOne(db, sql: "SELECT state FROM sync_conflicts WHERE id = ?", arguments: [id])
                == ConflictState.restored.rawValue
            {
                throw LocalStoreError.conflict("conflict \(id) was already restored")
            }
            guard let entity = conflict.entityType.syncEntity else {
                throw LocalStoreError.conflict("conflicts about \(conflict.entityType.rawValue) cannot be restored")
            }
            let target: String
            switch conflict.kind {
            case .field:
                guard let field = conflict.field else { throw LocalStoreError.notFound("field") }
                let patch = "{\(Self.jsonString(field)):\(conflict.lostValue)}"
                try Self.applyPatch(db, entity, conflict.entityId, patch, now: at)
                target = conflict.entityId
            case .deleted:
                guard let body = conflict.entity else { throw LocalStoreError.notFound("last content") }
                try Self.recreate(db, entity, from: body, as: newId, eventType: eventType, now: at)
                target = newId.description
            }
            try db.execute(
                sql: "UPDATE sync_conflicts SET state = 'restored', resolution_unsent = 1 WHERE id = ?",
                arguments: [id])
            return target
        }
    }

    static func jsonString(_ text: String) -> String { FieldPatch.canonical(text) }

    /// Lays a patch over a local entity as an ordinary edit (it syncs like one).
    static func applyPatch(_ db: Database, _ entity: SyncEntity, _ id: String, _ patch: String, now: Date) throws {
        guard let uuid = UUIDv7(id) else { throw LocalStoreError.notFound(id) }
        switch entity {
        case .event:
            guard let event = try storedEvent(db, id: uuid) else {
                throw LocalStoreError.notFound("event (it was deleted; nothing to restore the value into)")
            }
            try replaceEvent(db, try FieldPatch.decode(EventUpdate.self, patch).apply(to: event), now: now)
        case .geofence:
            guard let old = try storedGeofence(db, id: uuid) else { throw LocalStoreError.notFound("geofence") }
            try replaceGeofence(db, try FieldPatch.decode(GeofenceUpdate.self, patch).apply(to: old), now: now)
        case .eventType:
            guard
                let old = try Row.fetchOne(db, sql: "SELECT * FROM local_event_types WHERE id = ?", arguments: [id])
                    .flatMap(eventType)?.value
            else { throw LocalStoreError.notFound("event type") }
            try replaceEventType(db, try FieldPatch.decode(EventTypeUpdate.self, patch).apply(to: old), now: now)
        case .propertyDefinition:
            guard let old = try storedDefinition(db, id: uuid) else {
                throw LocalStoreError.notFound("property definition")
            }
            var restored = try FieldPatch.decode(PropertyDefinitionUpdate.self, patch).apply(to: old)
            // A kind restored leaves a default of the other kind behind: it goes (its own conflict,
            // if it lost one, restores it once it fits).
            if (try? restored.validate()) == nil, restored.defaultValue != nil,
                patch.contains("property_type") || patch.contains("options")
            {
                restored.defaultValue = nil
            }
            try replaceDefinition(db, restored, now: now)
        }
    }

    /// Creates a deleted entity again from its last content, under a new id.
    static func recreate(
        _ db: Database, _ entity: SyncEntity, from body: String, as newId: UUIDv7, eventType: UUIDv7? = nil, now: Date
    ) throws {
        let decoder = TrendyJSON.decoder()
        let data = Data(body.utf8)
        switch entity {
        case .event:
            var event = try decoder.decode(Event.self, from: data)
            event.id = newId
            if let eventType { event.eventTypeId = eventType }
            guard try eventTypeExists(db, id: event.eventTypeId) else {
                // The way out names a type that exists (outside tester: "add a type and restore
                // again" could never work — a new type has a new id).
                throw LocalStoreError.conflict(
                    "its event type \(event.eventTypeId) was deleted too: restore it into a type that exists "
                        + "(`trendy conflicts restore <id> --type <name>`), or restore that type's own conflict "
                        + "first if there is one (`trendy conflicts --all`)")
            }
            try insertEvent(db, event, now: now)
        case .propertyDefinition:
            var definition = try decoder.decode(PropertyDefinition.self, from: data)
            definition.id = newId
            try insertDefinition(db, definition, now: now)
        case .geofence:
            var geofence = try decoder.decode(Geofence.self, from: data)
            geofence.id = newId
            let text = try encode(geofence)
            try db.execute(
                sql: "INSERT INTO local_geofences (id, body, is_active, sync_status) VALUES (?, ?, ?, 'pending')",
                arguments: [newId.description, text, geofence.isActive])
            try Outbox.enqueue(db, .geofence, newId.description, .create, payload: text, now: now)
        case .eventType:
            var type = try decoder.decode(EventType.self, from: data)
            type.id = newId
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM local_event_types WHERE name = ?", arguments: [type.name])
                == true
            {
                throw LocalStoreError.conflict("an event type named \"\(type.name)\" already exists")
            }
            try db.execute(
                sql:
                    "INSERT INTO local_event_types (id, name, color, icon, sync_status) VALUES (?, ?, ?, ?, 'pending')",
                arguments: [newId.description, type.name, type.color, type.icon])
            try Outbox.enqueue(db, .eventType, newId.description, .create, payload: try encode(type), now: now)
        }
    }

    public func explain(entityId: String) async throws -> SyncExplanation {
        let at = now()
        return try await db.read { db in
            var entity: SyncEntity?
            var local: String?
            var status: EntitySyncStatus?
            for kind in SyncEntity.allCases {
                if let row = try Row.fetchOne(
                    db, sql: "SELECT sync_status FROM \(Self.table(kind)) WHERE id = ?", arguments: [entityId])
                {
                    entity = kind
                    local = try Self.localJSON(db, kind, entityId)
                    status = EntitySyncStatus(rawValue: row["sync_status"])
                }
            }
            let changes = try Row.fetchAll(
                db, sql: "SELECT * FROM outbox WHERE entity_id = ? ORDER BY seq", arguments: [entityId]
            ).map { row -> ExplainedChange in
                if entity == nil { entity = SyncEntity(rawValue: row["entity"]) }
                let kind = MutationKind(rawValue: row["kind"]) ?? .update
                let payload: String? = row["payload"]
                let next: Double = row["next_attempt_at"]
                return ExplainedChange(
                    seq: row["seq"], kind: kind,
                    fields: kind == .update ? payload.map(FieldPatch.fields) ?? [] : [], payload: payload,
                    idempotencyKey: row["idempotency_key"], state: OutboxState(rawValue: row["state"]) ?? .pending,
                    attempts: row["attempts"], sent: row["sent"], baseVersion: row["base_version"],
                    lastError: row["last_error"], nextAttemptAt: next > 0 ? Date(timeIntervalSince1970: next) : nil)
            }
            let tombstone = try Row.fetchOne(
                db, sql: "SELECT cascade_of FROM tombstones WHERE entity_id = ?", arguments: [entityId])
            let tombstoned = tombstone != nil
            let deletedWithType: String? = tombstone?["cascade_of"]
            let mergedInto = try Self.mergedInto(db, entityId)
            let revivedAs = try Self.revivedAs(db, entityId)
            if entity == nil, mergedInto != nil || revivedAs != nil { entity = .event }
            let conflicts = try Row.fetchAll(
                db, sql: "SELECT body, state FROM sync_conflicts WHERE entity_id = ? ORDER BY detected_at",
                arguments: [entityId]
            ).map { row in
                StoredConflict(
                    conflict: try Self.decode(SyncConflict.self, row["body"]),
                    state: ConflictState(rawValue: row["state"]) ?? .open)
            }
            return SyncExplanation(
                entityId: entityId, entity: entity, local: local, syncStatus: status, tombstoned: tombstoned,
                changes: changes, cursor: try Self.cursor(db), conflicts: conflicts,
                nextStep: Self.nextStep(
                    changes, local: local, tombstoned: tombstoned, deletedWithType: deletedWithType,
                    mergedInto: mergedInto, revivedAs: revivedAs, now: at),
                deletedWithType: deletedWithType, mergedInto: mergedInto, revivedAs: revivedAs)
        }
    }

    static func nextStep(
        _ changes: [ExplainedChange], local: String?, tombstoned: Bool, deletedWithType: String? = nil,
        mergedInto: String? = nil, revivedAs: String? = nil, now: Date
    ) -> String {
        guard let first = changes.first(where: { $0.state != .failed }) else {
            if let failed = changes.first {
                return "nothing: its \(failed.kind.rawValue) was refused (\(failed.lastError ?? "no reason given")); "
                    + "edit or remove it, or run `trendy sync --retry-failed`"
            }
            if let mergedInto, local == nil {
                return "nothing: the server already had this event from another device (same type and time) as "
                    + "\(mergedInto); what was set here went to that event as edits (`trendy sync explain \(mergedInto)`)"
            }
            if let revivedAs, local == nil {
                return "nothing: the server had deleted this id when this install's create reached it (imported "
                    + "again after the delete), so it went again as \(revivedAs) (`trendy sync explain \(revivedAs)`)"
            }
            if let type = deletedWithType, local == nil {
                return "nothing to send; deleted here with its event type \(type): the server's copy goes with the "
                    + "type, unless another device moved it to another type first — then it comes back at the next pull"
            }
            if tombstoned, local == nil {
                return
                    "nothing to send; deleted here (the server has the delete, or never had it): no pull brings it back"
            }
            if local == nil { return "nothing: this install has no such entity" }
            return "nothing to send; server changes to it are applied as they arrive"
        }
        let what =
            first.kind == .update
            ? "send an update of \(first.fields.joined(separator: ", ")) based on cursor \(first.baseVersion.map(String.init) ?? "none (last write wins)")"
            : "send its \(first.kind.rawValue)"
        if let next = first.nextAttemptAt, next > now {
            return "\(what), not before \(ISO8601.format(next)) (attempt \(first.attempts + 1))"
        }
        if first.state == .inFlight { return "\(what) (in flight now)" }
        return "\(what) at the next pass" + (first.sent ? " (again, under the same key)" : "")
    }
}

extension ChangeEntity {
    /// The local kind (nil for onboarding and conflicts).
    var syncEntity: SyncEntity? {
        switch self {
        case .event: .event
        case .eventType: .eventType
        case .geofence: .geofence
        case .propertyDefinition: .propertyDefinition
        case .onboarding, .conflict: nil
        }
    }
}

extension SyncEntity {
    /// The feed's kind.
    var changeEntity: ChangeEntity {
        switch self {
        case .event: .event
        case .eventType: .eventType
        case .geofence: .geofence
        case .propertyDefinition: .propertyDefinition
        }
    }
}
