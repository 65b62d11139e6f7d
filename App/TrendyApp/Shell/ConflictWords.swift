import Foundation
import TrendyAPI
import TrendyModels
import TrendySync

/// A conflict in words, for the app's account tab and `trendy conflicts`: what it is about (an
/// event's type and time, a type's or place's name), the field, the kept and the lost value (a
/// type as its name, a time as a time, text quoted), and who — "this device" or "another device",
/// never a hex id or JSON. Pure once its names are read (``load(_:conflicts:)``).
struct ConflictWords {
    var typeNames: [UUIDv7: String]
    /// What each entity is, in words, by id.
    var subjects: [String: String]
    /// This install's device id.
    var deviceId: String
    var timeZone: TimeZone = .current

    /// A conflict in words: what it is about, then what was kept and what lost, by whom and when.
    func lines(_ c: SyncConflict) -> [String] {
        let subject = subjects[c.entityId] ?? Self.unnamed(c.entityType)
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
        default: "Your \(entity.rawValue.replacingOccurrences(of: "_", with: " "))"
        }
    }

    func device(_ id: String) -> String { id == deviceId ? "this device" : "another device" }

    static func fieldName(_ field: String) -> String {
        switch field {
        case "notes": "note"
        case "event_type_id", "entry_event_type_id": "type"
        case "timestamp": "time"
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
    static func load(_ store: any LocalStore, ids: [String], timeZone: TimeZone = .current) async throws
        -> ConflictWords
    {
        let types = try await store.eventTypes().map(\.value)
        let names = Dictionary(types.map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a })
        var words = ConflictWords(
            typeNames: names, subjects: [:], deviceId: try await store.deviceId(), timeZone: timeZone)
        for id in Set(ids) { words.subjects[id] = try await subject(id, store, names, timeZone) }
        return words
    }

    /// What an entity is, in words: "Coffee, Wed 2 Dec 2026 09:05", "The type Coffee", "The place Gym".
    static func subject(_ id: String, _ store: any LocalStore, _ names: [UUIDv7: String], _ timeZone: TimeZone)
        async throws -> String?
    {
        guard let uuid = UUIDv7(id) else { return nil }
        if let event = try await store.event(id: uuid)?.value {
            return "\(names[event.eventTypeId] ?? "An event"), \(AppHelp.when(event.timestamp, timeZone))"
        }
        if let type = names[uuid] { return "The type \(type)" }
        if let place = try await store.geofences().first(where: { $0.value.id == uuid }) {
            return "The place \(place.value.name)"
        }
        return nil
    }
}
