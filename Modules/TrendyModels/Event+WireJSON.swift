import Foundation

extension Event {
    /// The event as wire JSON, written directly (no `JSONEncoder`): ingest encodes every event
    /// once or twice, and the generic encoder dominated that path. Optional server timestamps are
    /// appended as `created_at` / `updated_at`. Keys are sorted, like ``TrendyJSON/encoder()``.
    public func wireJSON(createdAt: Date? = nil, updatedAt: Date? = nil) -> String {
        var out = "{"
        out.reserveCapacity(320)
        var first = true
        func key(_ k: String) {
            if !first { out += "," }
            first = false
            out += "\""
            out += k
            out += "\":"
        }
        func string(_ s: String) { WireText.appendString(s, to: &out) }
        if let createdAt {
            key("created_at")
            string(ISO8601.format(createdAt))
        }
        if let endDate {
            key("end_date")
            string(ISO8601.format(endDate))
        }
        key("event_type_id")
        string(eventTypeId.description)
        if let externalId {
            key("external_id")
            string(externalId)
        }
        if let geofenceId {
            key("geofence_id")
            string(geofenceId.description)
        }
        key("id")
        string(id.description)
        key("is_all_day")
        out += isAllDay ? "true" : "false"
        if let location {
            key("location")
            out += "{\"latitude\":\(location.latitude),\"longitude\":\(location.longitude)}"
        }
        if let locationName {
            key("location_name")
            string(locationName)
        }
        if let notes {
            key("notes")
            string(notes)
        }
        key("properties")
        if properties.isEmpty {
            out += "{}"
        } else if let data = try? TrendyJSON.encoder().encode(properties) {
            out += String(decoding: data, as: UTF8.self)
        } else {
            out += "{}"
        }
        key("source_type")
        string(sourceType.rawValue)
        key("timestamp")
        string(ISO8601.format(timestamp))
        if let updatedAt {
            key("updated_at")
            string(ISO8601.format(updatedAt))
        }
        out += "}"
        return out
    }
}

/// JSON string escaping.
enum WireText {
    static func appendString(_ s: String, to out: inout String) {
        out += "\""
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) {
            out += s
        } else {
            for scalar in s.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                default:
                    if scalar.value < 0x20 {
                        out += String(format: "\\u%04x", scalar.value)
                    } else {
                        out.unicodeScalars.append(scalar)
                    }
                }
            }
        }
        out += "\""
    }
}
