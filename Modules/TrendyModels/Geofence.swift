/// A circular place whose crossing logs events automatically.
public struct Geofence: Hashable, Sendable, Codable, Identifiable, Validating {
    /// Smallest radius accepted, in metres.
    public static let minimumRadius = 50.0
    /// Largest radius accepted, in metres.
    public static let maximumRadius = 10_000.0

    /// Client-generated id.
    public var id: UUIDv7
    /// Display name.
    public var name: String
    /// Centre of the circle.
    public var center: Coordinate
    /// Radius in metres, 50 ... 10,000.
    public var radius: Double
    /// Type of the event created on entry.
    public var entryEventTypeId: UUIDv7?
    /// Type of a separate event created on exit (otherwise exit closes the entry event).
    public var exitEventTypeId: UUIDv7?
    /// Whether it is monitored at all.
    public var isActive: Bool
    /// Notify the person on entry.
    public var notifyOnEntry: Bool
    /// Notify the person on exit.
    public var notifyOnExit: Bool

    /// Creates a geofence.
    public init(
        id: UUIDv7, name: String, center: Coordinate, radius: Double, entryEventTypeId: UUIDv7? = nil,
        exitEventTypeId: UUIDv7? = nil, isActive: Bool = true, notifyOnEntry: Bool = false,
        notifyOnExit: Bool = false
    ) {
        self.id = id
        self.name = name
        self.center = center
        self.radius = radius
        self.entryEventTypeId = entryEventTypeId
        self.exitEventTypeId = exitEventTypeId
        self.isActive = isActive
        self.notifyOnEntry = notifyOnEntry
        self.notifyOnExit = notifyOnExit
    }

    enum CodingKeys: String, CodingKey {
        case id, name, latitude, longitude, radius
        case entryEventTypeId = "event_type_entry_id"
        case exitEventTypeId = "event_type_exit_id"
        case isActive = "is_active"
        case notifyOnEntry = "notify_on_entry"
        case notifyOnExit = "notify_on_exit"
    }

    /// Decodes the flat wire form (`latitude`, `longitude`, `radius`, ...).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(UUIDv7.self, forKey: .id)
        name = try c.decode(String.self, forKey: .name)
        center = Coordinate(
            latitude: try c.decode(Double.self, forKey: .latitude),
            longitude: try c.decode(Double.self, forKey: .longitude))
        radius = try c.decode(Double.self, forKey: .radius)
        entryEventTypeId = try c.decodeIfPresent(UUIDv7.self, forKey: .entryEventTypeId)
        exitEventTypeId = try c.decodeIfPresent(UUIDv7.self, forKey: .exitEventTypeId)
        isActive = try c.decodeUnlessNull(Bool.self, forKey: .isActive) ?? true
        notifyOnEntry = try c.decodeUnlessNull(Bool.self, forKey: .notifyOnEntry) ?? false
        notifyOnExit = try c.decodeUnlessNull(Bool.self, forKey: .notifyOnExit) ?? false
    }

    /// Encodes the flat wire form.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(name, forKey: .name)
        try c.encode(center.latitude, forKey: .latitude)
        try c.encode(center.longitude, forKey: .longitude)
        try c.encode(radius, forKey: .radius)
        try c.encodeIfPresent(entryEventTypeId, forKey: .entryEventTypeId)
        try c.encodeIfPresent(exitEventTypeId, forKey: .exitEventTypeId)
        try c.encode(isActive, forKey: .isActive)
        try c.encode(notifyOnEntry, forKey: .notifyOnEntry)
        try c.encode(notifyOnExit, forKey: .notifyOnExit)
    }

    /// Checks every field and reports all problems at once.
    public func validate() throws(ValidationError) {
        var c = IssueCollector("Geofence")
        c.check(!name.isBlank, "name", "must not be empty")
        c.check(name.count <= 100, "name", "must be at most 100 characters")
        c.check(!name.hasControlCharacter, "name", "must not contain control characters")
        c.check(
            center.latitude.isFinite && (-90...90).contains(center.latitude), "latitude",
            "must be between -90 and 90 degrees")
        c.check(
            center.longitude.isFinite && (-180...180).contains(center.longitude), "longitude",
            "must be between -180 and 180 degrees")
        c.check(
            radius.isFinite && (Self.minimumRadius...Self.maximumRadius).contains(radius), "radius",
            "must be between 50 and 10000 metres")
        try c.finish()
    }

    /// Distance in metres from `point` to the circle's edge; zero when inside.
    public func distanceToEdge(from point: Coordinate) -> Double {
        max(0, center.distance(to: point) - radius)
    }

    /// Whether `point` lies inside the circle.
    public func contains(_ point: Coordinate) -> Bool { center.distance(to: point) <= radius }
}
