import Foundation

/// A stored entity as the server returns it: the entity's own fields plus `created_at` and
/// `updated_at`, flattened into one JSON object.
public struct Timestamped<Value: Codable & Sendable & Hashable>: Codable, Sendable, Hashable {
    /// The entity.
    public var value: Value
    /// When the server first stored it.
    public var createdAt: Date
    /// When the server last changed it.
    public var updatedAt: Date

    /// Creates a stored entity.
    public init(_ value: Value, createdAt: Date, updatedAt: Date) {
        self.value = value
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    enum CodingKeys: String, CodingKey {
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    /// Decodes the entity and the two timestamps from the same object.
    public init(from decoder: any Decoder) throws {
        value = try Value(from: decoder)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        createdAt = try c.decode(Date.self, forKey: .createdAt)
        updatedAt = try c.decode(Date.self, forKey: .updatedAt)
    }

    /// Encodes the entity and the two timestamps into the same object.
    public func encode(to encoder: any Encoder) throws {
        try value.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(updatedAt, forKey: .updatedAt)
    }
}
