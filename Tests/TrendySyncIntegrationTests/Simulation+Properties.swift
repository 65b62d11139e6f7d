import Foundation
import TrendyAPI
import TrendyModels
import TrendySync
import TrendySyncLive

/// Property definitions and values in the simulation (issue 33): devices define the same few
/// keys of the same types (so two devices often define one key at once), relabel them, add
/// options, change defaults, delete them, and set and unset values on events.
extension Simulation {
    /// The keys the devices define, each always of one kind (a kind change is a person's
    /// decision about values already written, not something to draw at random).
    static let propertyKeys: [(String, PropertyKind, [String]?)] = [
        ("shots", .number, nil), ("milk", .select, ["oat", "whole"]), ("mood", .text, nil),
        ("brewed", .duration, nil), ("decaf", .boolean, nil),
    ]

    mutating func propertyInt(_ n: Int) -> Int { Int(propertyRng.next() % UInt64(n)) }
    mutating func propertyChance(_ p: Double) -> Bool { Double(propertyRng.next() % 10_000) / 10_000 < p }

    /// The canonical text of an event's values (what the snapshot compares), "∅" for none.
    static func props(_ properties: [String: PropertyValue]) -> String {
        guard !properties.isEmpty, let object = try? FieldPatch.object(properties) else { return "∅" }
        return FieldPatch.canonical(object)
    }

    /// A definition's default as canonical bare JSON, "∅" for none.
    static func bare(_ value: PropertyValue?) -> String {
        guard let value else { return "∅" }
        let text = (try? TrendyJSON.encoder().encode(BareValue(value))).map { String(decoding: $0, as: UTF8.self) }
        let any = text.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8), options: .fragmentsAllowed) }
        return FieldPatch.canonical(any)
    }

    /// A value of the definition's kind, drawn.
    mutating func value(for d: PropertyDefinition) -> PropertyValue {
        switch d.propertyType {
        case .number: .number(Double(propertyInt(6)))
        case .select: .select((d.options ?? ["oat"])[propertyInt(d.options?.count ?? 1)])
        case .duration: .duration(Double(60 * propertyInt(10)))
        case .boolean: .boolean(propertyChance(0.5))
        default: .text("m\(propertyInt(50))")
        }
    }

    mutating func propertyStep(_ d: Device) async throws {
        let h = harness
        let types = try await d.store.eventTypes().map(\.value)
        let definitions = try await d.store.propertyDefinitions(ofType: nil).map(\.value)
        switch propertyInt(10) {
        case 0..<3:
            guard let type = types.randomElement(using: &propertyRng) else { return }
            let (key, kind, options) = Self.propertyKeys[propertyInt(Self.propertyKeys.count)]
            let definition = PropertyDefinition(
                id: h.ids.next(), eventTypeId: type.id, key: key, label: "\(key)-\(d.name)", propertyType: kind,
                options: options)
            definedProperties[definition.id.description] = (type.id.description, key)
            try await act(d, "defined \(key) of \(type.id) as \(definition.id)") {
                try await d.store.createPropertyDefinition(definition)
            }
        case 3..<5:
            guard var definition = definitions.randomElement(using: &propertyRng) else { return }
            switch propertyInt(3) {
            case 0: definition.label = "\(definition.key)-\(d.name)-\(step)"
            case 1 where definition.propertyType == .select:
                // Options only grow: a value chosen elsewhere stays an option.
                definition.options = (definition.options ?? []) + ["o\(step)\(d.name)"]
            default: definition.defaultValue = propertyChance(0.3) ? nil : value(for: definition)
            }
            let edited = definition
            try await act(d, "edited property \(definition.id)") { try await d.store.updatePropertyDefinition(edited) }
        case 5:
            guard let definition = definitions.randomElement(using: &propertyRng) else { return }
            try await act(d, "deleted property \(definition.id)") {
                try await d.store.deletePropertyDefinition(id: definition.id)
            }
        default:
            let events = try await d.store.events(limit: 100_000, since: nil).map(\.value)
            guard var event = events.randomElement(using: &propertyRng) else { return }
            let own = definitions.filter { $0.eventTypeId == event.eventTypeId }
            if let key = event.properties.keys.sorted().randomElement(using: &propertyRng), propertyChance(0.25) {
                event.properties[key] = nil
            } else if let definition = own.randomElement(using: &propertyRng) {
                event.properties[definition.key] = value(for: definition)
            } else {
                return
            }
            let edited = event
            try await act(d, "set values of \(event.id)") { try await d.store.updateEvent(edited) }
        }
    }

    /// A definition of `d` it no longer shows, while it shows another of the same type and key,
    /// was adopted (the server had that one first): the person's values of it are their values
    /// of the adopted one now (current there, or kept as conflicts of it).
    mutating func adoptDefinitions(_ d: Device, shown: Snapshot) {
        let prefix = "\(d.name)|"
        for key in intents.keys.sorted() where key.hasPrefix(prefix) {
            let parts = key.dropFirst(prefix.count).split(separator: "/")
            let id = String(parts[0])
            guard shown[id] == nil, !deletedIds.contains(id), let (type, propertyKey) = definedProperties[id],
                let into = shown.first(where: { $0.value["key"] == propertyKey && $0.value["type"] == type })?.key,
                into != id
            else { continue }
            let moved = "\(prefix)\(into)/\(parts[1])"
            d.seen["\(into)/\(parts[1])", default: []].formUnion(d.seen["\(id)/\(parts[1])"] ?? [])
            if (intents[moved]?.order ?? -1) < (intents[key]?.order ?? 0) { intents[moved] = intents[key] }
            adoptedKeys.insert(moved)
            intents[key] = nil
            // Another device that changed the adopted definition's field later, from the value
            // this device's now stands for (it had it in front of it), knowingly replaced it.
            if let mine = intents[moved] {
                let target = "\(into)/\(parts[1])"
                for other in devices where other !== d {
                    if let theirs = intents["\(other.name)|\(target)"], theirs.order > mine.order,
                        other.seen[target]?.contains(mine.value) == true
                    {
                        intents[moved]?.superseded = true
                    }
                    // Deleted by hand by a device that had this very value in front of it, before
                    // or after the adoption (seed 8,076: both devices defined `milk` with the same
                    // options; the one whose definition the server kept deleted it).
                    if deletedBy[into] == other.name, other.seen[target]?.contains(mine.value) == true {
                        intents[moved]?.superseded = true
                    }
                }
            }
            definedProperties[into] = definedProperties[into] ?? (type, propertyKey)
            log.append("\(step) \(d.name) sees \(id) adopted as \(into)")
        }
    }

    /// The definition the server has for a device's own definition `id` that it adopted
    /// (another device defined the key of the type first), if it did: what the device wrote to
    /// its own is current there or kept as a conflict of it.
    func adopted(_ id: String, server: Snapshot) -> String? {
        // A definition deleted by hand is not adopted by a later one of the same key: its edits
        // are kept as the delete's conflict, under its own id.
        guard server[id] == nil, !deletedIds.contains(id), let (type, key) = definedProperties[id] else { return nil }
        return server.first { $0.value["key"] == key && $0.value["type"] == type }?.key
    }
}
