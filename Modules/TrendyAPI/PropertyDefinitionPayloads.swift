import TrendyModels

/// A bare JSON value of a `PATCH` (`default_value`): read as a property value once the
/// definition's kind is known (the patch may change the kind too).
public enum BareValue: Codable, Sendable, Hashable {
    /// A string.
    case string(String)
    /// A number.
    case number(Double)
    /// `true` or `false`.
    case bool(Bool)

    /// Decodes a string, a number or a boolean.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let n = try? c.decode(Double.self) {
            self = .number(n)
        } else {
            self = .string(try c.decode(String.self))
        }
    }

    /// Encodes the bare value.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .string(let s): try c.encode(s)
        case .number(let n): try c.encode(n)
        case .bool(let b): try c.encode(b)
        }
    }

    /// The bare form of a property value.
    public init(_ value: PropertyValue) {
        switch value {
        case .text(let v), .select(let v), .url(let v), .email(let v): self = .string(v)
        case .number(let v), .duration(let v): self = .number(v)
        case .boolean(let v): self = .bool(v)
        case .date(let v): self = .string(TrendyJSON.formatDate(v))
        }
    }

    /// The value read as `kind`; a value of another kind when it cannot be (validation then
    /// names the mismatch).
    public func value(as kind: PropertyKind) -> PropertyValue {
        switch (self, kind) {
        case (.number(let n), .number): .number(n)
        case (.number(let n), .duration): .duration(n)
        case (.bool(let b), .boolean): .boolean(b)
        case (.string(let s), .date): TrendyJSON.parseDate(s).map { .date($0) } ?? .text(s)
        case (.string(let s), .select): .select(s)
        case (.string(let s), .url): .url(s)
        case (.string(let s), .email): .email(s)
        case (.string(let s), _): .text(s)
        case (.number(let n), _): .number(n)
        case (.bool(let b), _): .boolean(b)
        }
    }
}

/// `POST /event-types/{id}/properties` (and the sync engine's create): the id is optional, the
/// event type comes from the path when the body leaves it out.
public struct PropertyDefinitionCreate: Codable, Sendable, Hashable {
    /// Client-generated id, or nil.
    public var id: UUIDv7?
    /// The event type, or nil (the path's).
    public var eventTypeId: UUIDv7?
    /// The key.
    public var key: String
    /// The label (the key when absent).
    public var label: String?
    /// The kind.
    public var propertyType: PropertyKind
    /// A select's options.
    public var options: [String]?
    /// The default, bare.
    public var defaultValue: BareValue?
    /// Listing order.
    public var displayOrder: Int?

    enum CodingKeys: String, CodingKey {
        case id
        case eventTypeId = "event_type_id"
        case key, label
        case propertyType = "property_type"
        case options
        case defaultValue = "default_value"
        case displayOrder = "display_order"
    }

    /// The definition this create makes, given the path's type and an id for a body without one.
    public func definition(typeId: UUIDv7, newId: UUIDv7) -> PropertyDefinition {
        PropertyDefinition(
            id: id ?? newId, eventTypeId: typeId, key: key.trimmingWhiteSpace, label: label?.trimmingWhiteSpace,
            propertyType: propertyType, options: options, defaultValue: defaultValue?.value(as: propertyType),
            displayOrder: displayOrder ?? 0)
    }
}

/// `PATCH /property-definitions/{id}`: absent fields keep their value. The key never changes
/// (events keep their values under it): a different key is refused.
public struct PropertyDefinitionUpdate: Codable, Sendable, Equatable {
    /// The key (accepted only unchanged).
    public var key: FieldUpdate<String> = .keep
    /// New label.
    public var label: FieldUpdate<String> = .keep
    /// New kind.
    public var propertyType: FieldUpdate<PropertyKind> = .keep
    /// New options (null: none).
    public var options: FieldUpdate<[String]> = .keep
    /// New default (null: none), bare.
    public var defaultValue: FieldUpdate<BareValue> = .keep
    /// New listing order.
    public var displayOrder: FieldUpdate<Int> = .keep

    /// Creates an empty update.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case key, label
        case propertyType = "property_type"
        case options
        case defaultValue = "default_value"
        case displayOrder = "display_order"
    }

    /// Decodes the tri-state fields.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        key = try c.decodeUpdate(String.self, forKey: .key)
        label = try c.decodeUpdate(String.self, forKey: .label)
        propertyType = try c.decodeUpdate(PropertyKind.self, forKey: .propertyType)
        options = try c.decodeUpdate([String].self, forKey: .options)
        defaultValue = try c.decodeUpdate(BareValue.self, forKey: .defaultValue)
        displayOrder = try c.decodeUpdate(Int.self, forKey: .displayOrder)
    }

    /// Encodes present fields only.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeUpdate(key, forKey: .key)
        try c.encodeUpdate(label, forKey: .label)
        try c.encodeUpdate(propertyType, forKey: .propertyType)
        try c.encodeUpdate(options, forKey: .options)
        try c.encodeUpdate(defaultValue, forKey: .defaultValue)
        try c.encodeUpdate(displayOrder, forKey: .displayOrder)
    }

    /// Fields that may not be cleared.
    public var clearedRequiredFields: [String] {
        [
            (key == .clear, "key"), (label == .clear, "label"), (propertyType == .clear, "property_type"),
            (displayOrder == .clear, "display_order"),
        ].filter(\.0).map(\.1)
    }

    /// Applies the update (the key is never changed; a default is read as the resulting kind).
    public func apply(to definition: PropertyDefinition) -> PropertyDefinition {
        var d = definition
        if let v = label.value { d.label = v }
        if let v = propertyType.value { d.propertyType = v }
        d.options = options.apply(to: d.options)
        switch defaultValue {
        case .keep: break
        case .clear: d.defaultValue = nil
        case .set(let bare): d.defaultValue = bare.value(as: d.propertyType)
        }
        if let v = displayOrder.value { d.displayOrder = v }
        return d
    }
}

extension PropertyDefinitionUpdate: EntityPatch {
    /// Sets every field of `d` (clears what is nil).
    public init(everyFieldOf d: PropertyDefinition) {
        self.init()
        key = .set(d.key)
        label = .set(d.label)
        propertyType = .set(d.propertyType)
        options = d.options.map { .set($0) } ?? .clear
        defaultValue = d.defaultValue.map { .set(BareValue($0)) } ?? .clear
        displayOrder = .set(d.displayOrder)
    }
}
