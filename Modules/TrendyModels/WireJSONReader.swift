import Foundation

/// A minimal JSON reader for hot paths (the session file at launch, event batches, change
/// pages): objects, arrays, strings (with escapes), numbers, booleans and null. Several times
/// faster than `JSONSerialization` or `JSONDecoder`. Returns nil for anything malformed; callers
/// fall back to `JSONDecoder` when they need its detailed error messages.
package enum WireJSONReader {
    /// A parsed JSON value.
    package indirect enum Value: Sendable {
        case object([String: Value])
        case array([Value])
        case string(String)
        case number(Double)
        case bool(Bool)
        case null

        package subscript(key: String) -> Value? {
            if case .object(let o) = self { return o[key] }
            return nil
        }
        package var string: String? {
            if case .string(let s) = self { return s }
            return nil
        }
        package var number: Double? {
            if case .number(let n) = self { return n }
            return nil
        }
        /// A whole number that fits exactly (JSON numbers are doubles; `1e999`, `NaN`-like input,
        /// fractions and values beyond 2^53 are refused rather than trapping on conversion).
        package var integer: Int64? {
            guard case .number(let n) = self, n.isFinite, n == n.rounded(.towardZero),
                abs(n) <= 9_007_199_254_740_992
            else { return nil }
            return Int64(n)
        }
        package var bool: Bool? {
            if case .bool(let b) = self { return b }
            return nil
        }
        package var array: [Value]? {
            if case .array(let a) = self { return a }
            return nil
        }
        package var isNull: Bool {
            if case .null = self { return true }
            return false
        }
    }

    /// Parses a whole document.
    package static func parse(_ bytes: [UInt8]) -> Value? {
        bytes.withUnsafeBufferPointer { parse($0) }
    }

    /// Parses a whole document.
    package static func parse(_ data: Data) -> Value? {
        data.withUnsafeBytes { raw in parse(raw.bindMemory(to: UInt8.self)) }
    }

    static func parse(_ b: UnsafeBufferPointer<UInt8>) -> Value? {
        var i = 0
        guard let v = value(b, &i, depth: 0) else { return nil }
        skipSpace(b, &i)
        return i == b.count ? v : nil
    }

    static func skipSpace(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) {
        while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
    }

    static func value(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, depth: Int) -> Value? {
        guard depth < 64 else { return nil }
        skipSpace(b, &i)
        guard i < b.count else { return nil }
        switch b[i] {
        case UInt8(ascii: "{"):
            i += 1
            var object: [String: Value] = [:]
            skipSpace(b, &i)
            if i < b.count, b[i] == UInt8(ascii: "}") {
                i += 1
                return .object(object)
            }
            while true {
                skipSpace(b, &i)
                guard let key = string(b, &i) else { return nil }
                skipSpace(b, &i)
                guard i < b.count, b[i] == UInt8(ascii: ":") else { return nil }
                i += 1
                guard let v = value(b, &i, depth: depth + 1) else { return nil }
                object[key] = v
                skipSpace(b, &i)
                guard i < b.count else { return nil }
                if b[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                guard b[i] == UInt8(ascii: "}") else { return nil }
                i += 1
                return .object(object)
            }
        case UInt8(ascii: "["):
            i += 1
            var array: [Value] = []
            skipSpace(b, &i)
            if i < b.count, b[i] == UInt8(ascii: "]") {
                i += 1
                return .array(array)
            }
            while true {
                guard let v = value(b, &i, depth: depth + 1) else { return nil }
                array.append(v)
                skipSpace(b, &i)
                guard i < b.count else { return nil }
                if b[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                guard b[i] == UInt8(ascii: "]") else { return nil }
                i += 1
                return .array(array)
            }
        case UInt8(ascii: "\""):
            return string(b, &i).map(Value.string)
        case UInt8(ascii: "t"): return literal(b, &i, "true", .bool(true))
        case UInt8(ascii: "f"): return literal(b, &i, "false", .bool(false))
        case UInt8(ascii: "n"): return literal(b, &i, "null", .null)
        default:
            let start = i
            while i < b.count,
                (b[i] >= 0x30 && b[i] <= 0x39) || b[i] == 0x2D || b[i] == 0x2B || b[i] == 0x2E
                    || b[i] == 0x65 || b[i] == 0x45
            {
                i += 1
            }
            guard i > start,
                let n = Double(String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self))
            else { return nil }
            return .number(n)
        }
    }

    static func literal(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, _ word: StaticString, _ v: Value) -> Value? {
        let n = word.utf8CodeUnitCount
        guard i + n <= b.count else { return nil }
        for k in 0..<n where b[i + k] != word.utf8Start[k] { return nil }
        i += n
        return v
    }

    static func string(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> String? {
        guard i < b.count, b[i] == UInt8(ascii: "\"") else { return nil }
        i += 1
        let start = i
        var plain = true
        while i < b.count, b[i] != UInt8(ascii: "\"") {
            if b[i] == UInt8(ascii: "\\") {
                plain = false
                i += 1
            } else if b[i] < 0x20 {
                return nil
            }
            i += 1
        }
        guard i < b.count else { return nil }
        let raw = UnsafeBufferPointer(rebasing: b[start..<i])
        i += 1
        if plain { return String(decoding: raw, as: UTF8.self) }
        // Rare: let Foundation handle the escapes of this one string.
        let quoted = "\"" + String(decoding: raw, as: UTF8.self) + "\""
        return (try? JSONSerialization.jsonObject(with: Data(quoted.utf8), options: .fragmentsAllowed)) as? String
    }
}
