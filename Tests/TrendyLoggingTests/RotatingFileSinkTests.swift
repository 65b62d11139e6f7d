import Foundation
import Logging
import Testing
import TrendyTestSupport

@testable import TrendyLogging

struct RotatingFileSinkTests {
    func record(_ message: String, at date: Date) -> LogRecord {
        LogRecord(timestamp: date, level: .info, category: "app", message: message, metadata: [:])
    }

    func utc() -> TimeZone { TimeZone(identifier: "UTC")! }

    @Test func rotatesBeforeTheSizeCapAndKeepsWholeLines() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
        let policy = RotatingFileSink.Policy(maxFileSize: 1_000, maxFiles: 50, bufferSize: 10_000, flushInterval: nil)
        let sink = RotatingFileSink(
            directory: dir.url, format: .json, policy: policy, timeZone: utc(), now: { clock.now })
        for i in 0..<100 {
            sink.write(record("line \(i)", at: clock.now))
            clock.advance(0.001)
        }
        sink.close()
        let files = LogDirectory(directory: dir.url).files()
        #expect(files.count > 3)
        var seen: [String] = []
        for file in files {
            let data = try Data(contentsOf: file)
            #expect(data.count <= 1_000)
            for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                seen.append(object?["message"] as? String ?? "")
            }
        }
        #expect(seen == (0..<100).map { "line \($0)" })
    }

    @Test func rotatesOnDateChange() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock(Date(timeIntervalSince1970: 1_800_057_000))  // 2027-01-15T23:50Z
        let sink = RotatingFileSink(
            directory: dir.url, format: .human, policy: .init(flushInterval: nil), timeZone: utc(), now: { clock.now })
        sink.write(record("before midnight", at: clock.now))
        sink.flush()
        clock.advance(20 * 60)
        sink.write(record("after midnight", at: clock.now))
        sink.close()
        let files = LogDirectory(directory: dir.url).files()
        #expect(files.count == 2)
        #expect(try String(contentsOf: files[0], encoding: .utf8).contains("before midnight"))
        #expect(try String(contentsOf: files[1], encoding: .utf8).contains("after midnight"))
        #expect(files[1].lastPathComponent == "trendy.log")
    }

    @Test func recordsBufferedAcrossMidnightStillSplitByDay() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock(Date(timeIntervalSince1970: 1_800_057_000))
        let sink = RotatingFileSink(
            directory: dir.url, format: .human, policy: .init(flushInterval: nil), timeZone: utc(), now: { clock.now })
        sink.write(record("day one", at: clock.now))
        clock.advance(20 * 60)
        sink.write(record("day two", at: clock.now))
        sink.close()
        let files = LogDirectory(directory: dir.url).files()
        #expect(files.count == 2)
        #expect(try !String(contentsOf: files[0], encoding: .utf8).contains("day two"))
    }

    @Test func keepsOnlyTheNewestFiles() throws {
        let dir = TemporaryDirectory()
        let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
        let policy = RotatingFileSink.Policy(maxFileSize: 200, maxFiles: 3, bufferSize: 1, flushInterval: nil)
        let sink = RotatingFileSink(
            directory: dir.url, format: .json, policy: policy, timeZone: utc(), now: { clock.now })
        for i in 0..<60 {
            sink.write(record("entry number \(i)", at: clock.now))
            clock.advance(0.01)
            sink.flush()
        }
        sink.close()
        let files = LogDirectory(directory: dir.url).files()
        #expect(files.count == 3)
        let newest = try String(contentsOf: files.last!, encoding: .utf8)
        #expect(newest.contains("entry number 59"))
        let all = try files.map { try String(contentsOf: $0, encoding: .utf8) }.joined()
        #expect(!all.contains("entry number 0\""))
    }

    @Test func appendsToAnExistingFileAcrossRestarts() throws {
        let dir = TemporaryDirectory()
        let first = RotatingFileSink(directory: dir.url, format: .human, policy: .init(flushInterval: nil))
        first.write(record("first run", at: Date()))
        first.close()
        let second = RotatingFileSink(directory: dir.url, format: .human, policy: .init(flushInterval: nil))
        second.write(record("second run", at: Date()))
        second.close()
        let text = try String(contentsOf: dir.url.appendingPathComponent("trendy.log"), encoding: .utf8)
        #expect(text.contains("first run") && text.contains("second run"))
        let perms =
            try FileManager.default.attributesOfItem(atPath: dir.url.appendingPathComponent("trendy.log").path)[
                .posixPermissions] as? Int
        #expect(perms == 0o600)
    }

    @Test func unwritableDirectoryFallsBackToStandardErrorWithOneWarning() throws {
        let dir = TemporaryDirectory()
        let blocker = dir.url.appendingPathComponent("not-a-directory")
        try Data("x".utf8).write(to: blocker)
        let captured = CapturedBytes()
        let sink = RotatingFileSink(
            directory: blocker.appendingPathComponent("logs"), format: .human, policy: .init(flushInterval: nil),
            fallback: captured.closure)
        let logs = LogSystem(sinks: [sink])
        logs.logger(.app).info("still visible")
        logs.logger(.app).info("also visible")
        logs.shutdown()
        let text = captured.text
        #expect(text.components(separatedBy: "logging to standard error instead").count == 2)
        #expect(text.contains("still visible"))
        #expect(text.contains("also visible"))
    }

    @Test func bufferedLinesReachTheFileAfterTheFlushInterval() async throws {
        let dir = TemporaryDirectory()
        let sink = RotatingFileSink(
            directory: dir.url, format: .human, policy: .init(flushInterval: .milliseconds(20)))
        sink.write(record("eventually written", at: Date()))
        let written = await eventually(attempts: 1_000, every: .milliseconds(10)) {
            let text = (try? String(contentsOf: dir.url.appendingPathComponent("trendy.log"), encoding: .utf8)) ?? ""
            return text.contains("eventually written")
        }
        #expect(written)
        sink.close()
    }

    @Test func writesAfterCloseAreDropped() throws {
        let dir = TemporaryDirectory()
        let sink = RotatingFileSink(directory: dir.url, format: .human, policy: .init(flushInterval: nil))
        sink.close()
        sink.write(record("late", at: Date()))
        sink.flush()
        #expect(try String(contentsOf: dir.url.appendingPathComponent("trendy.log"), encoding: .utf8).isEmpty)
    }

    @Test func tailReturnsTheNewestLinesAcrossFiles() throws {
        let dir = TemporaryDirectory()
        let policy = RotatingFileSink.Policy(maxFileSize: 120, maxFiles: 10, bufferSize: 1, flushInterval: nil)
        let sink = RotatingFileSink(directory: dir.url, format: .human, policy: policy)
        for i in 0..<10 {
            sink.write(record("n\(i)", at: Date()))
            sink.flush()
        }
        sink.close()
        let tail = try LogDirectory(directory: dir.url).tail(3)
        #expect(tail.count == 3)
        #expect(tail[0].hasSuffix("n7") && tail[2].hasSuffix("n9"))
    }
}
