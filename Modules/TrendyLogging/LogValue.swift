import Foundation
import Logging

/// A typed context value. Wrapping every typed value in this one enum means a handler needs a
/// single cast to learn a value's type, which keeps the logging hot path cheap.
public enum LogScalar: CustomStringConvertible, Sendable {
    /// An integer (a JSON number).
    case int(Int)
    /// A floating-point number (a JSON number).
    case double(Double)
    /// A boolean (a JSON boolean).
    case bool(Bool)
    /// A duration in milliseconds (a JSON number; `12.5ms` for people).
    case milliseconds(Double)
    /// An error: its type and description (`Type: description`).
    case error(type: String, message: String)
    /// A secret: never rendered.
    case sensitive(SensitiveValue)

    /// How people see the value.
    public var description: String {
        switch self {
        case .int(let v): return String(v)
        case .double(let v): return v.description
        case .bool(let v): return v ? "true" : "false"
        case .milliseconds(let v): return "\((v * 1000).rounded() / 1000)ms"
        case .error(let type, let message): return "\(type): \(message)"
        case .sensitive: return Redactor.redactedMarker
        }
    }
}

/// A value that must never be written anywhere; every output shows it as `[REDACTED]`.
public struct SensitiveValue: CustomStringConvertible, Sendable {
    let value: String
    /// Wraps a secret so that no handler can render it.
    public init(_ value: String) { self.value = value }
    /// Always the redaction marker, never the value.
    public var description: String { Redactor.redactedMarker }
}

extension Duration {
    /// The duration in milliseconds.
    var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}

extension Logger.MetadataValue {
    /// A typed integer value (a number in JSON).
    public static func int(_ value: Int) -> Self { .stringConvertible(LogScalar.int(value)) }
    /// A typed floating-point value (a number in JSON).
    public static func double(_ value: Double) -> Self { .stringConvertible(LogScalar.double(value)) }
    /// A typed boolean value (`true`/`false` in JSON).
    public static func bool(_ value: Bool) -> Self { .stringConvertible(LogScalar.bool(value)) }
    /// An identifier.
    public static func id(_ value: UUID) -> Self { .string(value.uuidString.lowercased()) }
    /// A duration (milliseconds).
    public static func duration(_ value: Duration) -> Self {
        .stringConvertible(LogScalar.milliseconds(value.milliseconds))
    }
    /// An error (`Type: description`).
    public static func error(_ value: any Error) -> Self {
        .stringConvertible(
            LogScalar.error(type: String(describing: Swift.type(of: value)), message: String(describing: value)))
    }
    /// A secret: always rendered as `[REDACTED]`.
    public static func sensitive(_ value: String) -> Self {
        .stringConvertible(LogScalar.sensitive(SensitiveValue(value)))
    }
}
