import TrendyModels

/// `PATCH /geofences/{id}`: absent fields keep their value; the event type ids may be cleared.
public struct GeofenceUpdate: Codable, Sendable, Equatable {
    /// New name.
    public var name: FieldUpdate<String> = .keep
    /// New centre latitude.
    public var latitude: FieldUpdate<Double> = .keep
    /// New centre longitude.
    public var longitude: FieldUpdate<Double> = .keep
    /// New radius in metres.
    public var radius: FieldUpdate<Double> = .keep
    /// New entry event type (nullable).
    public var entryEventTypeId: FieldUpdate<UUIDv7> = .keep
    /// New exit event type (nullable).
    public var exitEventTypeId: FieldUpdate<UUIDv7> = .keep
    /// New active flag.
    public var isActive: FieldUpdate<Bool> = .keep
    /// New entry notification flag.
    public var notifyOnEntry: FieldUpdate<Bool> = .keep
    /// New exit notification flag.
    public var notifyOnExit: FieldUpdate<Bool> = .keep

    /// Creates an empty update.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case name, latitude, longitude, radius
        case entryEventTypeId = "event_type_entry_id"
        case exitEventTypeId = "event_type_exit_id"
        case isActive = "is_active"
        case notifyOnEntry = "notify_on_entry"
        case notifyOnExit = "notify_on_exit"
    }

    /// Decodes the tri-state fields.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decodeUpdate(String.self, forKey: .name)
        latitude = try c.decodeUpdate(Double.self, forKey: .latitude)
        longitude = try c.decodeUpdate(Double.self, forKey: .longitude)
        radius = try c.decodeUpdate(Double.self, forKey: .radius)
        entryEventTypeId = try c.decodeUpdate(UUIDv7.self, forKey: .entryEventTypeId)
        exitEventTypeId = try c.decodeUpdate(UUIDv7.self, forKey: .exitEventTypeId)
        isActive = try c.decodeUpdate(Bool.self, forKey: .isActive)
        notifyOnEntry = try c.decodeUpdate(Bool.self, forKey: .notifyOnEntry)
        notifyOnExit = try c.decodeUpdate(Bool.self, forKey: .notifyOnExit)
    }

    /// Encodes present fields only.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeUpdate(name, forKey: .name)
        try c.encodeUpdate(latitude, forKey: .latitude)
        try c.encodeUpdate(longitude, forKey: .longitude)
        try c.encodeUpdate(radius, forKey: .radius)
        try c.encodeUpdate(entryEventTypeId, forKey: .entryEventTypeId)
        try c.encodeUpdate(exitEventTypeId, forKey: .exitEventTypeId)
        try c.encodeUpdate(isActive, forKey: .isActive)
        try c.encodeUpdate(notifyOnEntry, forKey: .notifyOnEntry)
        try c.encodeUpdate(notifyOnExit, forKey: .notifyOnExit)
    }

    /// Fields that may not be cleared.
    public var clearedRequiredFields: [String] {
        var out: [String] = []
        if name == .clear { out.append("name") }
        if latitude == .clear { out.append("latitude") }
        if longitude == .clear { out.append("longitude") }
        if radius == .clear { out.append("radius") }
        if isActive == .clear { out.append("is_active") }
        if notifyOnEntry == .clear { out.append("notify_on_entry") }
        if notifyOnExit == .clear { out.append("notify_on_exit") }
        return out
    }

    /// Applies the update.
    public func apply(to geofence: Geofence) -> Geofence {
        var g = geofence
        if let v = name.value { g.name = v }
        if let v = latitude.value { g.center.latitude = v }
        if let v = longitude.value { g.center.longitude = v }
        if let v = radius.value { g.radius = v }
        g.entryEventTypeId = entryEventTypeId.apply(to: g.entryEventTypeId)
        g.exitEventTypeId = exitEventTypeId.apply(to: g.exitEventTypeId)
        if let v = isActive.value { g.isActive = v }
        if let v = notifyOnEntry.value { g.notifyOnEntry = v }
        if let v = notifyOnExit.value { g.notifyOnExit = v }
        return g
    }
}
