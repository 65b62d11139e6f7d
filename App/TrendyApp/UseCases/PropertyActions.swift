import Foundation
import TrendyModels
import TrendySync

/// The custom-property use cases `trendy types props`, `trendy log --prop`, `trendy events edit
/// --prop`, the importer and the app share, written once: definitions are written to the local
/// store (and synced), and typed text (`shots=2`) is read by the definition of its key.
struct PropertyActions {
    let env: AppEnvironment

    /// Why a property cannot be used: no such key in the type (the keys it has are named).
    struct UnknownKey: Error, CustomStringConvertible {
        /// The key asked for.
        let key: String
        /// The type's name.
        let typeName: String
        /// The keys the type has.
        let known: [String]

        var description: String {
            known.isEmpty
                ? "\(typeName) has no properties; add one with `trendy types props add \(typeName) \(key) --type text`"
                : "\(typeName) has no property '\(key)' (it has: \(known.joined(separator: ", ")))"
        }
    }

    /// The type's definitions, in display order.
    func definitions(of typeId: UUIDv7) async throws -> [PropertyDefinition] {
        try await env.store.propertyDefinitions(ofType: typeId).map(\.value)
    }

    /// The definition of `key` (any case) in the type.
    func definition(_ key: String, of type: EventType) async throws -> PropertyDefinition {
        try Self.find(key, in: try await definitions(of: type.id), of: type)
    }

    /// The definition of `key` (any case) among `all`, the type's.
    static func find(_ key: String, in all: [PropertyDefinition], of type: EventType) throws -> PropertyDefinition {
        guard let found = all.first(where: { $0.key.lowercased() == key.lowercased() }) else {
            throw UnknownKey(key: key, typeName: type.name, known: all.map(\.key))
        }
        return found
    }

    /// Defines a property of the type. `defaultText` is read as the kind.
    func add(
        to type: EventType, key: String, kind: PropertyKind, label: String?, options: [String]?, defaultText: String?,
        order: Int?
    ) async throws -> PropertyDefinition {
        let existing = try await definitions(of: type.id)
        var definition = PropertyDefinition(
            id: env.ids.next(), eventTypeId: type.id, key: key, label: label?.trimmingWhiteSpace,
            propertyType: kind, options: options, displayOrder: order ?? (existing.map(\.displayOrder).max() ?? -1) + 1)
        if let defaultText { definition.defaultValue = try definition.parse(defaultText, field: "default_value") }
        try await env.store.createPropertyDefinition(definition)
        await env.sync.localWriteHappened()
        return definition
    }

    /// Changes the given fields of the property `key` of the type; the definition as saved.
    func edit(
        _ key: String, of type: EventType, label: String?, options: [String]?, defaultText: String?,
        clearDefault: Bool, order: Int?
    ) async throws -> PropertyDefinition {
        var definition = try await definition(key, of: type)
        if let label { definition.label = label.trimmingWhiteSpace }
        if let options { definition.options = options }
        if let order { definition.displayOrder = order }
        if clearDefault { definition.defaultValue = nil }
        if let defaultText { definition.defaultValue = try definition.parse(defaultText, field: "default_value") }
        try await env.store.updatePropertyDefinition(definition)
        await env.sync.localWriteHappened()
        return definition
    }

    /// Removes the property `key` of the type (events keep their values under it).
    func remove(_ key: String, of type: EventType) async throws -> PropertyDefinition {
        let definition = try await definition(key, of: type)
        try await env.store.deletePropertyDefinition(id: definition.id)
        await env.sync.localWriteHappened()
        return definition
    }

    /// `key=value` texts to find events by: each read by the definition of its key (of the type
    /// when given, else of any type; the key as written when no type defines it: as text).
    func wanted(_ assignments: [String], typeId: UUIDv7?) async throws -> [String: PropertyValue] {
        guard !assignments.isEmpty else { return [:] }
        let all = try await env.store.propertyDefinitions(ofType: typeId).map(\.value)
        var wanted: [String: PropertyValue] = [:]
        for assignment in assignments {
            let (key, text) = try Self.split(assignment)
            if let definition = all.first(where: { $0.key.lowercased() == key.lowercased() }) {
                wanted[definition.key] = try definition.parse(text)
            } else {
                wanted[key] = .text(text)
            }
        }
        return wanted
    }

    /// `key=value` texts read by the type's definitions and laid over `properties`; `unset` keys
    /// are removed first. With `defaults`, a defined property with a default that is neither
    /// given nor already there gets it (a new event).
    func values(
        _ assignments: [String], unset: [String] = [], over properties: [String: PropertyValue] = [:],
        of type: EventType, defaults: Bool
    ) async throws -> [String: PropertyValue] {
        let all = try await definitions(of: type.id)
        var result = properties
        for key in unset {
            // The key as written first, then in another case.
            let stored = result[key] != nil ? key : result.keys.first { $0.lowercased() == key.lowercased() }
            guard let stored else {
                throw ValidationError(
                    entity: "Event",
                    issues: [
                        FieldIssue(
                            field: "properties.\(key)",
                            reason: "the event has no value for \(key)"
                                + (result.isEmpty ? "" : " (it has: \(result.keys.sorted().joined(separator: ", ")))"))
                    ])
            }
            result[stored] = nil
        }
        for assignment in assignments {
            let (key, text) = try Self.split(assignment)
            let definition = try Self.find(key, in: all, of: type)
            result[definition.key] = try definition.parse(text)
        }
        if defaults {
            // A default that does not fit its definition (left by edits on two devices) is not
            // used; at most 50 values (the event's limit).
            for definition in all where result[definition.key] == nil && result.count < 50 {
                if let value = definition.defaultValue, definition.issues(for: value).isEmpty {
                    result[definition.key] = value
                }
            }
        }
        return result
    }

    /// `key=value` as its key and value (the value may hold `=`); a text without a key is refused.
    static func split(_ assignment: String) throws -> (key: String, value: String) {
        guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
            throw ValidationError(
                entity: "Event", issues: [FieldIssue(field: "properties", reason: "'\(assignment)' is not key=value")])
        }
        return (String(assignment[..<equals]), String(assignment[assignment.index(after: equals)...]))
    }
}
