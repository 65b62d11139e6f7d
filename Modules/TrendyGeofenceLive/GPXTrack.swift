import Foundation
import TrendyGeofence
import TrendyModels

/// Why a GPX file was refused: what is wrong and where (line, and the element when there is one).
public struct GPXError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 1-based line.
    public var line: Int
    /// The element involved, if any (`trkpt`, `time`, ...).
    public var element: String?
    /// What is wrong.
    public var message: String

    /// Creates an error.
    public init(line: Int, element: String?, message: String) {
        self.line = line
        self.element = element
        self.message = message
    }

    /// `line 12, <trkpt>: lat "abc" is not a latitude between -90 and 90`.
    public var description: String {
        if let element { return "line \(line), <\(element)>: \(message)" }
        return "line \(line): \(message)"
    }
}

/// Reads the points of a GPX 1.0/1.1 file: track points (`trkpt`), route points (`rtept`) and
/// waypoints (`wpt`), in document order, with their `time` when present.
///
/// A small XML reader of its own (elements, attributes, text, comments, CDATA, processing
/// instructions, the five named entities and character references), so malformed input of any
/// kind ends in a ``GPXError`` with a line number, never a crash, and a large track parses
/// without building a document tree.
public enum GPXTrack {
    /// Files larger than this are refused (a day of 1 Hz fixes is about 10 MB).
    public static let maximumBytes = 512 * 1024 * 1024

    /// Parses `bytes` as GPX.
    public static func parse(_ bytes: [UInt8]) throws(GPXError) -> [LocationFix] {
        guard bytes.count <= maximumBytes else {
            throw GPXError(line: 1, element: nil, message: "the file is larger than \(maximumBytes) bytes")
        }
        var reader = GPXReader(bytes: bytes)
        return try reader.read()
    }

    /// Parses the file at `url`.
    public static func parse(contentsOf url: URL) throws -> [LocationFix] {
        let data = try Data(contentsOf: url)
        return try parse([UInt8](data))
    }
}

struct GPXReader {
    let bytes: [UInt8]
    var i = 0
    var line = 1
    var stack: [String] = []
    var fixes: [LocationFix] = []
    // The point being read: its start line, coordinate and time.
    var point: (line: Int, depth: Int, coordinate: Coordinate, time: Date?)?
    var text: [UInt8] = []
    var sawRoot = false

    init(bytes: [UInt8]) { self.bytes = bytes }

    func fail(_ message: String, element: String? = nil, line: Int? = nil) -> GPXError {
        GPXError(line: line ?? self.line, element: element, message: message)
    }

    mutating func advance() {
        if bytes[i] == UInt8(ascii: "\n") { line += 1 }
        i += 1
    }

    func starts(with s: String) -> Bool {
        var j = i
        for b in s.utf8 {
            guard j < bytes.count, bytes[j] == b else { return false }
            j += 1
        }
        return true
    }

    /// Skips to just after `end`, failing with `what` if the file ends first.
    mutating func skip(past end: String, what: String) throws(GPXError) {
        let start = line
        while i < bytes.count {
            if starts(with: end) {
                for _ in 0..<end.utf8.count { advance() }
                return
            }
            advance()
        }
        throw fail("unterminated \(what)", line: start)
    }

    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }
    static func isNameByte(_ b: UInt8) -> Bool {
        (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39) || b == 0x2D || b == 0x5F
            || b == 0x2E || b == 0x3A || b >= 0x80
    }

    mutating func name() throws(GPXError) -> String {
        let start = i
        while i < bytes.count, Self.isNameByte(bytes[i]) { i += 1 }
        guard i > start else { throw fail("expected an element or attribute name") }
        let full = String(decoding: bytes[start..<i], as: UTF8.self)
        // Namespace prefixes (gpx:trkpt) do not matter here.
        if let colon = full.lastIndex(of: ":") { return String(full[full.index(after: colon)...]) }
        return full
    }

    mutating func skipSpace() {
        while i < bytes.count, Self.isSpace(bytes[i]) { advance() }
    }

    mutating func read() throws(GPXError) -> [LocationFix] {
        // A UTF-8 byte order mark is allowed.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "<") {
                if starts(with: "<!--") {
                    try skip(past: "-->", what: "comment")
                } else if starts(with: "<![CDATA[") {
                    let start = i + 9
                    try skip(past: "]]>", what: "CDATA section")
                    text.append(contentsOf: bytes[start..<(i - 3)])
                } else if starts(with: "<?") {
                    try skip(past: "?>", what: "processing instruction")
                } else if starts(with: "<!") {
                    try skip(past: ">", what: "declaration")
                } else if starts(with: "</") {
                    try endTag()
                } else {
                    try startTag()
                }
            } else {
                if stack.isEmpty, !Self.isSpace(bytes[i]) { throw fail("text outside the root element") }
                if bytes[i] == UInt8(ascii: "&") {
                    var decoded: [UInt8] = []
                    try entity(into: &decoded)
                    text.append(contentsOf: decoded)
                } else {
                    text.append(bytes[i])
                    advance()
                }
            }
        }
        if let open = stack.last { throw fail("the file ends before </\(open)>", element: open) }
        guard sawRoot else { throw fail("not a GPX file: no <gpx> element") }
        guard !fixes.isEmpty else { throw fail("the file has no track points (trkpt, rtept or wpt)") }
        return fixes
    }

    mutating func entity(into out: inout [UInt8]) throws(GPXError) {
        let start = i
        while i < bytes.count, bytes[i] != UInt8(ascii: ";"), i - start < 12 { i += 1 }
        guard i < bytes.count, bytes[i] == UInt8(ascii: ";") else { throw fail("unterminated entity reference") }
        let body = String(decoding: bytes[(start + 1)..<i], as: UTF8.self)
        i += 1
        let named: [String: String] = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'"]
        if let v = named[body] {
            out.append(contentsOf: Array(v.utf8))
            return
        }
        var scalar: UInt32?
        if body.hasPrefix("#x") {
            scalar = UInt32(body.dropFirst(2), radix: 16)
        } else if body.hasPrefix("#") {
            scalar = UInt32(body.dropFirst(), radix: 10)
        }
        guard let scalar, let u = Unicode.Scalar(scalar) else { throw fail("unknown entity &\(body);") }
        out.append(contentsOf: Array(String(Character(u)).utf8))
    }

    mutating func startTag() throws(GPXError) {
        let tagLine = line
        i += 1
        let element = try name()
        var attributes: [String: String] = [:]
        var selfClosing = false
        while true {
            skipSpace()
            guard i < bytes.count else { throw fail("the file ends inside <\(element)>", element: element) }
            if bytes[i] == UInt8(ascii: ">") {
                i += 1
                break
            }
            if starts(with: "/>") {
                i += 2
                selfClosing = true
                break
            }
            let attribute = try name()
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "=") else {
                throw fail("attribute \(attribute) has no value", element: element)
            }
            i += 1
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") || bytes[i] == UInt8(ascii: "'") else {
                throw fail("attribute \(attribute)'s value is not quoted", element: element)
            }
            let quote = bytes[i]
            i += 1
            var value: [UInt8] = []
            while i < bytes.count, bytes[i] != quote {
                if bytes[i] == UInt8(ascii: "<") { throw fail("'<' inside attribute \(attribute)", element: element) }
                if bytes[i] == UInt8(ascii: "&") {
                    try entity(into: &value)
                } else {
                    value.append(bytes[i])
                    advance()
                }
            }
            guard i < bytes.count else { throw fail("attribute \(attribute)'s value never ends", element: element) }
            i += 1
            attributes[attribute] = String(decoding: value, as: UTF8.self)
        }
        if stack.isEmpty {
            guard !sawRoot else { throw fail("a second root element <\(element)>", element: element) }
            guard element == "gpx" else {
                throw fail("not a GPX file: the root element is <\(element)>", element: element)
            }
            sawRoot = true
        }
        text.removeAll(keepingCapacity: true)
        if element == "trkpt" || element == "rtept" || element == "wpt" {
            guard point == nil else { throw fail("a point inside a point", element: element) }
            let coordinate = try Self.coordinate(attributes, element: element, line: tagLine)
            if selfClosing {
                fixes.append(LocationFix(coordinate))
            } else {
                point = (tagLine, stack.count + 1, coordinate, nil)
            }
        }
        if !selfClosing { stack.append(element) }
    }

    static func coordinate(_ attributes: [String: String], element: String, line: Int) throws(GPXError)
        -> Coordinate
    {
        func number(_ key: String, _ range: ClosedRange<Double>, _ what: String) throws(GPXError) -> Double {
            guard let raw = attributes[key] else {
                throw GPXError(line: line, element: element, message: "missing the \(key) attribute")
            }
            let trimmed = raw.trimmingCharacters(in: .whitespaces)
            guard let v = Double(trimmed), v.isFinite, range.contains(v) else {
                throw GPXError(
                    line: line, element: element,
                    message: "\(key) \"\(raw.prefix(40))\" is not a \(what) between \(Int(range.lowerBound)) and "
                        + "\(Int(range.upperBound))")
            }
            return v
        }
        return Coordinate(
            latitude: try number("lat", -90...90, "latitude"), longitude: try number("lon", -180...180, "longitude"))
    }

    mutating func endTag() throws(GPXError) {
        i += 2
        let element = try name()
        skipSpace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: ">") else {
            throw fail("malformed closing tag </\(element)", element: element)
        }
        i += 1
        guard let open = stack.last else { throw fail("</\(element)> closes nothing", element: element) }
        guard open == element else { throw fail("expected </\(open)>, found </\(element)>", element: element) }
        stack.removeLast()
        if element == "time", var p = point, stack.count == p.depth {
            let raw = String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let date = ISO8601.parse(raw) else {
                throw fail("\"\(raw.prefix(40))\" is not an ISO 8601 time", element: "time")
            }
            p.time = date
            point = p
        }
        if let p = point, stack.count == p.depth - 1 {
            fixes.append(LocationFix(p.coordinate, time: p.time))
            point = nil
        }
        text.removeAll(keepingCapacity: true)
    }
}
