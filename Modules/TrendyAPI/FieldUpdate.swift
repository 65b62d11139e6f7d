/// One field of a partial update: absent keeps the stored value, `null` clears it, a value sets it.
public enum FieldUpdate<Value: Codable & Sendable & Equatable>: Sendable, Equatable {
    /// Not in the request: keep the stored value.
    case keep
    /// `null` in the request: clear the stored value.
    case clear
    /// A new value.
    case set(Value)

    /// The new value, if any.
    public var value: Value? {
        if case .set(let v) = self { return v }
        return nil
    }

    /// Whether the field is in the request at all.
    public var isPresent: Bool { self != .keep }

    /// Applies the update to a stored optional value.
    public func apply(to current: Value?) -> Value? {
        switch self {
        case .keep: return current
        case .clear: return nil
        case .set(let v): return v
        }
    }
}

extension KeyedDecodingContainer {
    /// Decodes a tri-state field: missing → `.keep`, `null` → `.clear`, else `.set`.
    public func decodeUpdate<V>(_ type: V.Type, forKey key: Key) throws -> FieldUpdate<V> {
        guard contains(key) else { return .keep }
        if try decodeNil(forKey: key) { return .clear }
        return .set(try decode(V.self, forKey: key))
    }
}

extension KeyedEncodingContainer {
    /// Encodes a tri-state field: `.keep` writes nothing, `.clear` writes an explicit `null`.
    public mutating func encodeUpdate<V>(_ update: FieldUpdate<V>, forKey key: Key) throws {
        switch update {
        case .keep: break
        case .clear: try encodeNil(forKey: key)
        case .set(let v): try encode(v, forKey: key)
        }
    }
}
