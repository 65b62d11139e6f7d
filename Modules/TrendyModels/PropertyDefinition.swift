import Foundation

/// The kind of value a custom property holds.
public enum PropertyKind: String, Codable, Sendable, Hashable, CaseIterable {
    /// Free text.
    case text
    /// A finite number.
    case number
    /// Yes or no.
    case boolean
    /// A date-time (strict ISO-8601).
    case date
    /// One of the definition's options.
    case select
    /// Seconds, zero or more.
    case duration
    /// An absolute http(s) URL.
    case url
    /// An email address.
    case email

    /// How the kind is said to a person: "a number", "one of the options".
    public var described: String {
        switch self {
        case .text: "text"
        case .number: "a number"
        case .boolean: "yes or no"
        case .date: "a date-time"
        case .select: "one of the options"
        case .duration: "a duration"
        case .url: "an http(s) URL"
        case .email: "an email address"
        }
    }
}

/// A custom field of an event type ("shots" of a Coffee, "distance" of a Run): the fourth synced
/// entity. An event keeps its values under the definition's ``key``.
public struct PropertyDefinition: Hashable, Sendable, Identifiable, Validating {
    /// Client-generated id.
    public var id: UUIDv7
    /// The event type it belongs to.
    public var eventTypeId: UUIDv7
    /// The name events keep the value under; unique per type case-insensitively, never changed.
    public var key: String
    /// What a person reads.
    public var label: String
    /// The kind of value.
    public var propertyType: PropertyKind
    /// A select's options (nil for every other kind).
    public var options: [String]?
    /// The value a new event gets when none is given.
    public var defaultValue: PropertyValue?
    /// Where it is listed among its type's properties (ascending).
    public var displayOrder: Int

    /// Creates a definition.
    public init(
        id: UUIDv7, eventTypeId: UUIDv7, key: String, label: String? = nil, propertyType: PropertyKind,
        options: [String]? = nil, defaultValue: PropertyValue? = nil, displayOrder: Int = 0
    ) {
        self.id = id
        self.eventTypeId = eventTypeId
        self.key = key
        self.label = label ?? key
        self.propertyType = propertyType
        self.options = options
        self.defaultValue = defaultValue
        self.displayOrder = displayOrder
    }

    /// The most properties a type has: an event holds at most 50 values, so a type's defaults
    /// always fit.
    public static let maximumPerType = 50

    /// Keys a property cannot have: the importer's and the exporter's own columns, so a file
    /// never says two things in one column.
    public static let reservedKeys: Set<String> = [
        "id", "type", "timestamp", "end_date", "notes", "all_day", "external_id", "source", "location_name",
        "latitude", "longitude", "properties", "time_zone",
    ]

    /// Whether `key` is a well-formed key: a letter, then letters, digits or `_`, at most 64.
    public static func isKey(_ key: String) -> Bool {
        let u = Array(key.utf8)
        func letter(_ c: UInt8) -> Bool { (65...90).contains(c) || (97...122).contains(c) }
        return (1...64).contains(u.count) && letter(u[0])
            && u.allSatisfy { letter($0) || (48...57).contains($0) || $0 == UInt8(ascii: "_") }
    }

    /// Checks every field and reports all problems at once.
    public func validate() throws(ValidationError) {
        var c = IssueCollector("PropertyDefinition")
        c.check(Self.isKey(key), "key", "must start with a letter and hold only letters, digits and _ (at most 64)")
        c.check(!Self.reservedKeys.contains(key.lowercased()), "key", "'\(key)' is a column of every event")
        c.check(!label.isBlank && label.count <= 100, "label", "must be 1 to 100 characters")
        c.check(!label.hasControlCharacter, "label", "must not contain control characters")
        c.check((0...100_000).contains(displayOrder), "display_order", "must be from 0 to 100000")
        if propertyType == .select {
            let list = options ?? []
            c.check(!list.isEmpty && list.count <= 100, "options", "a select needs 1 to 100 options")
            c.check(
                list.allSatisfy { !$0.isBlank && $0.count <= 100 && !$0.hasControlCharacter }, "options",
                "each option must be 1 to 100 characters without control characters")
            c.check(
                Set(list.map { $0.lowercased() }).count == list.count, "options", "the options must differ")
        } else {
            c.check(options == nil, "options", "only a select has options")
        }
        if let defaultValue {
            for issue in issues(for: defaultValue, field: "default_value") { c.check(false, issue.field, issue.reason) }
        }
        try c.finish()
    }

    /// Why `value` cannot be this property's value (empty when it can). `field` names it in the
    /// issues (`properties.shots`).
    public func issues(for value: PropertyValue, field: String? = nil) -> [FieldIssue] {
        let field = field ?? "properties.\(key)"
        let own = value.issues(field: field)
        if !own.isEmpty { return own }
        let kindMatches: Bool =
            switch (propertyType, value) {
            case (.text, .text), (.number, .number), (.boolean, .boolean), (.date, .date), (.select, .select),
                (.duration, .duration), (.url, .url), (.email, .email):
                true
            default: false
            }
        guard kindMatches else {
            return [
                FieldIssue(
                    field: field,
                    reason: "\(key) is \(propertyType.described) (\(propertyType.rawValue)), not \(value.typeName)")
            ]
        }
        if case .url(let link) = value,
            !["http", "https"].contains(URL(string: link)?.scheme?.lowercased() ?? "")
                || (URL(string: link)?.host?.isEmpty ?? true)
        {
            return [FieldIssue(field: field, reason: "\(key) is an http(s) URL; '\(link)' is not one")]
        }
        if case .select(let choice) = value, !(options ?? []).contains(choice) {
            return [
                FieldIssue(
                    field: field,
                    reason: "'\(choice)' is not an option of \(key) (\((options ?? []).joined(separator: ", ")))")
            ]
        }
        return []
    }

    /// The issues of an event's values that are new or changed against `before`, each checked
    /// against the definition of its key (any case) among `definitions` — the rule the device and
    /// the server both apply (D53). A key no definition has is kept as it is (another device's
    /// or an older client's value, or one whose definition was deleted): never refused. A value
    /// that did not change is not checked again (its definition may have changed kind since), so
    /// editing an event's note never fails on an old value.
    public static func issues(
        of properties: [String: PropertyValue], before: [String: PropertyValue], in definitions: [PropertyDefinition]
    ) -> [FieldIssue] {
        guard !properties.isEmpty, properties != before, !definitions.isEmpty else { return [] }
        let byKey = Dictionary(definitions.map { ($0.key.lowercased(), $0) }, uniquingKeysWith: { a, _ in a })
        return properties.sorted { $0.key < $1.key }.flatMap { key, value -> [FieldIssue] in
            guard before[key] != value, let definition = byKey[key.lowercased()] else { return [] }
            return definition.issues(for: value, field: "properties.\(key)")
        }
    }

    /// Reads a value typed by a person or a file (`--prop shots=2`, a CSV cell) as this property's
    /// kind: numbers as numbers, `yes`/`no`, ISO-8601 dates, durations as seconds, `1:30:00` or
    /// `1h30m`, a select's option in any case. Throws a message that names the property.
    /// `field` names it in the error (a definition's own default: `default_value`).
    public func parse(_ text: String, field: String? = nil) throws(ValidationError) -> PropertyValue {
        let raw = text.trimmingCharacters(in: .whitespaces)
        let field = field ?? "properties.\(key)"
        let entity = field.hasPrefix("properties.") ? "Event" : "PropertyDefinition"
        func refuse(_ reason: String) -> ValidationError {
            ValidationError(entity: entity, issues: [FieldIssue(field: field, reason: reason)])
        }
        let value: PropertyValue
        switch propertyType {
        case .text:
            value = .text(text)
        case .number:
            guard Self.isDecimal(raw), let n = Double(raw), n.isFinite else {
                throw refuse("\(key) is a number; '\(raw)' is not one")
            }
            value = .number(n)
        case .boolean:
            switch raw.lowercased() {
            case "true", "yes", "y", "1", "on": value = .boolean(true)
            case "false", "no", "n", "0", "off": value = .boolean(false)
            default: throw refuse("\(key) is yes or no; '\(raw)' is neither")
            }
        case .date:
            guard let d = TrendyJSON.parseDate(raw) else {
                throw refuse("\(key) is a date-time like 2026-03-14T09:30:00Z; '\(raw)' is not one")
            }
            value = .date(d)
        case .duration:
            guard let seconds = Self.seconds(raw) else {
                throw refuse("\(key) is a duration: seconds, 1:30:00 or 1h30m; '\(raw)' is not one")
            }
            value = .duration(seconds)
        case .select:
            guard let option = (options ?? []).first(where: { $0.lowercased() == raw.lowercased() }) else {
                throw refuse("'\(raw)' is not an option of \(key) (\((options ?? []).joined(separator: ", ")))")
            }
            value = .select(option)
        case .url:
            value = .url(raw)
        case .email:
            value = .email(raw)
        }
        let problems = issues(for: value, field: field)
        if !problems.isEmpty { throw ValidationError(entity: entity, issues: problems) }
        return value
    }

    /// Whether `text` is a decimal number as people write it (`2`, `-0.5`, `1e3`), not a
    /// hexadecimal one (`0x10`), `nan` or `inf`.
    static func isDecimal(_ text: String) -> Bool {
        !text.isEmpty && text.unicodeScalars.allSatisfy { "0123456789.eE+-".unicodeScalars.contains($0) }
    }

    /// Seconds from `90`, `1:30` (m:s), `1:02:03` (h:m:s) or `1h2m3s`; nil when it is none.
    static func seconds(_ text: String) -> Double? {
        if isDecimal(text), let n = Double(text) { return n.isFinite && n >= 0 ? n : nil }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 2 || parts.count == 3 {
            // The first part any size (90:00 is ninety minutes), the others under 60.
            let numbers = parts.map { isDecimal(String($0)) ? Double($0) : nil }
            guard numbers.allSatisfy({ $0 != nil && $0! >= 0 }), numbers.dropFirst().allSatisfy({ $0! < 60 }) else {
                return nil
            }
            return numbers.reduce(0) { $0 * 60 + $1! }
        }
        var total = 0.0
        var digits = ""
        var sawUnit = false
        for ch in text.lowercased() {
            if ch.isNumber || ch == "." {
                digits.append(ch)
                continue
            }
            guard let n = Double(digits), let unit = ["h": 3_600.0, "m": 60, "s": 1][String(ch)] else { return nil }
            total += n * unit
            digits = ""
            sawUnit = true
        }
        return sawUnit && digits.isEmpty ? total : nil
    }
}

extension PropertyDefinition: Codable {
    enum CodingKeys: String, CodingKey {
        case id
        case eventTypeId = "event_type_id"
        case key, label
        case propertyType = "property_type"
        case options
        case defaultValue = "default_value"
        case displayOrder = "display_order"
    }

    /// Decodes Trendy's shape; `default_value` is a bare JSON value read as `property_type`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(UUIDv7.self, forKey: .id)
        eventTypeId = try c.decode(UUIDv7.self, forKey: .eventTypeId)
        key = try c.decode(String.self, forKey: .key)
        label = try c.decodeIfPresent(String.self, forKey: .label) ?? key
        propertyType = try c.decode(PropertyKind.self, forKey: .propertyType)
        options = try c.decodeIfPresent([String].self, forKey: .options)
        displayOrder = try c.decodeIfPresent(Int.self, forKey: .displayOrder) ?? 0
        defaultValue = try PropertyValue.bare(c, forKey: .defaultValue, as: propertyType)
    }

    /// Encodes Trendy's shape (`default_value` as a bare value; absent fields left out).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(eventTypeId, forKey: .eventTypeId)
        try c.encode(key, forKey: .key)
        try c.encode(label, forKey: .label)
        try c.encode(propertyType, forKey: .propertyType)
        try c.encodeIfPresent(options, forKey: .options)
        try defaultValue?.encodeBare(to: &c, forKey: .defaultValue)
        try c.encode(displayOrder, forKey: .displayOrder)
    }
}

extension PropertyValue {
    /// A bare JSON value (`3`, `"oat"`, `true`) read as a value of `kind`; nil when absent or null.
    public static func bare<K: CodingKey>(_ c: KeyedDecodingContainer<K>, forKey key: K, as kind: PropertyKind) throws
        -> PropertyValue?
    {
        guard c.contains(key), try !c.decodeNil(forKey: key) else { return nil }
        switch kind {
        case .text: return .text(try c.decode(String.self, forKey: key))
        case .number: return .number(try c.decode(Double.self, forKey: key))
        case .boolean: return .boolean(try c.decode(Bool.self, forKey: key))
        case .date: return .date(try c.decode(Date.self, forKey: key))
        case .duration: return .duration(try c.decode(Double.self, forKey: key))
        case .select: return .select(try c.decode(String.self, forKey: key))
        case .url: return .url(try c.decode(String.self, forKey: key))
        case .email: return .email(try c.decode(String.self, forKey: key))
        }
    }

    /// Encodes the bare value (no `{"type", "value"}` wrapper).
    public func encodeBare<K: CodingKey>(to c: inout KeyedEncodingContainer<K>, forKey key: K) throws {
        switch self {
        case .text(let v), .select(let v), .url(let v), .email(let v): try c.encode(v, forKey: key)
        case .number(let v), .duration(let v): try c.encode(v, forKey: key)
        case .boolean(let v): try c.encode(v, forKey: key)
        case .date(let v): try c.encode(v, forKey: key)
        }
    }

    /// The value as a person types it (`2`, `oat`, `yes`, `2026-03-14T09:30:00Z`, `1:30:00`).
    public var text: String {
        switch self {
        case .text(let v), .select(let v), .url(let v), .email(let v): v
        case .number(let v): v.rounded() == v && abs(v) < 1e15 ? String(Int64(v)) : String(v)
        case .boolean(let v): v ? "yes" : "no"
        case .date(let v): TrendyJSON.formatDate(v)
        case .duration(let v):
            v.rounded() == v && v < 1e9
                ? String(format: "%d:%02d:%02d", Int(v) / 3_600, Int(v) / 60 % 60, Int(v) % 60) : String(v)
        }
    }
}
