import Foundation
import GRDB
import TrendyAPI
import TrendyModels

extension SQLiteServerStore {
    static func fetchPropertyDefinition(_ db: Database, userId: String, id: String) throws
        -> Timestamped<PropertyDefinition>?
    {
        try String.fetchOne(
            db, sql: "SELECT body FROM property_definitions WHERE id = ? AND user_id = ?", arguments: [id, userId]
        ).map { try StoreRules.decode(Timestamped<PropertyDefinition>.self, $0) }
    }

    /// The definitions of one of the user's types, inside the caller's transaction.
    static func definitions(_ db: Database, userId: String, typeId: String) throws -> [PropertyDefinition] {
        try String.fetchAll(
            db.cachedStatement(
                sql: "SELECT body FROM property_definitions WHERE user_id = ? AND event_type_id = ?"),
            arguments: [userId, typeId]
        ).map { try StoreRules.decode(Timestamped<PropertyDefinition>.self, $0).value }
    }

    public func listPropertyDefinitions(userId: String, typeId: String?) async throws
        -> [Timestamped<PropertyDefinition>]
    {
        try await db.read { db in
            let order = "ORDER BY event_type_id, display_order, key_lower"
            let bodies: [String]
            if let typeId {
                bodies = try String.fetchAll(
                    db, sql: "SELECT body FROM property_definitions WHERE user_id = ? AND event_type_id = ? \(order)",
                    arguments: [userId, typeId])
            } else {
                bodies = try String.fetchAll(
                    db, sql: "SELECT body FROM property_definitions WHERE user_id = ? \(order)", arguments: [userId])
            }
            return try bodies.map { try StoreRules.decode(Timestamped<PropertyDefinition>.self, $0) }
        }
    }

    public func createPropertyDefinition(userId: String, _ definition: PropertyDefinition, now: Date) async throws
        -> (Timestamped<PropertyDefinition>, Bool)
    {
        try await db.write { db in
            let id = definition.id.description
            let facts = try Self.createFacts(
                db, userId: userId, entity: .propertyDefinition, table: "property_definitions", id: id,
                fetch: Self.fetchPropertyDefinition)
            let typeId = definition.eventTypeId.description
            let keyTaken =
                try Bool.fetchOne(
                    db, sql: "SELECT 1 FROM property_definitions WHERE event_type_id = ? AND key_lower = ? AND id != ?",
                    arguments: [typeId, definition.key.lowercased(), id]) ?? false
            let plan = try StoreFlows.createPropertyDefinition(
                definition, facts: facts, typeKnown: !(try Self.knownTypes(db, userId: userId, [typeId]).isEmpty),
                keyTaken: keyTaken,
                typeHas: try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM property_definitions WHERE event_type_id = ?", arguments: [typeId])
                    ?? 0, now: now)
            try Self.write(plan.writes, db, userId: userId, now: now)
            return plan.answer
        }
    }

    public func propertyDefinition(userId: String, id: String) async throws -> Timestamped<PropertyDefinition>? {
        try await db.read { db in try Self.fetchPropertyDefinition(db, userId: userId, id: id) }
    }

    public func updatePropertyDefinition(
        userId: String, id: String, _ update: PropertyDefinitionUpdate, base: ChangeBase?, now: Date
    ) async throws -> Timestamped<PropertyDefinition> {
        try await edit(
            .propertyDefinition, id: id, what: "property definition", userId: userId, update, base: base, now: now,
            fetch: Self.fetchPropertyDefinition,
            refusal: { _, _, edited in StoreFlows.refusal(update, edited: edited) },
            row: { _, body in .updatePropertyDefinition(id: id, body: body) })
    }

    public func deletePropertyDefinition(userId: String, id: String, base: ChangeBase?, now: Date) async throws {
        try await delete(
            .propertyDefinition, id: id, what: "property definition", userId: userId,
            as: PropertyDefinitionUpdate.self, base: base, now: now, fetch: Self.fetchPropertyDefinition,
            row: .deletePropertyDefinition(id: id))
    }
}
