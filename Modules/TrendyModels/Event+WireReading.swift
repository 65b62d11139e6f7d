import Foundation

extension Event {
    /// Reads an event from a parsed wire object without `JSONDecoder`; nil when any field is
    /// missing, mistyped or invalid (callers then use `JSONDecoder` for its precise message).
    /// Events with properties are left to `JSONDecoder` too.
    package init?(wire v: WireJSONReader.Value) {
        guard case .object(let o) = v, let idText = o["id"]?.string, let id = UUIDv7(idText),
            let typeText = o["event_type_id"]?.string, let typeId = UUIDv7(typeText),
            let stampText = o["timestamp"]?.string, let timestamp = ISO8601.parse(stampText)
        else { return nil }
        func optionalString(_ key: String) -> String?? {
            guard let value = o[key], !value.isNull else { return .some(nil) }
            guard let s = value.string else { return nil }
            return .some(s)
        }
        guard let notes = optionalString("notes"), let externalId = optionalString("external_id"),
            let locationName = optionalString("location_name"), let geofenceText = optionalString("geofence_id"),
            let endText = optionalString("end_date")
        else { return nil }
        var endDate: Date?
        if let endText {
            guard let d = ISO8601.parse(endText) else { return nil }
            endDate = d
        }
        var geofenceId: UUIDv7?
        if let geofenceText {
            guard let g = UUIDv7(geofenceText) else { return nil }
            geofenceId = g
        }
        var isAllDay = false
        if let a = o["is_all_day"], !a.isNull {
            guard let b = a.bool else { return nil }
            isAllDay = b
        }
        var sourceType = SourceType.manual
        if let s = o["source_type"], !s.isNull {
            guard let text = s.string, let t = SourceType(rawValue: text) else { return nil }
            sourceType = t
        }
        var location: Coordinate?
        if let l = o["location"], !l.isNull {
            guard let lat = l["latitude"]?.number, let lon = l["longitude"]?.number else { return nil }
            location = Coordinate(latitude: lat, longitude: lon)
        }
        if let p = o["properties"], !p.isNull {
            guard case .object(let props) = p, props.isEmpty else { return nil }
        }
        self.init(
            id: id, eventTypeId: typeId, timestamp: timestamp, endDate: endDate, notes: notes, isAllDay: isAllDay,
            sourceType: sourceType, externalId: externalId, geofenceId: geofenceId, location: location,
            locationName: locationName)
    }
}
