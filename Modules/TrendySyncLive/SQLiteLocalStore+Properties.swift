import Foundation
import GRDB
import TrendyAPI
import TrendyModels
import TrendySync

/// Property definitions on the device: each write with its outbox entry, like every entity; and
/// the check of an event's values against its type's definitions.
extension SQLiteLocalStore {
    static func storedDefinition(_ db: Database, id: UUIDv7) throws -> PropertyDefinition? {
        try String.fetchOne(
            db.cachedStatement(sql: "SELECT body FROM local_property_definitions WHERE id = ?"),
            arguments: [id.description]
        ).map { try decode(PropertyDefinition.self, $0) }
    }

    /// The definitions of a type, inside the caller's transaction.
    static func definitions(_ db: Database, ofType typeId: String) throws -> [PropertyDefinition] {
        try String.fetchAll(
            db.cachedStatement(sql: "SELECT body FROM local_property_definitions WHERE event_type_id = ?"),
            arguments: [typeId]
        ).map { try decode(PropertyDefinition.self, $0) }
    }

    /// Refuses an event whose new or changed property values do not fit its type's definitions
    /// (the server's rule, ``PropertyDefinition/issues(of:before:in:)``). A key no definition has
    /// is kept as it is; an unchanged value is not checked again.
    static func requireProperties(_ db: Database, _ event: Event, before: [String: PropertyValue]) throws {
        guard !event.properties.isEmpty, event.properties != before else { return }
        let issues = PropertyDefinition.issues(
            of: event.properties, before: before, in: try definitions(db, ofType: event.eventTypeId.description))
        if !issues.isEmpty { throw LocalStoreError.invalid(ValidationError(entity: "Event", issues: issues)) }
    }

    /// Inserts a definition and its create inside the caller's transaction: its type must be here
    /// and must not have the key already.
    static func insertDefinition(_ db: Database, _ definition: PropertyDefinition, now: Date) throws {
        do { try definition.validate() } catch { throw LocalStoreError.invalid(error) }
        let typeId = definition.eventTypeId.description
        guard try Bool.fetchOne(db, sql: "SELECT 1 FROM local_event_types WHERE id = ?", arguments: [typeId]) == true
        else { throw LocalStoreError.notFound("event type \(typeId)") }
        let existing = try definitions(db, ofType: typeId)
        if existing.count >= PropertyDefinition.maximumPerType {
            throw LocalStoreError.invalid(
                ValidationError(
                    entity: "PropertyDefinition",
                    issues: [
                        FieldIssue(
                            field: "event_type_id",
                            reason: "a type has at most \(PropertyDefinition.maximumPerType) properties")
                    ]))
        }
        if existing.contains(where: { $0.key.lowercased() == definition.key.lowercased() }) {
            throw LocalStoreError.conflict("this type already has a property named \(definition.key)")
        }
        let body = try encode(definition)
        try db.execute(
            sql: """
                INSERT INTO local_property_definitions (id, event_type_id, body, sync_status)
                VALUES (?, ?, ?, 'pending')
                """, arguments: [definition.id.description, typeId, body])
        try Outbox.enqueue(db, .propertyDefinition, definition.id.description, .create, payload: body, now: now)
    }

    /// Replaces a definition's fields inside the caller's transaction and queues the fields that
    /// changed; its key and type stay.
    static func replaceDefinition(_ db: Database, _ definition: PropertyDefinition, now: Date) throws {
        do { try definition.validate() } catch { throw LocalStoreError.invalid(error) }
        guard let old = try storedDefinition(db, id: definition.id) else {
            throw LocalStoreError.notFound("property definition")
        }
        var kept = definition
        kept.key = old.key
        kept.eventTypeId = old.eventTypeId
        guard let patch = try FieldPatch.diff(PropertyDefinitionUpdate.self, from: old, to: kept) else { return }
        let body = try encode(kept)
        try db.execute(
            sql: "UPDATE local_property_definitions SET body = ?, sync_status = 'pending' WHERE id = ?",
            arguments: [body, kept.id.description])
        try Outbox.enqueue(
            db, .propertyDefinition, kept.id.description, .update, payload: patch, whole: body, now: now)
    }

    /// Drops a deleted type's definitions and their waiting changes (the server's cascade takes
    /// its copies; nothing of them is to be sent).
    /// Each leaves a tombstone: a create of one already on the wire that the server refuses
    /// (its type was gone there first) is then dropped, not surfaced as failed.
    /// `keep`: the type was deleted elsewhere — a definition made or changed here and not yet on
    /// the server is kept as a `deleted` conflict (listed, never dropped without a trace).
    static func dropDefinitions(_ db: Database, ofType typeId: String, keep: Bool = false) throws {
        for id in try String.fetchAll(
            db, sql: "SELECT id FROM local_property_definitions WHERE event_type_id = ?", arguments: [typeId])
        {
            if keep {
                try keepEditsOfDeleted(db, .propertyDefinition, id)
                try keepUnsentCreate(db, id)
            }
            try Outbox.tombstone(db, .propertyDefinition, id, cascadeOf: typeId)
        }
        try db.execute(
            sql: """
                DELETE FROM outbox WHERE entity = 'property_definition' AND state != 'in_flight'
                AND entity_id IN (SELECT id FROM local_property_definitions WHERE event_type_id = ?)
                """, arguments: [typeId])
        try db.execute(sql: "DELETE FROM local_property_definitions WHERE event_type_id = ?", arguments: [typeId])
    }

    /// A definition created here and never taken by the server, whose type went elsewhere: kept
    /// as a `deleted` conflict with every field it was made with.
    static func keepUnsentCreate(_ db: Database, _ id: String) throws {
        guard
            let payload = try String.fetchOne(
                db,
                sql: """
                    SELECT payload FROM outbox WHERE entity = 'property_definition' AND entity_id = ?
                    AND kind = 'create' AND state != 'in_flight' AND payload IS NOT NULL
                    """, arguments: [id])
        else { return }
        let definition = try decode(PropertyDefinition.self, payload)
        let now = Date()
        try keep(
            SyncConflict(
                id: UUID().uuidString.lowercased(), kind: .deleted, entityType: .propertyDefinition, entityId: id,
                field: nil, keptValue: nil,
                lostValue: FieldPatch.text(try FieldPatch.object(PropertyDefinitionUpdate(everyFieldOf: definition))),
                keptBy: "another device", keptAt: now, lostBy: try Outbox.deviceId(db), lostAt: now, detectedAt: now,
                entity: payload), db)
    }

    public func propertyDefinitions(ofType typeId: UUIDv7?) async throws -> [LocalRecord<PropertyDefinition>] {
        try await db.read { db in
            let rows =
                if let typeId {
                    try Row.fetchAll(
                        db, sql: "SELECT body, sync_status FROM local_property_definitions WHERE event_type_id = ?",
                        arguments: [typeId.description])
                } else {
                    try Row.fetchAll(db, sql: "SELECT body, sync_status FROM local_property_definitions")
                }
            return try rows.map { row in
                LocalRecord(
                    try Self.decode(PropertyDefinition.self, row["body"]),
                    syncStatus: EntitySyncStatus(rawValue: row["sync_status"]) ?? .pending)
            }.sorted {
                ($0.value.displayOrder, $0.value.key.lowercased()) < ($1.value.displayOrder, $1.value.key.lowercased())
            }
        }
    }

    public func propertyKeysInUse(ofType typeId: UUIDv7?) async throws -> [String] {
        try await db.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT DISTINCT j.key FROM local_events AS e, json_each(e.body, '$.properties') AS j
                    WHERE ?1 IS NULL OR e.event_type_id = ?1 ORDER BY j.key
                    """, arguments: [typeId?.description])
        }
    }

    public func createPropertyDefinition(_ definition: PropertyDefinition) async throws {
        let at = now()
        try await db.write { db in try Self.insertDefinition(db, definition, now: at) }
    }

    public func updatePropertyDefinition(_ definition: PropertyDefinition) async throws {
        let at = now()
        try await db.write { db in try Self.replaceDefinition(db, definition, now: at) }
    }

    public func deletePropertyDefinition(id: UUIDv7) async throws {
        let at = now()
        try await db.write { db in
            try db.execute(sql: "DELETE FROM local_property_definitions WHERE id = ?", arguments: [id.description])
            guard db.changesCount > 0 else { throw LocalStoreError.notFound("property definition") }
            try Outbox.tombstone(db, .propertyDefinition, id.description)
            try Outbox.enqueue(db, .propertyDefinition, id.description, .delete, payload: nil, now: at)
        }
    }

    /// A definition's edit the server refused (invalid against what another device changed): its
    /// fields are kept as conflicts of the definition (restorable once they fit), the entry goes,
    /// and the server's copy, with any later change still waiting laid over it, is what shows —
    /// never a merged state the server refuses, which made every log of the type fail.
    func undoRefusedDefinitionEdit(_ entry: OutboxEntry, server: PropertyDefinition?, reason: String) async throws {
        let at = now()
        try await db.write { db in
            try db.execute(sql: "DELETE FROM outbox WHERE seq = ?", arguments: [entry.seq])
            guard let server else {
                try Self.applyDelete(db, .propertyDefinition, entry.entityId)
                return
            }
            try Self.keepLostFields(db, FieldPatch.object(text: entry.payload ?? "{}"), of: server, at: at)
            let writer = try ServerStateWriter(db, keys: [(SyncEntity.propertyDefinition, entry.entityId)])
            _ = try writer.upsert(.propertyDefinition(Timestamped(server, createdAt: at, updatedAt: at)))
        }
    }

    /// The server has a property of this key in the type under another id (another device
    /// defined it first): that one is stored as synced and this device's goes with every change
    /// to it. Events keep their values by key, so nothing else moves. The server's label, kind,
    /// options and default win, and each of this device's that differs is kept as a conflict of
    /// the adopted definition, which `trendy conflicts restore` lays over it (D53).
    func adoptPropertyDefinition(_ entry: OutboxEntry, as server: PropertyDefinition) async throws {
        let at = now()
        try await db.write { db in
            let local = try Self.storedDefinition(db, id: UUIDv7(entry.entityId) ?? server.id)
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO local_property_definitions (id, event_type_id, body, sync_status)
                    VALUES (?, ?, ?, 'synced')
                    """, arguments: [server.id.description, server.eventTypeId.description, try Self.encode(server)])
            try db.execute(
                sql: "DELETE FROM outbox WHERE entity = 'property_definition' AND entity_id = ?",
                arguments: [entry.entityId])
            try db.execute(sql: "DELETE FROM local_property_definitions WHERE id = ?", arguments: [entry.entityId])
            guard let local else { return }
            var mine = try FieldPatch.object(PropertyDefinitionUpdate(everyFieldOf: local))
            mine["key"] = nil
            try Self.keepLostFields(db, mine, of: server, at: at)
        }
    }

    /// Each field of `lost` (a patch of this device's) that differs from `server`'s, kept as a
    /// `field` conflict of the server's definition: restorable, never dropped without a trace.
    static func keepLostFields(_ db: Database, _ lost: [String: Any], of server: PropertyDefinition, at: Date) throws {
        let theirs = try FieldPatch.object(PropertyDefinitionUpdate(everyFieldOf: server))
        let device = try Outbox.deviceId(db)
        let body = try encode(server)
        for field in lost.keys.sorted() {
            let (mine, kept) = (FieldPatch.canonical(lost[field]), FieldPatch.canonical(theirs[field]))
            guard mine != kept else { continue }
            try keep(
                SyncConflict(
                    id: UUID().uuidString.lowercased(), kind: .field, entityType: .propertyDefinition,
                    entityId: server.id.description, field: field, keptValue: kept, lostValue: mine,
                    keptBy: "another device", keptAt: at, lostBy: device, lostAt: at, detectedAt: at, entity: body),
                db)
        }
    }
}
