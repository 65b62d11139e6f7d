import Foundation

extension Event {
    /// An event read by ``Event/scan(_:)``, with the server's timestamps when the object has them.
    package struct Scanned {
        package var event: Event
        package var createdAt: Date?
        package var updatedAt: Date?
    }

    /// Reads the event object at the scanner's position without building intermediate values,
    /// the wire format's fast reader (change-feed and download pages, batch ingest). Unknown keys
    /// are skipped but still checked. Nil (with the scanner failed) when a field is missing,
    /// mistyped or invalid, and for events with properties: callers then use `JSONDecoder`, for
    /// its precise message and for typed property values.
    package static func scan(_ s: inout WireJSONScanner) -> Scanned? {
        guard s.consume(UInt8(ascii: "{")) else { return nil }
        var id: UUIDv7?
        var typeId: UUIDv7?
        var timestamp: Date?
        var endDate: Date?
        var notes: String?
        var externalId: String?
        var locationName: String?
        var timeZone: String?
        var geofenceId: UUIDv7?
        var isAllDay = false
        var sourceType = SourceType.manual
        var location: Coordinate?
        var createdAt: Date?
        var updatedAt: Date?
        var first = true
        while let key = s.nextKey(&first) {
            let ok: Bool
            if s.equals(key, "id") {
                id = s.uuidv7()
                ok = id != nil
            } else if s.equals(key, "event_type_id") {
                typeId = s.uuidv7()
                ok = typeId != nil
            } else if s.equals(key, "timestamp") {
                timestamp = s.date()
                ok = timestamp != nil
            } else if s.equals(key, "created_at") {
                createdAt = s.null() ? nil : s.date()
                ok = !s.failed
            } else if s.equals(key, "updated_at") {
                updatedAt = s.null() ? nil : s.date()
                ok = !s.failed
            } else if s.equals(key, "end_date") {
                endDate = s.null() ? nil : s.date()
                ok = !s.failed
            } else if s.equals(key, "geofence_id") {
                geofenceId = s.null() ? nil : s.uuidv7()
                ok = !s.failed
            } else if s.equals(key, "notes") {
                guard let v = s.optionalString() else { return nil }
                notes = v
                ok = true
            } else if s.equals(key, "external_id") {
                guard let v = s.optionalString() else { return nil }
                externalId = v
                ok = true
            } else if s.equals(key, "location_name") {
                guard let v = s.optionalString() else { return nil }
                locationName = v
                ok = true
            } else if s.equals(key, "time_zone") {
                guard let v = s.optionalString() else { return nil }
                timeZone = v
                ok = true
            } else if s.equals(key, "is_all_day") {
                // `null` is refused; the full decoder says why.
                guard let b = s.bool() else { return nil }
                isAllDay = b
                ok = true
            } else if s.equals(key, "source_type") {
                guard let text = s.string(), let t = SourceType(rawValue: text) else { return s.fail() }
                sourceType = t
                ok = true
            } else if s.equals(key, "location") {
                location = s.null() ? nil : scanCoordinate(&s)
                ok = !s.failed
            } else if s.equals(key, "properties") {
                // Only empty properties here; typed property values take the full decoder.
                ok = s.consume(UInt8(ascii: "{")) && s.consume(UInt8(ascii: "}"))
            } else {
                ok = s.skipValue()
            }
            guard ok, !s.failed else { return s.fail() }
        }
        guard !s.failed, let id, let typeId, let timestamp else { return s.fail() }
        return Scanned(
            event: Event(
                id: id, eventTypeId: typeId, timestamp: timestamp, endDate: endDate, notes: notes, isAllDay: isAllDay,
                sourceType: sourceType, externalId: externalId, geofenceId: geofenceId, location: location,
                locationName: locationName, timeZone: timeZone),
            createdAt: createdAt, updatedAt: updatedAt)
    }

    static func scanCoordinate(_ s: inout WireJSONScanner) -> Coordinate? {
        guard s.consume(UInt8(ascii: "{")) else { return nil }
        var latitude: Double?
        var longitude: Double?
        var first = true
        while let key = s.nextKey(&first) {
            if s.equals(key, "latitude") {
                latitude = s.number()
            } else if s.equals(key, "longitude") {
                longitude = s.number()
            } else {
                _ = s.skipValue()
            }
            if s.failed { return nil }
        }
        guard !s.failed, let latitude, let longitude else { return s.fail() }
        return Coordinate(latitude: latitude, longitude: longitude)
    }
}
