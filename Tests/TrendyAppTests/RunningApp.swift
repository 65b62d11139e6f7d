import Foundation
import Synchronization
import TrendyTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// `trendy app` running as a child process, driven like a person would: keys on its input (a
/// pipe in line mode, or a pseudo-terminal), signals, and its output read as it comes.
final class RunningApp: @unchecked Sendable {
    let process: ChildProcess
    let input: FileHandle
    let output = OutputBuffer()
    /// The pseudo-terminal's master side, when it runs on one.
    let master: Int32?
    /// Where the output is read from (kept: its descriptor closes with it).
    private let readEnd: FileHandle

    /// Starts `trendy app` with `arguments`; on a pseudo-terminal of `rows`×`columns` when `tty`.
    init(_ arguments: [String], tty: Bool = false, rows: UInt16 = 24, columns: UInt16 = 80) throws {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "TRENDY_DATA_DIR")
        env.removeValue(forKey: "TRENDY_LOG_LEVEL")
        env = TrendyProcess.testEnvironment(env)
        if tty {
            var (m, s): (Int32, Int32) = (0, 0)
            var size = winsize(ws_row: rows, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
            guard openpty(&m, &s, nil, nil, &size) == 0 else { throw POSIXError(.ENOTTY) }
            let slave = FileHandle(fileDescriptor: s, closeOnDealloc: true)
            master = m
            input = FileHandle(fileDescriptor: m, closeOnDealloc: false)
            readEnd = FileHandle(fileDescriptor: m, closeOnDealloc: false)
            process = try ChildProcess(
                TrendyProcess.binary, ["app"] + arguments, environment: env, stdin: .handle(slave),
                stdout: .handle(slave))
            try slave.close()
        } else {
            let inPipe = Pipe()
            let outPipe = Pipe()
            master = nil
            input = inPipe.fileHandleForWriting
            readEnd = outPipe.fileHandleForReading
            process = try ChildProcess(
                TrendyProcess.binary, ["app"] + arguments, environment: env, stdin: .pipe(inPipe),
                stdout: .pipe(outPipe), stderr: .pipe(outPipe))
        }
        let output = output
        // Raw reads: a pseudo-terminal's master answers EIO once the child is gone, which
        // FileHandle.availableData turns into a crash.
        let fd = readEnd.fileDescriptor
        let reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let n = read(fd, &buffer, buffer.count)
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { return }
                output.data.withLock { $0.append(contentsOf: buffer[0..<n]) }
            }
        }
        reader.start()
    }

    deinit {
        process.send(SIGKILL)
        if let master { close(master) }
    }

    /// Everything printed so far.
    var text: String { String(decoding: output.data.withLock { $0 }, as: UTF8.self) }

    /// Types `line` (line mode: keys then a line break; on a terminal: the bytes as they are).
    func type(_ line: String) {
        input.write(Data((master == nil ? line + "\n" : line).utf8))
    }

    /// Sends `signal` to the app.
    func send(_ signal: Int32) { process.send(signal) }

    /// Waits until the output satisfies `condition` (up to `seconds`); whether it did.
    @discardableResult
    func waitFor(_ seconds: Double = 15, _ condition: (String) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(text) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition(text)
    }

    /// Waits until the output shows a frame of `screen` after `frames` frames were already seen.
    @discardableResult
    func waitForScreen(_ screen: String, after frames: Int = 0, seconds: Double = 15) async -> Bool {
        await waitFor(seconds) { Self.screens($0).dropFirst(frames).contains(screen) }
    }

    /// The screens of the line-mode frames printed, in order.
    static func screens(_ text: String) -> [String] {
        text.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("── frame ") else { return nil }
            let parts = line.components(separatedBy: " · ")
            guard parts.count >= 4 else { return nil }
            return parts[3].trimmingCharacters(in: CharacterSet(charactersIn: "─ "))
        }
    }

    /// The process's state letter from /proc (`T` when stopped).
    var state: Character? {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        return stat[stat.index(close, offsetBy: 2)]
    }

    /// Waits for the exit; its status.
    func exitStatus(seconds: Double = 15) async -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        return process.isRunning ? nil : process.terminationStatus
    }
}

/// What a child printed, appended by a reader thread.
final class OutputBuffer: Sendable {
    let data = Mutex(Data())
}
