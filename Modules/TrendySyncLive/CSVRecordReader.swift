import Foundation

/// A streaming RFC 4180 CSV reader (comma-separated, `"` quoting, `""` for a quote inside a
/// quoted field, CRLF or LF line ends, a UTF-8 byte-order mark skipped). It reads 64 KB at a
/// time, so memory stays flat for any file size, and it knows the physical line each record
/// starts on, so a quoted field with line breaks does not shift later line numbers.
///
/// Malformed records are returned with an ``Record/error`` instead of being guessed at: a quoted
/// field that is never closed (which would swallow the rest of the file), a character after a
/// closing quote, text that is not UTF-8. Spaces and tabs around fields are trimmed.
struct CSVRecordReader {
    /// One record.
    struct Record: Equatable {
        /// The physical line it starts on (1-based).
        var line: Int
        /// Its fields (empty when ``error`` is set).
        var fields: [String]
        /// Why it could not be read.
        var error: String?
    }

    private let stream: InputStream
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    private var count = 0
    private var index = 0
    private var finished = false
    private var started = false
    /// The physical line the reader is on.
    private(set) var line = 1

    private static let quote = UInt8(ascii: "\"")
    private static let comma = UInt8(ascii: ",")
    private static let cr = UInt8(ascii: "\r")
    private static let lf = UInt8(ascii: "\n")
    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")

    /// Reads from `stream` (opened here, closed at the end of the file).
    init(stream: InputStream) {
        self.stream = stream
        stream.open()
    }

    /// The next record, or nil at the end of the file.
    mutating func next() throws -> Record? {
        if !started {
            started = true
            // A UTF-8 byte-order mark.
            if try peek() == 0xEF {
                var bom: [UInt8] = []
                while bom.count < 3, let b = try peek(), b == [0xEF, 0xBB, 0xBF][bom.count] {
                    bom.append(b)
                    index += 1
                }
                if bom.count != 3 { return Record(line: line, fields: [], error: "the file is not UTF-8 text") }
            }
        }
        guard try peek() != nil else { return nil }
        let start = line
        var fields: [String] = []
        var field: [UInt8] = []
        while true {
            field.removeAll(keepingCapacity: true)
            while let b = try peek(), b == Self.space || b == Self.tab { index += 1 }
            if try peek() == Self.quote {
                index += 1
                // A quoted field: runs to the closing quote, line breaks and commas included.
                while true {
                    guard let b = try take() else {
                        return Record(
                            line: start, fields: [],
                            error: "a quoted field opened on line \(start) is never closed (the file ends inside it)")
                    }
                    if b == Self.quote {
                        if try peek() == Self.quote {
                            index += 1
                            field.append(Self.quote)
                        } else {
                            break
                        }
                    } else {
                        if b == Self.lf { line += 1 }
                        field.append(b)
                    }
                }
                while let b = try peek(), b == Self.space || b == Self.tab { index += 1 }
                let after = try peek()
                guard after == nil || after == Self.comma || after == Self.cr || after == Self.lf else {
                    let at = line
                    try skipLine()
                    return Record(
                        line: start, fields: [], error: "unexpected text after a closing quote on line \(at)")
                }
            } else {
                while let b = try peek(), b != Self.comma, b != Self.cr, b != Self.lf {
                    field.append(b)
                    index += 1
                }
                while let last = field.last, last == Self.space || last == Self.tab { field.removeLast() }
            }
            guard let text = String(validating: field, as: UTF8.self) else {
                try skipLine()
                return Record(line: start, fields: [], error: "the text is not UTF-8")
            }
            fields.append(text)
            switch try take() {
            case Self.comma?: continue
            case Self.cr?:
                if try peek() == Self.lf { index += 1 }
                line += 1
            case Self.lf?: line += 1
            default: break  // the end of the file
            }
            return Record(line: start, fields: fields, error: nil)
        }
    }

    /// Skips to the start of the next line.
    private mutating func skipLine() throws {
        while let b = try take() {
            if b == Self.lf {
                line += 1
                return
            }
            if b == Self.cr {
                if try peek() == Self.lf { index += 1 }
                line += 1
                return
            }
        }
    }

    private mutating func take() throws -> UInt8? {
        guard let b = try peek() else { return nil }
        index += 1
        return b
    }

    private mutating func peek() throws -> UInt8? {
        if index < count { return buffer[index] }
        guard !finished else { return nil }
        let n = buffer.withUnsafeMutableBufferPointer { stream.read($0.baseAddress!, maxLength: $0.count) }
        if n < 0 {
            finished = true
            stream.close()
            throw EventImporter.FileError(
                description: "cannot read the file: \(stream.streamError?.localizedDescription ?? "read error")")
        }
        if n == 0 {
            finished = true
            stream.close()
            return nil
        }
        count = n
        index = 0
        return buffer[0]
    }
}
