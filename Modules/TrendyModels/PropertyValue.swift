import Foundation

/// A typed value attached to an event under a property name.
///
/// On the wire: `{"type": "number", "value": 3}`; dates are ISO-8601 text.
public enum PropertyValue: Hashable, Sendable {
    /// Free text.
    case text(String)
    /// A number.
    case number(Double)
    /// Yes or no.
    case boolean(Bool)
    /// A point in time.
    case date(Date)
    /// A length of time in seconds.
    case duration(Double)
    /// One option of a fixed list.
    case select(String)
    /// A link.
    case url(String)
    /// An email address.
    case email(String)

    /// The wire name of the value's type.
    public var typeName: String {
        switch self {
        case .text: "text"
        case .number: "number"
        case .boolean: "boolean"
        case .date: "date"
        case .duration: "duration"
        case .select: "select"
        case .url: "url"
        case .email: "email"
        }
    }

    /// Problems with the value itself (empty select, non-finite numbers, bad URL).
    func issues(field: String) -> [FieldIssue] {
        switch self {
        case .number(let d) where !d.isFinite, .duration(let d) where !d.isFinite:
            return [FieldIssue(field: field, reason: "must be a finite number")]
        case .duration(let d) where d < 0:
            return [FieldIssue(field: field, reason: "a duration cannot be negative")]
        case .select(let s) where s.isBlank:
            return [FieldIssue(field: field, reason: "a selection must not be empty")]
        case .text(let s) where s.count > 10_000:
            return [FieldIssue(field: field, reason: "must be at most 10000 characters")]
        case .text(let s) where s.hasControlCharacterBesidesLineBreaks,
            .select(let s) where s.hasControlCharacter, .url(let s) where s.hasControlCharacter,
            .email(let s) where s.hasControlCharacter:
            return [FieldIssue(field: field, reason: "must not contain control characters")]
        case .url(let s) where URL(string: s)?.scheme == nil:
            return [FieldIssue(field: field, reason: "must be an absolute URL")]
        case .email(let s) where !Self.isPlausibleEmail(s):
            return [FieldIssue(field: field, reason: "must be an email address like sam@example.com")]
        default:
            return []
        }
    }
}

extension PropertyValue {
    /// Whether `text` looks like an address: one `@`, something before it, a dotted domain
    /// after it, no spaces, at most 254 characters.
    public static func isPlausibleEmail(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard text.count <= 254, parts.count == 2, !parts[0].isEmpty, !text.contains(where: \.isWhitespace) else {
            return false
        }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && labels.allSatisfy { !$0.isEmpty }
    }
}

extension PropertyValue: Codable {
    enum CodingKeys: String, CodingKey { case type, value }

    /// Decodes `{"type": ..., "value": ...}`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let type = try c.decode(String.self, forKey: .type)
        switch type {
        case "text": self = .text(try c.decode(String.self, forKey: .value))
        case "number": self = .number(try c.decode(Double.self, forKey: .value))
        case "boolean": self = .boolean(try c.decode(Bool.self, forKey: .value))
        case "date": self = .date(try c.decode(Date.self, forKey: .value))
        case "duration": self = .duration(try c.decode(Double.self, forKey: .value))
        case "select": self = .select(try c.decode(String.self, forKey: .value))
        case "url": self = .url(try c.decode(String.self, forKey: .value))
        case "email": self = .email(try c.decode(String.self, forKey: .value))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: c,
                debugDescription:
                    "unknown property type '\(type)' (text, number, boolean, date, duration, select, url, email)"
            )
        }
    }

    /// Encodes `{"type": ..., "value": ...}`.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(typeName, forKey: .type)
        switch self {
        case .text(let v), .select(let v), .url(let v), .email(let v): try c.encode(v, forKey: .value)
        case .number(let v), .duration(let v): try c.encode(v, forKey: .value)
        case .boolean(let v): try c.encode(v, forKey: .value)
        case .date(let v): try c.encode(v, forKey: .value)
        }
    }
}
