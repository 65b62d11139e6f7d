import Foundation

/// JSON coders configured for the Trendy wire format: ISO-8601 dates (fractional seconds
/// optional on input, always written), keys as declared (snake_case), sorted output.
public enum TrendyJSON {
    /// A new encoder for the wire format.
    public static func encoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.dateEncodingStrategy = .custom { date, encoder in
            var c = encoder.singleValueContainer()
            try c.encode(formatDate(date))
        }
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }

    /// A new decoder for the wire format.
    public static func decoder() -> JSONDecoder {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .custom { decoder in
            let c = try decoder.singleValueContainer()
            let text = try c.decode(String.self)
            guard let date = parseDate(text) else {
                throw DecodingError.dataCorruptedError(
                    in: c, debugDescription: "'\(text)' is not an ISO-8601 date-time (e.g. 2026-11-22T10:00:00Z)")
            }
            return date
        }
        return d
    }

    /// `2026-11-22T10:00:00.123Z`.
    public static func formatDate(_ date: Date) -> String { ISO8601.format(date) }

    /// Parses ISO-8601 date-times with or without fractional seconds, any offset.
    public static func parseDate(_ text: String) -> Date? { ISO8601.parse(text) }
}
