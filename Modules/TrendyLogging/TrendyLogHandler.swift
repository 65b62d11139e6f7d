import Foundation
import Logging

/// The swift-log handler behind every Trendy logger: merges context, redacts, and fans the
/// record out to the sinks. Redaction happens here, once, so no sink can see a secret.
public struct TrendyLogHandler: LogHandler {
    /// The category (also the logger's label).
    public let category: String
    /// The logger's context, added to every line.
    public var metadata: Logger.Metadata = [:]
    /// Optional task-local context.
    public var metadataProvider: Logger.MetadataProvider?
    /// The level below which lines are dropped before any work is done.
    public var logLevel: Logger.Level

    /// Shared by every logger of a ``LogSystem``; a reference keeps the handler small, so the
    /// level check of a filtered-out call stays cheap.
    final class Pipeline: Sendable {
        let sinks: [any LogSink]
        let redactor: Redactor
        let now: @Sendable () -> Date

        init(sinks: [any LogSink], redactor: Redactor, now: @escaping @Sendable () -> Date) {
            self.sinks = sinks
            self.redactor = redactor
            self.now = now
        }
    }

    let pipeline: Pipeline

    /// Creates a handler.
    public init(
        category: String, level: Logger.Level, sinks: [any LogSink], redactor: Redactor = Redactor(),
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.init(category: category, level: level, pipeline: Pipeline(sinks: sinks, redactor: redactor, now: now))
    }

    init(category: String, level: Logger.Level, pipeline: Pipeline) {
        self.category = category
        self.logLevel = level
        self.pipeline = pipeline
    }

    /// Gets or sets one context value.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Redacts and delivers one event to every sink.
    public func log(event: LogEvent) {
        let sinks = pipeline.sinks
        guard !sinks.isEmpty else { return }
        let redactor = pipeline.redactor
        var merged = metadata
        if let provided = metadataProvider?.get() {
            merged.merge(provided) { _, new in new }
        }
        if let extra = event.metadata {
            merged.merge(extra) { _, new in new }
        }
        if let error = event.error {
            merged["error"] = .error(error)
        }
        let record = LogRecord(
            timestamp: pipeline.now(),
            level: event.level,
            category: category,
            message: redactor.scrub(event.message.description),
            metadata: merged.isEmpty ? merged : redactor.redact(merged)
        )
        for sink in sinks { sink.write(record) }
    }
}
