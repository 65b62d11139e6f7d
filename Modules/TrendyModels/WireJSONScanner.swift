import Foundation

/// A forward-only JSON scanner over bytes, for the hottest read of all: change-feed pages.
/// Unlike ``WireJSONReader`` it builds no values: keys are compared in place, callers take only
/// the fields they need, and everything else is skipped (and still validated, so text kept as
/// received is well-formed JSON). A scan that meets anything malformed sets ``failed`` and
/// callers give up (they fall back to `JSONDecoder` for its precise message).
package struct WireJSONScanner {
    /// A string as it appears between its quotes (escapes not yet decoded).
    package struct Token {
        package var start: Int
        package var end: Int
        package var escaped: Bool
    }

    package let bytes: UnsafeBufferPointer<UInt8>
    package var index = 0
    package private(set) var failed = false

    package init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// Marks the scan failed; returns nil so callers can `return fail()`.
    package mutating func fail<T>() -> T? {
        failed = true
        return nil
    }

    package mutating func skipSpace() {
        while index < bytes.count {
            let c = bytes[index]
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            index += 1
        }
    }

    /// The next byte after whitespace, not consumed.
    package mutating func peek() -> UInt8? {
        skipSpace()
        return index < bytes.count ? bytes[index] : nil
    }

    /// Consumes `byte` after whitespace; false (and failed) when something else is there.
    package mutating func consume(_ byte: UInt8) -> Bool {
        guard peek() == byte else {
            failed = true
            return false
        }
        index += 1
        return true
    }

    /// True when only whitespace is left.
    package mutating func atEnd() -> Bool { peek() == nil }

    // MARK: Objects and arrays

    /// Steps to the next member of an object whose `{` was consumed: nil after the closing `}`
    /// (or on malformed input, with ``failed`` set). The caller must consume the member's value.
    package mutating func nextKey(_ first: inout Bool) -> Token? {
        guard let c = peek() else { return fail() }
        if c == UInt8(ascii: "}") {
            index += 1
            return nil
        }
        if !first {
            guard c == UInt8(ascii: ",") else { return fail() }
            index += 1
            skipSpace()
        }
        first = false
        guard let key = stringToken(), consume(UInt8(ascii: ":")) else { return fail() }
        return key
    }

    /// Steps to the next element of an array whose `[` was consumed: false after the closing `]`
    /// (or on malformed input, with ``failed`` set). The caller must consume the element.
    package mutating func nextElement(_ first: inout Bool) -> Bool {
        guard let c = peek() else {
            failed = true
            return false
        }
        if c == UInt8(ascii: "]") {
            index += 1
            return false
        }
        if !first {
            guard c == UInt8(ascii: ",") else {
                failed = true
                return false
            }
            index += 1
        }
        first = false
        return true
    }

    /// Reads an array whose every element `element` reads; nil (failed) if one does not.
    package mutating func array<T>(_ element: (inout WireJSONScanner) -> T?) -> [T]? {
        guard consume(UInt8(ascii: "[")) else { return nil }
        var items: [T] = []
        var first = true
        while nextElement(&first) {
            guard let item = element(&self) else { return fail() }
            items.append(item)
        }
        return failed ? nil : items
    }

    // MARK: Strings

    /// Reads a string token, checking its escapes and its UTF-8 and refusing raw control
    /// characters.
    package mutating func stringToken() -> Token? {
        guard peek() == UInt8(ascii: "\"") else { return fail() }
        index += 1
        let start = index
        var escaped = false
        var ascii = true
        while index < bytes.count {
            let c = bytes[index]
            if c == UInt8(ascii: "\"") {
                index += 1
                let token = Token(start: start, end: index - 1, escaped: escaped)
                // Text kept as received must be valid UTF-8, as JSONDecoder requires.
                guard ascii || String(validating: raw(token), as: UTF8.self) != nil else { return fail() }
                return token
            }
            if c >= 0x80 { ascii = false }
            if c < 0x20 { return fail() }
            if c == UInt8(ascii: "\\") {
                escaped = true
                index += 1
                guard index < bytes.count else { return fail() }
                switch bytes[index] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    break
                case UInt8(ascii: "u"):
                    guard index + 4 < bytes.count else { return fail() }
                    for k in 1...4 where !Self.isHex(bytes[index + k]) { return fail() }
                    index += 4
                default:
                    return fail()
                }
            }
            index += 1
        }
        return fail()
    }

    static func isHex(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)
    }

    /// The token's bytes (escapes as written).
    package func raw(_ token: Token) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes[token.start..<token.end])
    }

    /// Whether the token is exactly `text` (keys are plain ASCII; an escaped token never matches).
    package func equals(_ token: Token, _ text: StaticString) -> Bool {
        let n = text.utf8CodeUnitCount
        guard !token.escaped, token.end - token.start == n else { return false }
        return memcmp(bytes.baseAddress! + token.start, text.utf8Start, n) == 0
    }

    /// The token's text with its escapes decoded.
    package func text(_ token: Token) -> String? {
        let raw = raw(token)
        if !token.escaped { return String(decoding: raw, as: UTF8.self) }
        // Rare: let Foundation decode the escapes of this one string.
        let quoted = "\"" + String(decoding: raw, as: UTF8.self) + "\""
        return (try? JSONSerialization.jsonObject(with: Data(quoted.utf8), options: .fragmentsAllowed)) as? String
    }

    /// Reads a string value.
    package mutating func string() -> String? {
        guard let token = stringToken() else { return nil }
        guard let s = text(token) else { return fail() }
        return s
    }

    /// Reads a string or `null` (`.some(nil)`); nil when it is neither.
    package mutating func optionalString() -> String?? {
        if null() { return .some(nil) }
        guard let s = string() else { return nil }
        return .some(s)
    }

    // MARK: Scalars

    /// Consumes `null` when it is next.
    package mutating func null() -> Bool {
        guard peek() == UInt8(ascii: "n") else { return false }
        return literal("null")
    }

    package mutating func bool() -> Bool? {
        switch peek() {
        case UInt8(ascii: "t"): return literal("true") ? true : nil
        case UInt8(ascii: "f"): return literal("false") ? false : nil
        default: return fail()
        }
    }

    mutating func literal(_ word: StaticString) -> Bool {
        let n = word.utf8CodeUnitCount
        guard index + n <= bytes.count, memcmp(bytes.baseAddress! + index, word.utf8Start, n) == 0 else {
            failed = true
            return false
        }
        index += n
        return true
    }

    /// Reads a number in JSON's grammar.
    package mutating func number() -> Double? {
        skipSpace()
        let start = index
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let intStart = index
        while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
        guard index > intStart, bytes[intStart] != 0x30 || index == intStart + 1 else { return fail() }
        var whole = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            whole = false
            index += 1
            let f = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
            guard index > f else { return fail() }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            whole = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            let e = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
            guard index > e else { return fail() }
        }
        // Short whole numbers (cursors, counts) without going through text.
        if whole, index - intStart <= 15 {
            var v: Int64 = 0
            for k in intStart..<index { v = v * 10 + Int64(bytes[k] - 0x30) }
            return Double(start == intStart ? v : -v)
        }
        guard let d = Double(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)),
            d.isFinite
        else { return fail() }
        return d
    }

    /// A whole number that fits exactly (see ``WireJSONReader/Value/integer``).
    package mutating func integer() -> Int64? {
        guard let n = number() else { return nil }
        guard n == n.rounded(.towardZero), abs(n) <= 9_007_199_254_740_992 else { return fail() }
        return Int64(n)
    }

    // MARK: Skipping

    /// Consumes any value, checking that it is well-formed (depth limited like ``WireJSONReader``).
    package mutating func skipValue(depth: Int = 0) -> Bool {
        guard depth < 64, let c = peek() else {
            failed = true
            return false
        }
        switch c {
        case UInt8(ascii: "{"):
            index += 1
            var first = true
            while nextKey(&first) != nil {
                guard skipValue(depth: depth + 1) else { return false }
            }
            return !failed
        case UInt8(ascii: "["):
            index += 1
            var first = true
            while nextElement(&first) {
                guard skipValue(depth: depth + 1) else { return false }
            }
            return !failed
        case UInt8(ascii: "\""): return stringToken() != nil
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        default: return number() != nil
        }
    }
}

extension ISO8601 {
    /// Parses a date from bytes (the common shape without copying; others through text).
    package static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        switch parseFast(bytes) {
        case .date(let d): return d
        case .invalid: return nil
        case .otherShape: return parse(String(decoding: bytes, as: UTF8.self))
        }
    }
}

extension WireJSONScanner {
    /// Reads a date-time string.
    package mutating func date() -> Date? {
        guard let token = stringToken() else { return nil }
        guard !token.escaped, let d = ISO8601.parse(raw(token)) else { return fail() }
        return d
    }

    /// Reads a UUIDv7 string.
    package mutating func uuidv7() -> UUIDv7? {
        guard let token = stringToken() else { return nil }
        guard !token.escaped, let uuid = UUIDv7.parseCanonical(raw(token)), let id = UUIDv7(uuid) else {
            return fail()
        }
        return id
    }
}
