import Foundation
import Logging

/// Renders ``LogRecord``s as human lines or JSON lines. Values keep their types in JSON:
/// integers, doubles and booleans are numbers/booleans, durations are milliseconds.
public struct LogRenderer: Sendable {
    /// The output format.
    public var format: LogFormat
    /// Whether to colour the level (human format on a terminal only).
    public var colour: Bool

    /// Creates a renderer.
    public init(format: LogFormat, colour: Bool = false) {
        self.format = format
        self.colour = colour
    }

    /// The record as one line, ending in a newline.
    public func render(_ record: LogRecord) -> String {
        switch format {
        case .human: return renderHuman(record)
        case .json: return renderJSON(record)
        }
    }

    /// `2026-11-22T10:00:00.123Z`, built from `gmtime_r` (an order of magnitude cheaper than a
    /// format style on the hot path).
    static func timestamp(_ date: Date) -> String {
        let totalMs = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(totalMs >= 0 ? totalMs / 1000 : (totalMs - 999) / 1000)
        let ms = Int(totalMs - Int64(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var out = [UInt8](repeating: 0, count: 24)
        func put(_ value: Int, _ at: Int, _ width: Int) {
            var v = value
            for i in stride(from: at + width - 1, through: at, by: -1) {
                out[i] = UInt8(48 + v % 10)
                v /= 10
            }
        }
        put(Int(parts.tm_year) + 1900, 0, 4)
        out[4] = 45
        put(Int(parts.tm_mon) + 1, 5, 2)
        out[7] = 45
        put(Int(parts.tm_mday), 8, 2)
        out[10] = 84
        put(Int(parts.tm_hour), 11, 2)
        out[13] = 58
        put(Int(parts.tm_min), 14, 2)
        out[16] = 58
        put(Int(parts.tm_sec), 17, 2)
        out[19] = 46
        put(ms, 20, 3)
        out[23] = 90
        return String(decoding: out, as: UTF8.self)
    }

    func renderHuman(_ record: LogRecord) -> String {
        var line = Self.timestamp(record.timestamp)
        line += " "
        let level = record.level.rawValue.uppercased().padding(toLength: 8, withPad: " ", startingAt: 0)
        if colour {
            line += Self.ansi(for: record.level) + level + "\u{1B}[0m"
        } else {
            line += level
        }
        line += "[\(record.category)] "
        line += record.message
        for key in record.metadata.keys.sorted() {
            line += " \(key)="
            line += Self.humanValue(record.metadata[key]!)
        }
        line += "\n"
        return line
    }

    static func humanValue(_ value: Logger.MetadataValue) -> String {
        switch value {
        case .string(let s):
            return s.contains(" ") || s.isEmpty ? "\"\(s)\"" : s
        case .stringConvertible(let c):
            let s = c.description
            return s.contains(" ") ? "\"\(s)\"" : s
        case .dictionary(let d):
            return "{" + d.keys.sorted().map { "\($0)=\(humanValue(d[$0]!))" }.joined(separator: ",") + "}"
        case .array(let a):
            return "[" + a.map(humanValue).joined(separator: ",") + "]"
        @unknown default:
            return value.description
        }
    }

    static func ansi(for level: Logger.Level) -> String {
        switch level {
        case .trace, .debug: return "\u{1B}[2m"
        case .info: return "\u{1B}[32m"
        case .notice: return "\u{1B}[36m"
        case .warning: return "\u{1B}[33m"
        case .error, .critical: return "\u{1B}[31m"
        }
    }

    static let reservedKeys: Set<String> = ["ts", "level", "category", "message"]

    func renderJSON(_ record: LogRecord) -> String {
        var out = "{\"ts\":"
        out.reserveCapacity(256)
        JSONText.appendString(Self.timestamp(record.timestamp), to: &out)
        out += ",\"level\":"
        JSONText.appendString(record.level.rawValue, to: &out)
        out += ",\"category\":"
        JSONText.appendString(record.category, to: &out)
        out += ",\"message\":"
        JSONText.appendString(record.message, to: &out)
        for key in record.metadata.keys.sorted() where !Self.reservedKeys.contains(key) {
            out += ","
            JSONText.appendString(key, to: &out)
            out += ":"
            Self.appendJSON(record.metadata[key]!, to: &out)
        }
        out += "}\n"
        return out
    }

    static func appendJSON(_ value: Logger.MetadataValue, to out: inout String) {
        switch value {
        case .string(let s):
            JSONText.appendString(s, to: &out)
        case .stringConvertible(let c):
            if let scalar = c as? LogScalar {
                switch scalar {
                case .int(let i): out += String(i)
                case .double(let d) where d.isFinite: out += d.description
                case .milliseconds(let d) where d.isFinite: out += d.description
                case .bool(let b): out += b ? "true" : "false"
                default: JSONText.appendString(scalar.description, to: &out)
                }
                return
            }
            switch c {
            case let b as Bool: out += b ? "true" : "false"
            case let i as Int: out += String(i)
            case let d as Double where d.isFinite: out += String(d)
            default: JSONText.appendString(c.description, to: &out)
            }
        case .dictionary(let d):
            out += "{"
            for (n, key) in d.keys.sorted().enumerated() {
                if n > 0 { out += "," }
                JSONText.appendString(key, to: &out)
                out += ":"
                appendJSON(d[key]!, to: &out)
            }
            out += "}"
        case .array(let a):
            out += "["
            for (n, v) in a.enumerated() {
                if n > 0 { out += "," }
                appendJSON(v, to: &out)
            }
            out += "]"
        @unknown default:
            JSONText.appendString(value.description, to: &out)
        }
    }
}

/// Minimal JSON string escaping for the hot logging path.
enum JSONText {
    static func appendString(_ s: String, to out: inout String) {
        out += "\""
        if !s.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) {
            out += s
            out += "\""
            return
        }
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out +=
                        "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                        + String(scalar.value, radix: 16)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}
