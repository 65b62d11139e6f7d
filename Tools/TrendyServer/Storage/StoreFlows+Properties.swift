import Foundation
import TrendyAPI
import TrendyModels

extension StoreRules {
    /// The issues of an event's property values that are new or changed against `before`, checked
    /// against its type's `definitions`. A key no definition has is kept as it is (another
    /// device's or an older client's value, or one whose definition was deleted): never refused,
    /// never dropped. A value that did not change is not checked again (its definition may have
    /// changed kind since), so editing an event's note never fails on an old value.
    static func propertyIssues(
        _ properties: [String: PropertyValue], before: [String: PropertyValue], definitions: [PropertyDefinition]
    ) -> [FieldIssue] {
        guard !properties.isEmpty, !definitions.isEmpty else { return [] }
        let byKey = Dictionary(definitions.map { ($0.key.lowercased(), $0) }, uniquingKeysWith: { a, _ in a })
        return properties.sorted { $0.key < $1.key }.flatMap { key, value -> [FieldIssue] in
            guard before[key] != value, let definition = byKey[key.lowercased()] else { return [] }
            return definition.issues(for: value, field: "properties.\(key)")
        }
    }
}

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
