import Foundation
import TrendyAPI
import TrendyModels
import TrendySync

/// A conflict in words, for the app's account tab and `trendy conflicts`: what it is about (an
/// event's type and time, a type's or place's name), the field, the kept and the lost value (a
/// type as its name, a time as a time, text quoted), and who — "this device" or "another device",
/// never a hex id or JSON. Pure once its names are read (``load(_:conflicts:)``).
struct ConflictWords: Sendable {
    var typeNames: [UUIDv7: String]
    /// What each entity is, in words, by id.
    var subjects: [String: String]
    /// This install's device id.
    var deviceId: String
    var timeZone: TimeZone = .current

    /// A conflict in words: what it is about, then what was kept and what lost, by whom and when.
    func lines(_ c: SyncConflict) -> [String] {
        let subject = subjects[c.entityId] ?? lastName(c) ?? Self.unnamed(c.entityType)
        let kept = "\(device(c.keptBy)), \(AppHelp.when(c.keptAt, timeZone))"
        let lost = "\(device(c.lostBy)), \(AppHelp.when(c.lostAt, timeZone))"
        switch c.kind {
        case .field:
            let field = Self.fieldName(c.field ?? "?")
            return [
                "\(subject): its \(field)",
                "kept: \(value(c.keptValue, c.field)) (\(kept))",
                "lost: \(value(c.lostValue, c.field)) (\(lost))",
            ]
        case .deleted:
            return ["\(subject): deleted (\(kept))", "lost edits: \(edits(c.lostValue)) (\(lost))"]
        }
    }

    /// An entity no longer here, by its kind: "An event", "A type", "A place".
    static func unnamed(_ entity: ChangeEntity) -> String {
        switch entity {
        case .event: "An event"
        case .eventType: "A type"
        case .geofence: "A place"
        case .propertyDefinition: "A property"
        default: "Your \(entity.rawValue.replacingOccurrences(of: "_", with: " "))"
        }
    }

    /// An entity no longer here, by its last content (a `deleted` conflict keeps it): "Coffee, Thu
    /// 26 Nov 2026 08:00", "The type Coffee", "The place Gym", "The property Coffee's shots". An
    /// outside tester saw only "An event" and could not tell several deleted events apart.
    func lastName(_ c: SyncConflict) -> String? {
        guard let body = c.entity.map({ Data($0.utf8) }) else { return nil }
        let decoder = TrendyJSON.decoder()
        switch c.entityType {
        case .event:
            guard let e = try? decoder.decode(Event.self, from: body) else { return nil }
            return "\(typeNames[e.eventTypeId] ?? "An event"), \(AppHelp.when(e.timestamp, timeZone))"
        case .eventType:
            return (try? decoder.decode(EventType.self, from: body)).map { "The type \($0.name)" }
        case .geofence:
            return (try? decoder.decode(Geofence.self, from: body)).map { "The place \($0.name)" }
        case .propertyDefinition:
            guard let d = try? decoder.decode(PropertyDefinition.self, from: body) else { return nil }
            return "The property \(typeNames[d.eventTypeId] ?? "a deleted type")'s \(d.key)"
        default:
            return nil
        }
    }

    func device(_ id: String) -> String { id == deviceId ? "this device" : "another device" }

    static func fieldName(_ field: String) -> String {
        switch field {
        case "notes": "note"
        case "event_type_id", "entry_event_type_id": "type"
        case "timestamp": "time"
        case "property_type": "kind"
        case "default_value": "default"
        case "display_order": "order"
        case "end_date": "end time"
        default: field.replacingOccurrences(of: "_", with: " ")
        }
    }

    /// A JSON value in words: text as it is, a type's id as its name, a time as a time.
    func value(_ json: String?, _ field: String?) -> String {
        guard let json,
            let parsed = try? JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)
        else { return json.map { "“\($0)”" } ?? "nothing" }
        switch parsed {
        case is NSNull: return "nothing"
        case let text as String:
            if let id = UUIDv7(text), let name = typeNames[id] { return name }
            if field == "timestamp" || field == "end_date", let date = TrendyJSON.parseDate(text) {
                return AppHelp.when(date, timeZone)
            }
            return "“\(text)”"
        case let number as NSNumber: return number.stringValue
        default: return json
        }
    }

    /// A deleted entity's lost edits ({"notes": "x"}) as "note “x”".
    func edits(_ json: String) -> String {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] else {
            return json
        }
        return object.keys.sorted().map { key in
            let raw = (try? JSONSerialization.data(withJSONObject: object[key] ?? NSNull(), options: .fragmentsAllowed))
                .map { String(decoding: $0, as: UTF8.self) }
            return "\(Self.fieldName(key)) \(value(raw, key))"
        }.joined(separator: ", ")
    }

    /// The words for `conflicts`: the names of what they are about, read from the store.
    static func load(
        _ store: any LocalStore, ids: [String], typeNames: [UUIDv7: String]? = nil, timeZone: TimeZone = .current
    ) async throws -> ConflictWords {
        var names = typeNames ?? [:]
        if typeNames == nil {
            for type in try await store.eventTypes().map(\.value) { names[type.id] = type.name }
        }
        var words = ConflictWords(
            typeNames: names, subjects: [:], deviceId: try await store.deviceId(), timeZone: timeZone)
        var places: [UUIDv7: String]?
        var properties: [UUIDv7: String]?
        for id in Set(ids) {
            guard let uuid = UUIDv7(id) else { continue }
            if let event = try await store.event(id: uuid)?.value {
                words.subjects[id] =
                    "\(names[event.eventTypeId] ?? "An event"), \(AppHelp.when(event.timestamp, timeZone))"
            } else if let type = names[uuid] {
                words.subjects[id] = "The type \(type)"
            } else {
                // The places are read once, for every id that is neither an event nor a type.
                if places == nil {
                    places = Dictionary(
                        try await store.geofences().map { ($0.value.id, $0.value.name) },
                        uniquingKeysWith: { a, _ in a })
                }
                words.subjects[id] = places?[uuid].map { "The place \($0)" }
                if words.subjects[id] == nil {
                    if properties == nil {
                        properties = Dictionary(
                            try await store.propertyDefinitions(ofType: nil).map {
                                ($0.value.id, "\(names[$0.value.eventTypeId] ?? "A type")'s \($0.value.key)")
                            }, uniquingKeysWith: { a, _ in a })
                    }
                    words.subjects[id] = properties?[uuid].map { "The property \($0)" }
                }
            }
        }
        return words
    }
}
