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
        if let timeZone {
            key("time_zone")
            string(timeZone)
        }
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

/// JSON string escaping, for text built as a `String` or as bytes.
package enum WireText {
    /// Appends `s` as a JSON string literal.
    package static func appendString(_ s: String, to out: inout String) {
        out += "\""
        if !s.utf8.contains(where: needsEscape) {
            out += s
        } else {
            var bytes: [UInt8] = []
            appendEscaped(s.utf8, to: &bytes)
            out += String(decoding: bytes, as: UTF8.self)
        }
        out += "\""
    }

    /// Appends `text` (UTF-8) as a JSON string.
    package static func appendString(_ text: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        if !text.contains(where: needsEscape) {
            out.append(contentsOf: text)
        } else {
            appendEscaped(text, to: &out)
        }
        out.append(UInt8(ascii: "\""))
    }

    static func needsEscape(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x22 || byte == 0x5C }

    static func appendEscaped(_ text: some Sequence<UInt8>, to out: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        for byte in text {
            switch byte {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x0A: out += [0x5C, UInt8(ascii: "n")]
            case 0x0D: out += [0x5C, UInt8(ascii: "r")]
            case 0x09: out += [0x5C, UInt8(ascii: "t")]
            case ..<0x20: out += [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
    }
}
