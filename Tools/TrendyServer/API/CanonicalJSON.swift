/// A JSON document in one fixed spelling, so two encodings of the same value compare equal: no
/// whitespace, object members sorted by key (as UTF-8 bytes, after unescaping), strings with
/// only the escapes JSON requires, numbers as written. Idempotency keys compare request bodies
/// with it (a client re-encodes its retry).
///
/// Written over the bytes in one pass: `JSONSerialization`'s parse and sorted re-encode took
/// ~21 ms for a 500-event batch (110 KB) and halved batch ingest with idempotency keys.
enum CanonicalJSON {
    /// Nesting deeper than this is not canonicalised (compared as bytes instead): a hostile body
    /// must not exhaust the stack, and each object level copies its members once more. The API's
    /// bodies nest four levels at most.
    static let maximumDepth = 16

    /// The canonical spelling of `bytes`; nil when they are not one JSON document.
    static func canonical(_ bytes: [UInt8]) -> [UInt8]? {
        bytes.withUnsafeBufferPointer { buffer in
            var parser = Parser(input: buffer)
            var out: [UInt8] = []
            out.reserveCapacity(buffer.count)
            guard parser.value(into: &out, depth: 0) else { return nil }
            parser.skipWhitespace()
            return parser.index == buffer.count ? out : nil
        }
    }

    struct Parser {
        let input: UnsafeBufferPointer<UInt8>
        var index = 0

        mutating func skipWhitespace() {
            while index < input.count, [0x20, 0x09, 0x0A, 0x0D].contains(input[index]) { index += 1 }
        }

        mutating func literal(_ word: StaticString, into out: inout [UInt8]) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= input.count else { return false }
            for i in 0..<count where input[index + i] != word.utf8Start[i] { return false }
            out.append(contentsOf: UnsafeBufferPointer(start: word.utf8Start, count: count))
            index += count
            return true
        }

        mutating func value(into out: inout [UInt8], depth: Int) -> Bool {
            guard depth < CanonicalJSON.maximumDepth else { return false }
            skipWhitespace()
            guard index < input.count else { return false }
            switch input[index] {
            case UInt8(ascii: "{"): return object(into: &out, depth: depth)
            case UInt8(ascii: "["): return array(into: &out, depth: depth)
            case UInt8(ascii: "\""):
                guard let text = string() else { return false }
                Self.emit(text, into: &out)
                return true
            case UInt8(ascii: "t"): return literal("true", into: &out)
            case UInt8(ascii: "f"): return literal("false", into: &out)
            case UInt8(ascii: "n"): return literal("null", into: &out)
            default: return number(into: &out)
            }
        }

        mutating func object(into out: inout [UInt8], depth: Int) -> Bool {
            index += 1
            var members: [(key: [UInt8], value: [UInt8])] = []
            skipWhitespace()
            if index < input.count, input[index] == UInt8(ascii: "}") {
                index += 1
                out.append(contentsOf: "{}".utf8)
                return true
            }
            while true {
                skipWhitespace()
                guard index < input.count, input[index] == UInt8(ascii: "\""), let key = string() else { return false }
                skipWhitespace()
                guard index < input.count, input[index] == UInt8(ascii: ":") else { return false }
                index += 1
                var value: [UInt8] = []
                guard self.value(into: &value, depth: depth + 1) else { return false }
                members.append((key, value))
                skipWhitespace()
                guard index < input.count else { return false }
                if input[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                guard input[index] == UInt8(ascii: "}") else { return false }
                index += 1
                break
            }
            members.sort { $0.key.lexicographicallyPrecedes($1.key) }
            out.append(UInt8(ascii: "{"))
            for (i, member) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                Self.emit(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                out.append(contentsOf: member.value)
            }
            out.append(UInt8(ascii: "}"))
            return true
        }

        mutating func array(into out: inout [UInt8], depth: Int) -> Bool {
            index += 1
            out.append(UInt8(ascii: "["))
            skipWhitespace()
            if index < input.count, input[index] == UInt8(ascii: "]") {
                index += 1
                out.append(UInt8(ascii: "]"))
                return true
            }
            var first = true
            while true {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                guard value(into: &out, depth: depth + 1) else { return false }
                skipWhitespace()
                guard index < input.count else { return false }
                if input[index] == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                guard input[index] == UInt8(ascii: "]") else { return false }
                index += 1
                out.append(UInt8(ascii: "]"))
                return true
            }
        }

        /// A number as written, checked against JSON's grammar.
        mutating func number(into out: inout [UInt8]) -> Bool {
            let start = index
            if index < input.count, input[index] == UInt8(ascii: "-") { index += 1 }
            func digits() -> Int {
                let from = index
                while index < input.count, (0x30...0x39).contains(input[index]) { index += 1 }
                return index - from
            }
            guard digits() > 0 else { return false }
            if index < input.count, input[index] == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { return false }
            }
            if index < input.count, input[index] | 0x20 == UInt8(ascii: "e") {
                index += 1
                if index < input.count, input[index] == UInt8(ascii: "+") || input[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard digits() > 0 else { return false }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: input[start..<index]))
            return true
        }

        /// A string's UTF-8 bytes with its escapes resolved; nil when malformed.
        mutating func string() -> [UInt8]? {
            index += 1
            var text: [UInt8] = []
            while index < input.count {
                let byte = input[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""): return text
                case UInt8(ascii: "\\"):
                    guard index < input.count else { return nil }
                    let escape = input[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escape)
                    case UInt8(ascii: "b"): text.append(0x08)
                    case UInt8(ascii: "f"): text.append(0x0C)
                    case UInt8(ascii: "n"): text.append(0x0A)
                    case UInt8(ascii: "r"): text.append(0x0D)
                    case UInt8(ascii: "t"): text.append(0x09)
                    case UInt8(ascii: "u"):
                        guard var scalar = hex4() else { return nil }
                        if (0xD800...0xDBFF).contains(scalar), index + 1 < input.count,
                            input[index] == UInt8(ascii: "\\"), input[index + 1] == UInt8(ascii: "u")
                        {
                            index += 2
                            guard let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let unicode = Unicode.Scalar(scalar) else { return nil }
                        text.append(contentsOf: String(Character(unicode)).utf8)
                    default: return nil
                    }
                case 0..<0x20: return nil
                default: text.append(byte)
                }
            }
            return nil
        }

        mutating func hex4() -> UInt32? {
            guard index + 4 <= input.count else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = input[index]
                index += 1
                let digit: UInt8
                switch byte {
                case 0x30...0x39: digit = byte - 0x30
                case 0x41...0x46: digit = byte - 0x41 + 10
                case 0x61...0x66: digit = byte - 0x61 + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
            }
            return value
        }

        static let hex = Array("0123456789abcdef".utf8)

        /// A string with only the escapes JSON requires.
        static func emit(_ text: [UInt8], into out: inout [UInt8]) {
            out.append(UInt8(ascii: "\""))
            for byte in text {
                switch byte {
                case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
                case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
                case 0..<0x20:
                    out.append(contentsOf: #"\u00"#.utf8)
                    out.append(hex[Int(byte >> 4)])
                    out.append(hex[Int(byte & 0x0F)])
                default: out.append(byte)
                }
            }
            out.append(UInt8(ascii: "\""))
        }
    }
}
