import Foundation

/// A UUID version 7 (RFC 9562): 48-bit Unix milliseconds, version 7, variant 10, and random
/// bits. Time-ordered, so ids sort by creation time. Parsing accepts only v7 text.
public struct UUIDv7: Hashable, Comparable, Sendable, Codable, CustomStringConvertible, LosslessStringConvertible {
    /// The underlying UUID.
    public let uuid: UUID

    /// Wraps `uuid` if it is a version-7, RFC-variant UUID.
    public init?(_ uuid: UUID) {
        let b = uuid.uuid
        guard b.6 >> 4 == 7, b.8 & 0xC0 == 0x80 else { return nil }
        self.uuid = uuid
    }

    /// Parses canonical 8-4-4-4-12 text (either case); rejects other versions and malformed text.
    public init?(_ text: String) {
        guard let uuid = Self.parseCanonical(text) else { return nil }
        self.init(uuid)
    }

    /// Parses text, throwing a readable error.
    public init(validating text: String) throws(UUIDv7Error) {
        guard let uuid = Self.parseCanonical(text) else { throw .malformed(text) }
        guard let v7 = UUIDv7(uuid) else { throw .wrongVersion(text, version: Int(uuid.uuid.6 >> 4)) }
        self = v7
    }

    /// Hex digits by hand: Foundation's `UUID(uuidString:)` goes through `sscanf`, which showed up
    /// in every profile of event ingest.
    static func parseCanonical(_ text: String) -> UUID? {
        var copy = text
        return copy.withUTF8 { parseCanonical($0) }
    }

    /// The same from bytes, without allocating.
    package static func parseCanonical(_ b: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard b.count == 36, b[8] == 45, b[13] == 45, b[18] == 45, b[23] == 45 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: return c - 48
            case 97...102: return c - 87
            case 65...70: return c - 55
            default: return nil
            }
        }
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let ok = withUnsafeMutableBytes(of: &raw) { out -> Bool in
            var i = 0
            var n = 0
            while i < 36 {
                if i == 8 || i == 13 || i == 18 || i == 23 {
                    i += 1
                    continue
                }
                guard let hi = nibble(b[i]), let lo = nibble(b[i + 1]) else { return false }
                out[n] = hi << 4 | lo
                n += 1
                i += 2
            }
            return true
        }
        return ok ? UUID(uuid: raw) : nil
    }

    /// Builds an id from its parts (used by ``UUIDv7Generator``).
    init(milliseconds: UInt64, randA: UInt16, randB: UInt64) {
        let ms = milliseconds & 0xFFFF_FFFF_FFFF
        let a = randA & 0x0FFF
        let b = randB & 0x3FFF_FFFF_FFFF_FFFF
        uuid = UUID(
            uuid: (
                UInt8(truncatingIfNeeded: ms >> 40), UInt8(truncatingIfNeeded: ms >> 32),
                UInt8(truncatingIfNeeded: ms >> 24), UInt8(truncatingIfNeeded: ms >> 16),
                UInt8(truncatingIfNeeded: ms >> 8), UInt8(truncatingIfNeeded: ms),
                UInt8(0x70 | (a >> 8)), UInt8(truncatingIfNeeded: a),
                UInt8(0x80 | UInt8(truncatingIfNeeded: b >> 56)), UInt8(truncatingIfNeeded: b >> 48),
                UInt8(truncatingIfNeeded: b >> 40), UInt8(truncatingIfNeeded: b >> 32),
                UInt8(truncatingIfNeeded: b >> 24), UInt8(truncatingIfNeeded: b >> 16),
                UInt8(truncatingIfNeeded: b >> 8), UInt8(truncatingIfNeeded: b)
            ))
    }

    /// The Unix time in milliseconds stored in the id.
    public var milliseconds: UInt64 {
        let b = uuid.uuid
        return [b.0, b.1, b.2, b.3, b.4, b.5].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    /// The creation time stored in the id (millisecond precision).
    public var timestamp: Date { Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000) }

    /// Lowercase canonical text (formatted by hand: `uuidString` goes through `sprintf`).
    public var description: String {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        return withUnsafeBytes(of: uuid.uuid) { raw in
            String(unsafeUninitializedCapacity: 36) { out in
                var o = 0
                for (i, byte) in raw.enumerated() {
                    if i == 4 || i == 6 || i == 8 || i == 10 {
                        out[o] = 45
                        o += 1
                    }
                    out[o] = hex[Int(byte >> 4)]
                    out[o + 1] = hex[Int(byte & 0x0F)]
                    o += 2
                }
                return o
            }
        }
    }

    /// Ids order by their bytes, which is creation order.
    public static func < (lhs: UUIDv7, rhs: UUIDv7) -> Bool {
        let l = lhs.halves
        let r = rhs.halves
        return l.high != r.high ? l.high < r.high : l.low < r.low
    }

    /// The 16 bytes as two big-endian integers: comparing them compares the bytes in order.
    var halves: (high: UInt64, low: UInt64) {
        withUnsafeBytes(of: uuid.uuid) { b in
            (
                UInt64(bigEndian: b.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                UInt64(bigEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }
    }

    /// Decodes from canonical text, rejecting non-v7 ids.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do {
            self = try UUIDv7(validating: text)
        } catch {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    /// Encodes as lowercase canonical text.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

/// Why text is not a UUIDv7.
public enum UUIDv7Error: Error, Equatable, CustomStringConvertible {
    /// Not a UUID at all.
    case malformed(String)
    /// A UUID, but not version 7 (or not the RFC variant).
    case wrongVersion(String, version: Int)

    /// A readable explanation.
    public var description: String {
        switch self {
        case .malformed(let t): return "'\(t)' is not a UUID (expected 8-4-4-4-12 hexadecimal digits)"
        case .wrongVersion(let t, let v): return "'\(t)' is a version \(v) UUID; a UUIDv7 is required"
        }
    }
}
