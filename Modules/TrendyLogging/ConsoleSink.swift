import Foundation
import Logging
import Synchronization

/// Writes records to standard error (or output) as human lines or JSON lines.
/// Colour is used only when the stream is a terminal.
public final class ConsoleSink: LogSink {
    /// Which standard stream to write to.
    public enum Stream: Sendable {
        /// Standard output.
        case standardOutput
        /// Standard error (the default: stdout is for command output).
        case standardError
    }

    let renderer: LogRenderer
    let fd: Int32
    let minimumLevel: Logger.Level
    let lock = Mutex(())

    /// Creates a console sink showing records at `minimumLevel` and above;
    /// `colour: nil` means "only on a terminal".
    public convenience init(
        format: LogFormat, minimumLevel: Logger.Level = .trace, stream: Stream = .standardError, colour: Bool? = nil
    ) {
        self.init(
            format: format, minimumLevel: minimumLevel,
            fileDescriptor: stream == .standardOutput ? STDOUT_FILENO : STDERR_FILENO, colour: colour)
    }

    /// Creates a console sink writing to an open file descriptor (which it does not close).
    public init(format: LogFormat, minimumLevel: Logger.Level = .trace, fileDescriptor: Int32, colour: Bool? = nil) {
        self.minimumLevel = minimumLevel
        fd = fileDescriptor
        let useColour = colour ?? (format == .human && isatty(fd) == 1)
        renderer = LogRenderer(format: format, colour: useColour)
    }

    /// Renders and writes one record.
    public func write(_ record: LogRecord) {
        guard record.level >= minimumLevel else { return }
        let line = renderer.render(record)
        lock.withLock { _ in
            var text = line
            text.withUTF8 { buffer in FileDescriptorIO.writeAll(fd, buffer) }
        }
    }

    /// Console writes are unbuffered; nothing to do.
    public func flush() {}
}

/// Small helpers for writing whole buffers to a file descriptor.
enum FileDescriptorIO {
    static func writeAll(_ fd: Int32, _ buffer: UnsafeBufferPointer<UInt8>) {
        guard var base = buffer.baseAddress else { return }
        var remaining = buffer.count
        while remaining > 0 {
            let n = Foundation.write(fd, base, remaining)
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            remaining -= n
            base += n
        }
    }
}
