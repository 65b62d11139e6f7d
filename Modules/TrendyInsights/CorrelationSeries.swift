/// One input of a correlation run: one value per calendar day, starting at the run's `firstDay`.
///
/// A type's values are its daily counts (0 = not logged that day). A property's values are the
/// day's mean of that property, `Double.nan` on days without a value.
public struct DailySeries: Sendable, Hashable {
    /// What the series measures.
    public enum Kind: Sendable, Hashable {
        /// How many events of an event type were logged each day.
        case type(typeId: String)
        /// The daily mean of a numeric property of an event type.
        case property(typeId: String, key: String)
    }

    /// Stable id: `"type:<typeId>"` or `"prop:<typeId>:<key>"`.
    public var id: String
    /// What a person calls it: `"Coffee"`, `"Sleep's hours"`.
    public var label: String
    /// The unit of a property (`"hours"`); nil for types, whose values are counts.
    public var unit: String?
    /// Whether this is a type's counts or a property's values, and whose.
    public var kind: Kind
    /// One value per day from the run's first day; see the type's notes for what missing means.
    public var values: [Double]

    /// A series with every field given.
    public init(id: String, label: String, unit: String? = nil, kind: Kind, values: [Double]) {
        self.id = id
        self.label = label
        self.unit = unit
        self.kind = kind
        self.values = values
    }

    /// A type's daily counts, with the conventional id `"type:<typeId>"`.
    public static func type(_ typeId: String, label: String, counts: [Double]) -> DailySeries {
        DailySeries(id: "type:\(typeId)", label: label, kind: .type(typeId: typeId), values: counts)
    }

    /// A property's daily means (`.nan` = no value), with the conventional id `"prop:<typeId>:<key>"`.
    public static func property(
        _ typeId: String, key: String, label: String, unit: String? = nil, values: [Double]
    ) -> DailySeries {
        DailySeries(
            id: "prop:\(typeId):\(key)", label: label, unit: unit, kind: .property(typeId: typeId, key: key),
            values: values)
    }

    /// True for a type's counts, false for a property's values.
    public var isType: Bool {
        if case .type = kind { return true }
        return false
    }

    /// The event type this series belongs to (the type itself, or the type that owns the property).
    public var typeId: String {
        switch kind {
        case .type(let typeId): typeId
        case .property(let typeId, _): typeId
        }
    }
}
