import Dispatch
import Foundation
import Synchronization

/// Writes records to `<directory>/<name>.log`, rotating by size and by calendar day and keeping
/// the newest files only.
///
/// Callers only render the line and append it to an in-memory buffer; the file is written on
/// the sink's own queue when the buffer fills, `flushInterval` after the first unwritten line, on ``flush()`` and on
/// ``close()``. When the directory cannot be created or written, every line goes to standard
/// error instead, after one warning; logging never crashes the app.
public final class RotatingFileSink: LogSink {
    /// Size, retention and buffering limits.
    public struct Policy: Sendable {
        /// Rotate before the active file would grow past this many bytes (default 5 MiB).
        public var maxFileSize: Int
        /// Keep at most this many files, the active one included (default 7).
        public var maxFiles: Int
        /// Hand the buffer to the writer queue once it holds this many bytes (default 64 KiB).
        public var bufferSize: Int
        /// Write the buffer at least this often (default 1 s; `nil` only on demand).
        public var flushInterval: Duration?

        /// Creates a policy.
        public init(
            maxFileSize: Int = 5 * 1024 * 1024, maxFiles: Int = 7, bufferSize: Int = 64 * 1024,
            flushInterval: Duration? = .seconds(1)
        ) {
            self.maxFileSize = max(1, maxFileSize)
            self.maxFiles = max(1, maxFiles)
            self.bufferSize = max(1, bufferSize)
            self.flushInterval = flushInterval
        }
    }

    struct Chunk {
        var day: Int
        var bytes: [UInt8]
    }

    struct Pending {
        var chunks: [Chunk] = []
        var byteCount = 0
        var drainScheduled = false
        var timedDrainScheduled = false
        var closed = false
        /// The calendar day of the last record and its bounds, so most records skip the calendar.
        var dayStart = Date.distantFuture
        var dayEnd = Date.distantPast
        var day = 0
    }

    /// The directory the files live in.
    public let directory: URL
    /// The active file.
    public let activeFile: URL
    let baseName: String
    let policy: Policy
    let renderer: LogRenderer
    let now: @Sendable () -> Date
    let calendar: Calendar
    let pending = Mutex(Pending())
    let queue = DispatchQueue(label: "trendy.log.file")
    let writer: FileWriter

    /// Creates the sink and opens (or creates) the active file at once, so an unwritable
    /// directory is reported before the first line.
    public init(
        directory: URL, baseName: String = "trendy", format: LogFormat = .json, policy: Policy = Policy(),
        timeZone: TimeZone = .current, now: @escaping @Sendable () -> Date = Date.init,
        fallback: @escaping @Sendable ([UInt8]) -> Void = RotatingFileSink.writeToStandardError
    ) {
        self.directory = directory
        self.baseName = baseName
        self.activeFile = directory.appendingPathComponent("\(baseName).log")
        self.policy = policy
        self.renderer = LogRenderer(format: format)
        self.now = now
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
        self.writer = FileWriter(
            directory: directory, baseName: baseName, policy: policy, calendar: calendar, now: now,
            fallback: fallback)
        let writer = self.writer
        let day = dayKey(now())
        queue.sync { writer.open(day: day) }
    }

    func dayKey(_ date: Date) -> Int {
        let c = calendar.dateComponents([.year, .month, .day], from: date)
        return (c.year ?? 0) * 10_000 + (c.month ?? 0) * 100 + (c.day ?? 0)
    }

    /// Renders the record and appends it to the buffer.
    public func write(_ record: LogRecord) {
        let line = Array(renderer.render(record).utf8)
        enum Schedule { case none, now, later }
        let schedule = pending.withLock { p -> Schedule in
            guard !p.closed else { return .none }
            if record.timestamp < p.dayStart || record.timestamp >= p.dayEnd {
                p.day = dayKey(record.timestamp)
                let start = calendar.startOfDay(for: record.timestamp)
                p.dayStart = start
                p.dayEnd = calendar.date(byAdding: .day, value: 1, to: start) ?? start.addingTimeInterval(86_400)
            }
            let day = p.day
            if let last = p.chunks.indices.last, p.chunks[last].day == day {
                p.chunks[last].bytes.append(contentsOf: line)
            } else {
                p.chunks.append(Chunk(day: day, bytes: line))
            }
            p.byteCount += line.count
            if p.byteCount >= policy.bufferSize, !p.drainScheduled {
                p.drainScheduled = true
                return .now
            }
            if !p.timedDrainScheduled, policy.flushInterval != nil {
                p.timedDrainScheduled = true
                return .later
            }
            return .none
        }
        switch schedule {
        case .none:
            break
        case .now:
            queue.async { [self] in drain() }
        case .later:
            let interval = policy.flushInterval ?? .seconds(1)
            let ns =
                Int(interval.components.seconds) * 1_000_000_000
                + Int(interval.components.attoseconds / 1_000_000_000)
            queue.asyncAfter(deadline: .now() + .nanoseconds(max(ns, 1_000_000))) { [weak self] in
                self?.pending.withLock { $0.timedDrainScheduled = false }
                self?.drain()
            }
        }
    }

    /// Writes the buffer to disk and returns when it is written.
    public func flush() {
        queue.sync { drain() }
    }

    /// Flushes, stops the timer and closes the file; later writes are dropped.
    public func close() {
        queue.sync {
            drain()
            pending.withLock { $0.closed = true }
            writer.close()
        }
    }

    /// Runs on `queue`.
    func drain() {
        let chunks = pending.withLock { p -> [Chunk] in
            let c = p.chunks
            p.chunks = []
            p.byteCount = 0
            p.drainScheduled = false
            return c
        }
        for chunk in chunks { writer.append(chunk.bytes, day: chunk.day) }
    }

    /// Writes bytes to standard error (the fallback when the directory is unusable).
    @Sendable public static func writeToStandardError(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { FileDescriptorIO.writeAll(STDERR_FILENO, $0) }
    }
}
