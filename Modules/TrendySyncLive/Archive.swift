import Foundation
import TrendyAPI
import TrendyModels
import TrendySync

/// A versioned archive of everything an account holds (issue 33, D54): its types, property
/// definitions, geofences and events with their ids and properties, and its open conflicts (for
/// the record). One JSON object, written a page of events at a time:
///
/// ```json
/// {"format": "trendy-archive", "version": 1, "exported_at": "…",
///  "event_types": […], "property_definitions": […], "geofences": […], "conflicts": […],
///  "events": […]}
/// ```
///
/// Read back (``ArchiveImport``) it is checked whole before anything is written.
public enum Archive {
    /// The `format` every archive names.
    public static let format = "trendy-archive"
    /// The version this program writes and reads.
    public static let version = 1

    /// Why an archive cannot be read; nothing was written.
    public struct Refusal: Error, CustomStringConvertible {
        /// A readable explanation.
        public var description: String
    }

    /// Whether `data` starts like an archive (a JSON object naming the format), without parsing
    /// the rest: `trendy import` tells an archive from a list of events by this.
    public static func looksLikeArchive(_ head: Data) -> Bool {
        let text = String(decoding: withoutBOM(head.prefix(4_096)), as: UTF8.self)
        // An object naming a format (any: a wrong one is then refused as such); `{"events": …}`
        // without one is a list of events.
        return text.drop { $0.isWhitespace }.first == "{" && text.contains("\"format\"")
    }

    /// `data` without a UTF-8 byte-order mark.
    static func withoutBOM(_ data: Data) -> Data {
        data.starts(with: [0xEF, 0xBB, 0xBF]) ? data.dropFirst(3) : data
    }

    /// Writes the store's whole account through `write`, events a page at a time (memory stays
    /// flat); `progress` hears the events written so far. Returns how many events.
    public static func write(
        _ store: any LocalStore, now: Date, _ write: (String) throws -> Void, progress: (Int) -> Void = { _ in }
    ) async throws -> Int {
        let encoder = TrendyJSON.encoder()
        func json(_ value: some Encodable) throws -> String {
            String(decoding: try encoder.encode(value), as: UTF8.self)
        }
        func list(_ items: [String]) -> String { "[" + items.map { "\n  " + $0 }.joined(separator: ",") + "]" }
        let account = try await store.owner().map { "\"\($0)\"" } ?? "null"
        try write(
            "{\"format\": \"\(format)\", \"version\": \(version), \"exported_at\": \"\(ISO8601.format(now))\", "
                + "\"account\": \(account),\n")
        try write("\"event_types\": " + list(try await store.eventTypes().map { try json($0.value) }) + ",\n")
        try write(
            "\"property_definitions\": "
                + list(try await store.propertyDefinitions(ofType: nil).map { try json($0.value) }) + ",\n")
        try write("\"geofences\": " + list(try await store.geofences().map { try json($0.value) }) + ",\n")
        try write(
            "\"conflicts\": " + list(try await store.conflicts(includeClosed: false).map { try json($0.conflict) })
                + ",\n")
        try write("\"events\": [")
        var written = 0
        let page = 1_000
        var filter = EventFilter()
        while true {
            let events = try await store.eventPage(offset: 0, limit: page, filter: filter)
            filter.after = events.last?.value
            for event in events {
                try write((written == 0 ? "\n  " : ",\n  ") + event.value.wireJSON())
                written += 1
            }
            progress(written)
            if events.count < page { break }
        }
        try write("]}\n")
        return written
    }
}

/// Reading an archive into the local store: the whole file is checked first (its format and
/// version, every entity's rules, every reference), then what is not here is added — ids kept
/// where they are free here, a type or property of the same name or key taking the archive's
/// where one is (its references follow, consistently). Into the account it came from it adds
/// nothing; into a fresh one it makes the same data.
public struct ArchiveImport: Sendable {
    /// What an import did.
    public struct Report: Sendable, Equatable, Encodable {
        /// Types added.
        public var typesAdded = 0
        /// Types already here (same id, or same name in any case).
        public var typesThere = 0
        /// Property definitions added.
        public var propertiesAdded = 0
        /// Property definitions already here (same id, or same key in the type).
        public var propertiesThere = 0
        /// Places added.
        public var placesAdded = 0
        /// Places already here (same id).
        public var placesThere = 0
        /// Events added.
        public var eventsAdded = 0
        /// Events already here (same id, or type and time).
        public var eventsThere = 0
        /// Conflicts the archive carried (for the record; they are not imported).
        public var conflictsCarried = 0
    }

    /// The archive's content, decoded and checked.
    struct Content {
        var types: [EventType]
        var definitions: [PropertyDefinition]
        var geofences: [Geofence]
        var events: [Event]
        var conflicts: Int
        /// The account it was written from (its user id), when it says.
        var account: String?
    }

    let store: any LocalStore

    /// An import into `store`.
    public init(store: any LocalStore) { self.store = store }

    /// Reads and checks `data` whole; throws ``Archive/Refusal`` naming the first problem.
    static func read(_ data: Data) throws(Archive.Refusal) -> Content {
        func refuse(_ reason: String) -> Archive.Refusal { Archive.Refusal(description: reason) }
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: Archive.withoutBOM(data))
        } catch {
            throw refuse(
                "the archive is not valid JSON (cut short or damaged: \(error.localizedDescription)); nothing was imported"
            )
        }
        guard let object = parsed as? [String: Any] else {
            throw refuse("not a Trendy archive (not a JSON object); nothing was imported")
        }
        guard object["format"] as? String == Archive.format else {
            throw refuse("not a Trendy archive (its format is not \(Archive.format)); nothing was imported")
        }
        guard let version = object["version"] as? Int, version >= 1 else {
            throw refuse("the archive names no version (a whole number from 1); nothing was imported")
        }
        guard version <= Archive.version else {
            throw refuse(
                "the archive is version \(version), written by a newer Trendy; this one reads version "
                    + "\(Archive.version) — update trendy; nothing was imported")
        }
        let decoder = TrendyJSON.decoder()
        func section<T: Decodable & Validating>(_ name: String, _: T.Type) throws(Archive.Refusal) -> [T] {
            guard let items = object[name] as? [Any] else { throw refuse("the archive has no \(name) list") }
            var out: [T] = []
            out.reserveCapacity(items.count)
            for (i, item) in items.enumerated() {
                do {
                    let value = try decoder.decode(T.self, from: try JSONSerialization.data(withJSONObject: item))
                    try value.validate()
                    out.append(value)
                } catch {
                    throw refuse("\(name) item \(i + 1) is damaged: \(error); nothing was imported")
                }
            }
            return out
        }
        let content = Content(
            types: try section("event_types", EventType.self),
            definitions: try section("property_definitions", PropertyDefinition.self),
            geofences: try section("geofences", Geofence.self), events: try section("events", Event.self),
            conflicts: (object["conflicts"] as? [Any])?.count ?? 0, account: object["account"] as? String)
        for (name, ids) in [
            ("event_types", content.types.map(\.id)), ("property_definitions", content.definitions.map(\.id)),
            ("geofences", content.geofences.map(\.id)), ("events", content.events.map(\.id)),
        ] where Set(ids).count != ids.count {
            throw refuse("\(name) holds an id twice: the archive is damaged; nothing was imported")
        }
        let typeIds = Set(content.types.map(\.id))
        let geofenceIds = Set(content.geofences.map(\.id))
        if let d = content.definitions.first(where: { !typeIds.contains($0.eventTypeId) }) {
            throw refuse("the property \(d.key) names a type the archive does not hold; nothing was imported")
        }
        if let e = content.events.first(where: { !typeIds.contains($0.eventTypeId) }) {
            throw refuse("the event \(e.id) names a type the archive does not hold; nothing was imported")
        }
        if let e = content.events.first(where: { $0.geofenceId.map { !geofenceIds.contains($0) } ?? false }),
            e.sourceType != .geofence
        {
            throw refuse("the event \(e.id) names a place the archive does not hold; nothing was imported")
        }
        return content
    }

    /// The content under new ids, every reference following.
    static func renamed(_ content: Content) -> Content {
        let ids = UUIDv7Generator()
        var map: [UUIDv7: UUIDv7] = [:]
        func new(_ id: UUIDv7) -> UUIDv7 {
            if let known = map[id] { return known }
            let made = ids.next()
            map[id] = made
            return made
        }
        var out = content
        out.types = content.types.map {
            var t = $0
            t.id = new(t.id)
            return t
        }
        out.definitions = content.definitions.map {
            var d = $0
            d.id = new(d.id)
            d.eventTypeId = new(d.eventTypeId)
            return d
        }
        out.geofences = content.geofences.map {
            var g = $0
            g.id = new(g.id)
            g.entryEventTypeId = g.entryEventTypeId.map(new)
            g.exitEventTypeId = g.exitEventTypeId.map(new)
            return g
        }
        out.events = content.events.map {
            var e = $0
            e.id = new(e.id)
            e.eventTypeId = new(e.eventTypeId)
            e.geofenceId = e.geofenceId.map(new)
            return e
        }
        return out
    }

    /// Checks `data` whole, then adds what is not here; `progress` hears the events handled.
    public func run(_ data: Data, progress: (Int) -> Void = { _ in }) async throws -> Report {
        var content = try Self.read(data)
        // Ids are an account's: on the server they belong to the account that wrote the archive,
        // and a create of one under another account is refused there for ever. Read into another
        // account, every id is new (consistently: every reference follows).
        if let account = content.account, try await store.owner().map({ $0 != account }) ?? false {
            content = Self.renamed(content)
        }
        var report = Report(conflictsCarried: content.conflicts)
        // Types: by id, else by name (any case), else added under the archive's id.
        var typeMap: [UUIDv7: UUIDv7] = [:]
        let localTypes = try await store.eventTypes().map(\.value)
        for type in content.types {
            if let here = localTypes.first(where: { $0.id == type.id })
                ?? localTypes.first(where: { $0.name.lowercased() == type.name.lowercased() })
            {
                typeMap[type.id] = here.id
                report.typesThere += 1
            } else {
                let (made, created) = try await store.findOrCreateEventType(type)
                typeMap[type.id] = made.id
                if created { report.typesAdded += 1 } else { report.typesThere += 1 }
            }
        }
        let localDefinitions = try await store.propertyDefinitions(ofType: nil).map(\.value)
        for var definition in content.definitions {
            definition.eventTypeId = typeMap[definition.eventTypeId] ?? definition.eventTypeId
            if localDefinitions.contains(where: {
                $0.id == definition.id
                    || ($0.eventTypeId == definition.eventTypeId && $0.key.lowercased() == definition.key.lowercased())
            }) {
                report.propertiesThere += 1
            } else {
                try await store.createPropertyDefinition(definition)
                report.propertiesAdded += 1
            }
        }
        let localPlaces = Set(try await store.geofences().map(\.value.id))
        for var place in content.geofences {
            if localPlaces.contains(place.id) {
                report.placesThere += 1
                continue
            }
            place.entryEventTypeId = place.entryEventTypeId.map { typeMap[$0] ?? $0 }
            place.exitEventTypeId = place.exitEventTypeId.map { typeMap[$0] ?? $0 }
            try await store.createGeofence(place)
            report.placesAdded += 1
        }
        for start in stride(from: 0, to: content.events.count, by: 1_000) {
            let chunk = content.events[start..<min(start + 1_000, content.events.count)].map { event in
                var e = event
                e.eventTypeId = typeMap[e.eventTypeId] ?? e.eventTypeId
                return e
            }
            let summary = try await store.insertEvents(chunk)
            report.eventsAdded += summary.inserted
            report.eventsThere += summary.duplicates
            progress(start + chunk.count)
        }
        return report
    }
}
