import Foundation
import Logging

/// One log line after redaction, as every sink receives it.
public struct LogRecord: Sendable {
    /// When the line was logged.
    public var timestamp: Date
    /// Its level.
    public var level: Logger.Level
    /// Its category (the logger's label).
    public var category: String
    /// The redacted message.
    public var message: String
    /// The redacted structured context, merged from the logger and the call.
    public var metadata: Logger.Metadata

    /// Creates a record.
    public init(
        timestamp: Date, level: Logger.Level, category: String, message: String, metadata: Logger.Metadata
    ) {
        self.timestamp = timestamp
        self.level = level
        self.category = category
        self.message = message
        self.metadata = metadata
    }
}

/// How records are rendered as text.
public enum LogFormat: String, Sendable, CaseIterable {
    /// One readable line: `2026-11-22T10:00:00.000Z INFO  [sync] Pushed count=50`.
    case human
    /// One JSON object per line with `ts`, `level`, `category`, `message` and the context fields.
    case json
}
