import Synchronization

/// Keeps every record in memory, for tests and for capturing a run's logs.
/// It does not render; use ``LogRenderer`` on ``records`` to see the text.
public final class InMemoryLogSink: LogSink {
    let storage = Mutex<[LogRecord]>([])

    /// Creates an empty sink.
    public init() {}

    /// Appends the record.
    public func write(_ record: LogRecord) { storage.withLock { $0.append(record) } }

    /// Nothing is buffered.
    public func flush() {}

    /// Every record so far, oldest first.
    public var records: [LogRecord] { storage.withLock { $0 } }

    /// Every record rendered in `format`, joined.
    public func rendered(_ format: LogFormat = .json) -> String {
        let renderer = LogRenderer(format: format)
        return records.map(renderer.render).joined()
    }

    /// Forgets every record.
    public func clear() { storage.withLock { $0.removeAll() } }
}
