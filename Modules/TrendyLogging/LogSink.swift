/// Where rendered log records go. Sinks receive records that are already redacted.
///
/// Sinks are called on the logging caller's thread, so `write` must be cheap and must not
/// block on I/O for long; ``RotatingFileSink`` buffers and writes on its own queue.
public protocol LogSink: Sendable {
    /// Accepts one record.
    func write(_ record: LogRecord)
    /// Writes out anything buffered; returns when it is on disk (or wherever it goes).
    func flush()
}
