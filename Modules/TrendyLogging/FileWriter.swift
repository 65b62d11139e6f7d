import Foundation

/// The file side of ``RotatingFileSink``: only ever used on the sink's queue.
final class FileWriter: @unchecked Sendable {
    let directory: URL
    let baseName: String
    let policy: RotatingFileSink.Policy
    let calendar: Calendar
    let now: @Sendable () -> Date
    let fallback: @Sendable ([UInt8]) -> Void

    var fd: Int32 = -1
    var size = 0
    var fileDay = 0
    var failed = false

    init(
        directory: URL, baseName: String, policy: RotatingFileSink.Policy, calendar: Calendar,
        now: @escaping @Sendable () -> Date, fallback: @escaping @Sendable ([UInt8]) -> Void
    ) {
        self.directory = directory
        self.baseName = baseName
        self.policy = policy
        self.calendar = calendar
        self.now = now
        self.fallback = fallback
    }

    var activePath: String { directory.appendingPathComponent("\(baseName).log").path }

    func dayKey(_ date: Date) -> Int {
        let c = calendar.dateComponents([.year, .month, .day], from: date)
        return (c.year ?? 0) * 10_000 + (c.month ?? 0) * 100 + (c.day ?? 0)
    }

    func open(day: Int) {
        guard fd < 0, !failed else { return }
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            fail("cannot create log directory \(directory.path): \(Self.reason(error))")
            return
        }
        let opened = Foundation.open(activePath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard opened >= 0 else {
            fail("cannot open log file \(activePath): \(String(cString: strerror(errno)))")
            return
        }
        fd = opened
        var st = stat()
        if fstat(fd, &st) == 0, st.st_size > 0 {
            size = Int(st.st_size)
            fileDay = dayKey(Date(timeIntervalSince1970: TimeInterval(st.st_mtim.tv_sec)))
        } else {
            size = 0
            fileDay = day
        }
    }

    static func reason(_ error: any Error) -> String {
        let ns = error as NSError
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError {
            return String(cString: strerror(Int32(underlying.code)))
        }
        return ns.localizedDescription
    }

    func fail(_ message: String) {
        failed = true
        fallback(Array("trendy: \(message); logging to standard error instead\n".utf8))
    }

    func append(_ bytes: [UInt8], day: Int) {
        open(day: day)
        if failed {
            fallback(bytes)
            return
        }
        if size > 0, day != fileDay {
            rotate(day: day)
            if failed { return fallback(bytes) }
        }
        var start = 0
        while start < bytes.count {
            let remaining = bytes.count - start
            let room = policy.maxFileSize - size
            if remaining <= room {
                writeRaw(bytes[start...])
                return
            }
            // Split at the last whole line that fits; a single line longer than the cap gets
            // a file of its own rather than being cut.
            var cut = -1
            if room > 0 {
                var i = start + room - 1
                while i >= start {
                    if bytes[i] == 0x0A {
                        cut = i + 1
                        break
                    }
                    i -= 1
                }
            }
            if cut < 0, size == 0 {
                var i = start
                while i < bytes.count, bytes[i] != 0x0A { i += 1 }
                cut = min(i + 1, bytes.count)
            }
            if cut > start {
                writeRaw(bytes[start..<cut])
                start = cut
            }
            if start < bytes.count {
                rotate(day: day)
                if failed { return fallback(Array(bytes[start...])) }
            }
        }
    }

    func writeRaw(_ slice: ArraySlice<UInt8>) {
        slice.withUnsafeBufferPointer { FileDescriptorIO.writeAll(fd, $0) }
        size += slice.count
    }

    func rotate(day: Int) {
        close()
        let stamp = Self.stamp(now())
        // `-NNNN` keeps names unique and in rotation order when several rotations share a millisecond.
        var n = 0
        var target: URL
        repeat {
            target = directory.appendingPathComponent("\(baseName)-\(stamp)-\(String(format: "%04d", n)).log")
            n += 1
        } while FileManager.default.fileExists(atPath: target.path)
        if Foundation.rename(activePath, target.path) != 0 {
            // Could not move it aside: truncate rather than grow without bound.
            _ = truncate(activePath, 0)
        }
        prune()
        open(day: day)
        fileDay = day
    }

    static func stamp(_ date: Date) -> String {
        let ms = Int((date.timeIntervalSince1970 * 1000).rounded(.down))
        var tm = tm()
        var t = time_t(ms / 1000)
        gmtime_r(&t, &tm)
        return String(
            format: "%04d%02d%02dT%02d%02d%02d.%03dZ", Int(tm.tm_year) + 1900, Int(tm.tm_mon) + 1, Int(tm.tm_mday),
            Int(tm.tm_hour), Int(tm.tm_min), Int(tm.tm_sec), ms % 1000)
    }

    /// Deletes the oldest rotated files so that at most `maxFiles` remain, the active one included.
    func prune() {
        let rotated = LogDirectory(directory: directory, baseName: baseName).rotatedFiles()
        let keep = policy.maxFiles - 1
        if rotated.count > keep {
            for url in rotated.prefix(rotated.count - keep) {
                try? FileManager.default.removeItem(at: url)
            }
        }
    }

    func close() {
        if fd >= 0 {
            Foundation.close(fd)
            fd = -1
        }
    }
}
