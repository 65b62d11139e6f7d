/// A string enum that is stored and sent by its raw value and read leniently: a value a later
/// version wrote (one this version does not know) reads as ``unknownValue`` instead of failing
/// the whole history or ledger it is part of.
public protocol StoredEnum: RawRepresentable, Codable, CustomStringConvertible where RawValue == String {
    /// What an unknown stored value reads as.
    static var unknownValue: Self { get }
}

extension StoredEnum {
    /// Reads a stored raw value; an unknown one is ``unknownValue``.
    public init(stored raw: String) { self = Self(rawValue: raw) ?? Self.unknownValue }

    /// Decodes the raw value leniently (see ``init(stored:)``).
    public init(from decoder: any Decoder) throws {
        self.init(stored: try decoder.singleValueContainer().decode(String.self))
    }

    /// The raw value.
    public var description: String { rawValue }
}
