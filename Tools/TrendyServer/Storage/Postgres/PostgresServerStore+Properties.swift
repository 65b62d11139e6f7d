import Foundation
import PostgresNIO
import TrendyAPI
import TrendyModels

extension PostgresServerStore {
    static func fetchPropertyDefinition(_ s: PostgresSession, userId: String, id: String) async throws
        -> Timestamped<PropertyDefinition>?
    {
        try await s.value(
            "SELECT body FROM property_definitions WHERE id = \(id) AND user_id = \(userId)", as: String.self
        ).map { try StoreRules.decode(Timestamped<PropertyDefinition>.self, $0) }
    }

    /// The definitions of one of the user's types, inside the caller's transaction.
    static func definitions(_ s: PostgresSession, userId: String, typeId: String) async throws
        -> [PropertyDefinition]
    {
        try await s.column(
            "SELECT body FROM property_definitions WHERE user_id = \(userId) AND event_type_id = \(typeId)",
            as: String.self
        ).map { try StoreRules.decode(Timestamped<PropertyDefinition>.self, $0).value }
    }

    public func listPropertyDefinitions(userId: String, typeId: String?) async throws
        -> [Timestamped<PropertyDefinition>]
    {
        try await database.read { s in
            let bodies: [String]
            if let typeId {
                bodies = try await s.column(
                    """
                    SELECT body FROM property_definitions WHERE user_id = \(userId) AND event_type_id = \(typeId)
                    ORDER BY event_type_id, display_order, key_lower
                    """, as: String.self)
            } else {
                bodies = try await s.column(
                    """
                    SELECT body FROM property_definitions WHERE user_id = \(userId)
                    ORDER BY event_type_id, display_order, key_lower
                    """, as: String.self)
            }
            return try bodies.map { try StoreRules.decode(Timestamped<PropertyDefinition>.self, $0) }
        }
    }

    public func createPropertyDefinition(userId: String, _ definition: PropertyDefinition, now: Date) async throws
        -> (Timestamped<PropertyDefinition>, Bool)
    {
        try await database.transaction(feedOf: userId) { s in
            let id = definition.id.description
            let facts = try await Self.createFacts(
                s, userId: userId, entity: .propertyDefinition, table: "property_definitions", id: id,
                fetch: Self.fetchPropertyDefinition)
            let typeId = definition.eventTypeId.description
            let keyTaken =
                try await s.value(
                    """
                    SELECT 1 FROM property_definitions
                    WHERE event_type_id = \(typeId) AND key_lower = \(definition.key.lowercased()) AND id != \(id)
                    """, as: Int32.self) != nil
            let plan = try StoreFlows.createPropertyDefinition(
                definition, facts: facts,
                typeKnown: !(try await Self.knownTypes(s, userId: userId, [typeId]).isEmpty), keyTaken: keyTaken,
                typeHas: Int(
                    try await s.value(
                        "SELECT COUNT(*) FROM property_definitions WHERE event_type_id = \(typeId)", as: Int64.self)
                        ?? 0), now: now)
            try await Self.write(plan.writes, s, userId: userId, now: now)
            return plan.answer
        }
    }

    public func propertyDefinition(userId: String, id: String) async throws -> Timestamped<PropertyDefinition>? {
        try await database.read { s in try await Self.fetchPropertyDefinition(s, userId: userId, id: id) }
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
