import Foundation
import Logging

/// The app's logging: sinks, levels and redaction, and a `Logger` per category.
///
/// Only the composition root creates one; modules receive the `Logger`s it makes. Nothing is
/// global: swift-log's `LoggingSystem.bootstrap` is never called.
///
/// ```swift
/// let logs = LogSystem(configuration: .init(defaultLevel: .info), sinks: [ConsoleSink(format: .human)])
/// let syncLogger = logs.logger(.sync)
/// syncLogger.info("Pushed", metadata: ["count": .int(50)])
/// logs.shutdown()   // flushes buffered sinks
/// ```
public final class LogSystem: Sendable {
    /// The levels in force.
    public let configuration: LogConfiguration
    /// Every sink records go to.
    public let sinks: [any LogSink]
    /// The redactor applied to every record.
    public let redactor: Redactor
    let now: @Sendable () -> Date
    let pipeline: TrendyLogHandler.Pipeline

    /// Creates a logging system writing to `sinks`.
    public init(
        configuration: LogConfiguration = LogConfiguration(), sinks: [any LogSink], redactor: Redactor = Redactor(),
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.configuration = configuration
        self.sinks = sinks
        self.redactor = redactor
        self.now = now
        self.pipeline = TrendyLogHandler.Pipeline(sinks: sinks, redactor: redactor, now: now)
    }

    /// A logger for `category` at the configured level.
    public func logger(_ category: LogCategory) -> Logger {
        let handler = TrendyLogHandler(
            category: category.name, level: configuration.level(for: category), pipeline: pipeline)
        return Logger(label: category.name, factory: { _ in handler })
    }

    /// Writes out everything buffered.
    public func flush() {
        for sink in sinks { sink.flush() }
    }

    /// Flushes and stops sinks that own resources.
    public func shutdown() {
        for sink in sinks {
            if let closable = sink as? RotatingFileSink {
                closable.close()
            } else {
                sink.flush()
            }
        }
    }

    /// A system that drops everything (for code paths that need a logger but no output).
    public static func disabled() -> LogSystem { LogSystem(sinks: []) }
}
