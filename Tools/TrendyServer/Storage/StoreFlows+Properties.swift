import Foundation
import TrendyAPI
import TrendyModels

extension StoreFlows {
    /// A property definition's create: an idempotent retry answers what is stored; its type must
    /// be the user's (else 404, as the path names it), and its key free in that type (case-insensitively: a conflict, which a
    /// device answers by adopting the definition it raced with, as with types, D36).
    static func createPropertyDefinition(
        _ definition: PropertyDefinition, facts: CreateFacts<PropertyDefinition>, typeKnown: Bool, keyTaken: Bool,
        typeHas count: Int, now: Date
    ) throws -> StorePlan<(Timestamped<PropertyDefinition>, Bool)> {
        let id = definition.id.description
        if let stored = try existing(facts, id: id) { return StorePlan(writes: [], answer: (stored, false)) }
        guard typeKnown else { throw StoreError.notFound("event type") }
        if count >= PropertyDefinition.maximumPerType {
            throw StoreError.validation([
                FieldIssue(
                    field: "event_type_id",
                    reason:
                        "a type has at most \(PropertyDefinition.maximumPerType) properties (an event holds 50 values)")
            ])
        }
        if keyTaken {
            throw StoreError.conflict("this event type already has a property with the key \"\(definition.key)\"")
        }
        let stored = Timestamped(definition, createdAt: now, updatedAt: now)
        let body = try StoreRules.encode(stored)
        return StorePlan(
            writes: [
                .row(.insertPropertyDefinition(definition, body: body)),
                .change(.propertyDefinition, id: id, .create, data: body),
            ], answer: (stored, true))
    }

    /// The refusal a definition's edit earns: a key is never changed (events keep their values
    /// under it; a new key is a new definition).
    static func refusal(
        _ update: PropertyDefinitionUpdate, edited: (before: PropertyDefinition, after: PropertyDefinition)?
    ) -> StoreError? {
        guard let key = update.key.value, let before = edited?.before, key != before.key else { return nil }
        return .validation([
            FieldIssue(field: "key", reason: "cannot change (it is \"\(before.key)\"): add a property with the new key")
        ])
    }
}
