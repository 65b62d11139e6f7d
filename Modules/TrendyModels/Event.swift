import Foundation

/// Something that happened: one logged occurrence of an ``EventType``.
public struct Event: Hashable, Sendable, Codable, Identifiable, Validating {
    /// Client-generated id.
    public var id: UUIDv7
    /// The type this event is an occurrence of.
    public var eventTypeId: UUIDv7
    /// When it happened (or started).
    public var timestamp: Date
    /// When it ended, for events with a duration (geofence visits); not before `timestamp`.
    public var endDate: Date?
    /// Free-text notes, at most 10,000 characters.
    public var notes: String?
    /// Whether it covers a whole day rather than a moment.
    public var isAllDay: Bool
    /// How it was created.
    public var sourceType: SourceType
    /// The id in the system it came from (a HealthKit sample id, an import row key).
    public var externalId: String?
    /// The geofence that created it, for geofence events.
    public var geofenceId: UUIDv7?
    /// Where it happened.
    public var location: Coordinate?
    /// A name for the place.
    public var locationName: String?
    /// Typed values by property name.
    public var properties: [String: PropertyValue]
    /// The IANA zone the event was logged in (`Europe/Berlin`), so its day is the local date
    /// where it happened; nil for events from before the field existed and imports without one
    /// (insights then use the person's zone).
    public var timeZone: String?

    /// Creates an event.
    public init(
        id: UUIDv7, eventTypeId: UUIDv7, timestamp: Date, endDate: Date? = nil, notes: String? = nil,
        isAllDay: Bool = false, sourceType: SourceType = .manual, externalId: String? = nil,
        geofenceId: UUIDv7? = nil, location: Coordinate? = nil, locationName: String? = nil,
        properties: [String: PropertyValue] = [:], timeZone: String? = nil
    ) {
        self.id = id
        self.eventTypeId = eventTypeId
        self.timestamp = timestamp
        self.endDate = endDate
        self.notes = notes
        self.isAllDay = isAllDay
        self.sourceType = sourceType
        self.externalId = externalId
        self.geofenceId = geofenceId
        self.location = location
        self.locationName = locationName
        self.properties = properties
        self.timeZone = timeZone
    }

    /// The length of the event when it has an end.
    public var duration: TimeInterval? { endDate.map { $0.timeIntervalSince(timestamp) } }

    enum CodingKeys: String, CodingKey {
        case id
        case eventTypeId = "event_type_id"
        case timestamp
        case endDate = "end_date"
        case notes
        case isAllDay = "is_all_day"
        case sourceType = "source_type"
        case externalId = "external_id"
        case geofenceId = "geofence_id"
        case location
        case locationName = "location_name"
        case properties
        case timeZone = "time_zone"
    }

    /// Decodes, defaulting `is_all_day` to false, `source_type` to manual and properties to none.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(UUIDv7.self, forKey: .id)
        eventTypeId = try c.decode(UUIDv7.self, forKey: .eventTypeId)
        timestamp = try c.decode(Date.self, forKey: .timestamp)
        endDate = try c.decodeIfPresent(Date.self, forKey: .endDate)
        notes = try c.decodeIfPresent(String.self, forKey: .notes)
        isAllDay = try c.decodeUnlessNull(Bool.self, forKey: .isAllDay) ?? false
        sourceType = try c.decodeUnlessNull(SourceType.self, forKey: .sourceType) ?? .manual
        externalId = try c.decodeIfPresent(String.self, forKey: .externalId)
        geofenceId = try c.decodeIfPresent(UUIDv7.self, forKey: .geofenceId)
        location = try c.decodeIfPresent(Coordinate.self, forKey: .location)
        locationName = try c.decodeIfPresent(String.self, forKey: .locationName)
        properties = try c.decodeUnlessNull([String: PropertyValue].self, forKey: .properties) ?? [:]
        timeZone = try c.decodeIfPresent(String.self, forKey: .timeZone)
    }

    /// Checks every field and reports all problems at once.
    /// The times an event may have: from 1800-01-01 up to, not including, 3000-01-01 (UTC).
    public static let years = Date(timeIntervalSince1970: -5_364_662_400)..<Date(timeIntervalSince1970: 32_503_680_000)

    public func validate() throws(ValidationError) {
        var c = IssueCollector("Event")
        c.check(timestamp.timeIntervalSince1970.isFinite, "timestamp", "must be a valid date")
        // Years every store and every ISO-8601 writer on the way agree on: a year-1 event was sent
        // as "0000-12-30" (the Julian calendar before 1582), refused by the server, and could no
        // longer be read back here; counts end at `distantFuture` (year 4001).
        c.check(Self.years.contains(timestamp), "timestamp", "must be between the years 1800 and 2999")
        if let endDate {
            c.check(endDate >= timestamp, "end_date", "must not be before timestamp")
            c.check(Self.years.contains(endDate), "end_date", "must be between the years 1800 and 2999")
        }
        if let notes {
            c.check(notes.count <= 10_000, "notes", "must be at most 10000 characters")
            c.check(
                !notes.hasControlCharacterBesidesLineBreaks, "notes",
                "must not contain control characters other than tabs and line breaks")
        }
        if sourceType == .healthkit {
            c.check(!(externalId ?? "").isBlank, "external_id", "is required for healthkit events (the sample id)")
        }
        if sourceType == .geofence {
            c.check(geofenceId != nil, "geofence_id", "is required for geofence events")
        }
        if let externalId {
            c.check(externalId.count <= 255, "external_id", "must be at most 255 characters")
            c.check(!externalId.hasControlCharacter, "external_id", "must not contain control characters")
        }
        if let locationName {
            c.check(locationName.count <= 200, "location_name", "must be at most 200 characters")
            c.check(!locationName.hasControlCharacter, "location_name", "must not contain control characters")
        }
        if let timeZone {
            c.check(Self.isZoneName(timeZone), "time_zone", "must be an IANA time zone name such as Europe/Berlin")
        }
        if let location {
            do throws(ValidationError) { try location.validate() } catch { c.merge(error, prefix: "location") }
        }
        c.check(properties.count <= 50, "properties", "at most 50 properties")
        var seen = Set<String>()
        for key in properties.keys.sorted() {
            // A key is a property's, never a column every event has, and once in any case (a file
            // has one column per key: `Mood` and `mood` lost one of them on the way back).
            let lower = key.lowercased()
            c.check(
                !PropertyDefinition.reservedKeys.contains(lower), "properties",
                "'\(key)' is a column of every event, not a property")
            c.check(seen.insert(lower).inserted, "properties", "'\(key)' is there twice (in another case)")
            c.check(!key.isBlank && key.count <= 64, "properties", "property names must be 1 to 64 characters")
            c.check(!key.hasControlCharacter, "properties", "property names must not contain control characters")
            c.issues += properties[key]!.issues(field: "properties.\(key)")
        }
        try c.finish()
    }

    /// Whether `name` has the shape of an IANA zone name (`UTC`, `Europe/Berlin`,
    /// `America/Argentina/Buenos_Aires`, `Etc/GMT+5`). The shape only: a zone newer than this
    /// device's time-zone data is still kept (insights then use the person's zone for it).
    public static func isZoneName(_ name: String) -> Bool {
        guard (1...64).contains(name.utf8.count), let first = name.utf8.first, first != UInt8(ascii: "/"),
            name.utf8.last != UInt8(ascii: "/"), !name.contains("//"), !name.contains("..")
        else { return false }
        return name.utf8.allSatisfy { b in
            (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39)
                || b == UInt8(ascii: "/") || b == UInt8(ascii: "_") || b == UInt8(ascii: "-") || b == UInt8(ascii: "+")
        }
    }
}
