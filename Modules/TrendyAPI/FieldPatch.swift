import Foundation
import TrendyModels

/// A partial-update payload of one kind of entity (`PATCH` body): absent fields keep their
/// value, `null` clears, a value sets. Field-level sync records only the fields a person changed
/// as such a patch, and the server decides conflicts field by field.
public protocol EntityPatch: Codable, Sendable {
    /// The entity the patch applies to.
    associatedtype Entity
    /// A patch that sets every field to the entity's value (and clears what is nil).
    init(everyFieldOf entity: Entity)
    /// The entity with the patch applied.
    func apply(to entity: Entity) -> Entity
    /// The wire names of the fields the patch sets or clears (the keys of its JSON object).
    var patchedFields: [String] { get }
}

extension EntityPatch {
    /// The keys of the patch's JSON object.
    public var patchedFields: [String] { ((try? FieldPatch.object(self)) ?? [:]).keys.sorted() }
}

/// Field-level patches as JSON objects: the difference of two states, the merge of two
/// patches, the fields a patch names. Values compare by their canonical JSON text.
public enum FieldPatch {
    /// The JSON object of an encodable value.
    public static func object(_ value: some Encodable) throws -> [String: Any] {
        let data = try TrendyJSON.encoder().encode(value)
        return (try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) as? [String: Any]) ?? [:]
    }

    /// The JSON object of a patch's text (empty when it is not an object).
    public static func object(text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [])) as? [String: Any] ?? [:]
    }

    /// An object as compact JSON text with sorted keys.
    public static func text(_ object: [String: Any]) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
            return "{}"
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// One JSON value (`NSNull` for null) as canonical text, for comparing values.
    public static func canonical(_ value: Any?) -> String {
        guard let value, !(value is NSNull) else { return "null" }
        guard
            let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])
        else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    /// The patch that turns `old` into `new`: the fields whose values differ; nil when none do.
    public static func diff<P: EntityPatch>(_: P.Type, from old: P.Entity, to new: P.Entity) throws -> String? {
        let before = try object(P(everyFieldOf: old))
        let after = try object(P(everyFieldOf: new))
        var changed: [String: Any] = [:]
        for key in Set(before.keys).union(after.keys) where canonical(before[key]) != canonical(after[key]) {
            changed[key] = after[key] ?? NSNull()
        }
        return changed.isEmpty ? nil : text(changed)
    }

    /// `older` with `newer` laid over it: every field of both, the newer value where both have one.
    public static func merge(_ older: String, _ newer: String) -> String {
        var merged = object(text: older)
        for (key, value) in object(text: newer) { merged[key] = value }
        return text(merged)
    }

    /// `patch` without `fields`; nil when nothing is left.
    public static func removing(_ fields: some Sequence<String>, from patch: String) -> String? {
        var object = object(text: patch)
        for field in fields { object[field] = nil }
        return object.isEmpty ? nil : text(object)
    }

    /// The fields a patch names, sorted.
    public static func fields(_ patch: String) -> [String] { object(text: patch).keys.sorted() }

    /// A patch decoded as its typed payload.
    public static func decode<P: EntityPatch>(_: P.Type, _ patch: String) throws -> P {
        try TrendyJSON.decoder().decode(P.self, from: Data(patch.utf8))
    }

    /// The entities a patch refers to, as (kind, id) with the feed's kind names (`event_type`,
    /// `geofence`), so a change is never sent before the creations it needs.
    public static func references(_ patch: String) -> [(entity: String, id: String)] {
        let keys = [
            ("event_type_id", "event_type"), ("geofence_id", "geofence"), ("event_type_entry_id", "event_type"),
            ("event_type_exit_id", "event_type"),
        ]
        let object = object(text: patch)
        return keys.compactMap { key, entity in (object[key] as? String).map { (entity, $0) } }
    }
}

extension EventUpdate: EntityPatch {
    /// Sets every field of `e` (clears what is nil).
    public init(everyFieldOf e: Event) {
        self.init()
        eventTypeId = .set(e.eventTypeId)
        timestamp = .set(e.timestamp)
        endDate = e.endDate.map { .set($0) } ?? .clear
        notes = e.notes.map { .set($0) } ?? .clear
        isAllDay = .set(e.isAllDay)
        externalId = e.externalId.map { .set($0) } ?? .clear
        geofenceId = e.geofenceId.map { .set($0) } ?? .clear
        location = e.location.map { .set($0) } ?? .clear
        locationName = e.locationName.map { .set($0) } ?? .clear
        properties = .set(e.properties)
        timeZone = e.timeZone.map { .set($0) } ?? .clear
    }

    /// Read from the fields, without encoding the patch (every edit a server applies asks).
    public var patchedFields: [String] {
        let fields: [(Bool, CodingKeys)] = [
            (eventTypeId == .keep, .eventTypeId), (timestamp == .keep, .timestamp), (endDate == .keep, .endDate),
            (notes == .keep, .notes), (isAllDay == .keep, .isAllDay), (externalId == .keep, .externalId),
            (geofenceId == .keep, .geofenceId), (location == .keep, .location),
            (locationName == .keep, .locationName), (properties == .keep, .properties), (timeZone == .keep, .timeZone),
        ]
        return fields.filter { !$0.0 }.map(\.1.stringValue).sorted()
    }
}

extension GeofenceUpdate: EntityPatch {
    /// Sets every field of `g` (clears what is nil).
    public init(everyFieldOf g: Geofence) {
        self.init()
        name = .set(g.name)
        latitude = .set(g.center.latitude)
        longitude = .set(g.center.longitude)
        radius = .set(g.radius)
        entryEventTypeId = g.entryEventTypeId.map { .set($0) } ?? .clear
        exitEventTypeId = g.exitEventTypeId.map { .set($0) } ?? .clear
        isActive = .set(g.isActive)
        notifyOnEntry = .set(g.notifyOnEntry)
        notifyOnExit = .set(g.notifyOnExit)
    }
}

extension EventTypeUpdate: EntityPatch {
    /// Sets every field of `t`.
    public init(everyFieldOf t: EventType) { self.init(name: t.name, color: t.color, icon: t.icon) }
}
