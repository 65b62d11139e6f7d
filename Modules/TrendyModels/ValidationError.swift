/// One field that failed validation, and why.
public struct FieldIssue: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The field's wire name, e.g. `radius` or `properties.mood`.
    public var field: String
    /// Why it is invalid, readable by a person.
    public var reason: String

    /// Creates an issue.
    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }

    /// `field: reason`.
    public var description: String { "\(field): \(reason)" }
}

/// A value with rules of its own (names, ranges, lengths), checked all at once.
public protocol Validating {
    /// Throws every rule the value breaks.
    func validate() throws(ValidationError)
}

/// A value that failed validation; lists every invalid field at once.
public struct ValidationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was being validated (`Event`, `Geofence`, ...).
    public var entity: String
    /// Every invalid field.
    public var issues: [FieldIssue]

    /// Creates an error.
    public init(entity: String, issues: [FieldIssue]) {
        self.entity = entity
        self.issues = issues
    }

    /// Whether `field` is among the issues.
    public func has(_ field: String) -> Bool { issues.contains { $0.field == field } }

    /// `Invalid Geofence: radius: must be between 50 and 10000 metres; name: must not be empty`.
    public var description: String {
        "Invalid \(entity): " + issues.map(\.description).joined(separator: "; ")
    }
}

/// Collects issues while validating, then throws them all together.
struct IssueCollector {
    let entity: String
    var issues: [FieldIssue] = []

    init(_ entity: String) { self.entity = entity }

    mutating func check(_ condition: Bool, _ field: String, _ reason: @autoclosure () -> String) {
        if !condition { issues.append(FieldIssue(field: field, reason: reason())) }
    }

    mutating func merge(_ error: ValidationError, prefix: String) {
        issues += error.issues.map { FieldIssue(field: "\(prefix).\($0.field)", reason: $0.reason) }
    }

    func finish() throws(ValidationError) {
        if !issues.isEmpty { throw ValidationError(entity: entity, issues: issues) }
    }
}

extension String {
    var isBlank: Bool { allSatisfy(\.isWhitespace) }

    /// Without leading and trailing white space in Unicode's sense (the `White_Space` property,
    /// the same test as ``isBlank``): a zero-width space is text, not white space.
    public var trimmingWhiteSpace: String {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(self[first...last])
    }

    /// Whether the text has a control character (C0, DEL, C1). Names and identifiers refuse
    /// them: NUL in particular is cut off by SQLite's C-string reads, so a stored name would
    /// differ from the one sent (issue 20).
    var hasControlCharacter: Bool { unicodeScalars.contains { $0.properties.generalCategory == .control } }

    /// Whether the text has a control character other than tab, line feed and carriage return
    /// (free text such as notes may have line breaks, never NUL).
    var hasControlCharacterBesidesLineBreaks: Bool {
        unicodeScalars.contains { $0.properties.generalCategory == .control && !["\t", "\n", "\r"].contains($0) }
    }
}

extension KeyedDecodingContainer {
    /// The value when the key is present, nil when it is absent; an explicit `null` is refused
    /// (`valueNotFound`). For fields that have a default but cannot be null: absent means "the
    /// default", `null` is a mistake the sender should hear about.
    public func decodeUnlessNull<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard contains(key) else { return nil }
        if try decodeNil(forKey: key) {
            throw DecodingError.valueNotFound(
                T.self, .init(codingPath: codingPath + [key], debugDescription: "cannot be null"))
        }
        return try decode(T.self, forKey: key)
    }
}
