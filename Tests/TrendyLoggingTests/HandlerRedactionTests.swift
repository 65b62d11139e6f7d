import Foundation
import Logging
import Testing
import TrendyTestSupport

@testable import TrendyLogging

struct HandlerRedactionTests {
    func assertClean(_ text: String) {
        #expect(!text.isEmpty)
        for secret in Secrets.all {
            #expect(!text.contains(secret), "leaked \(secret) in \(text)")
        }
        #expect(text.contains("j***@example.com"))
    }

    @Test func inMemorySinkNeverSeesSecrets() {
        let sink = InMemoryLogSink()
        Secrets.logEverything(LogSystem(sinks: [sink]).logger(.auth))
        assertClean(sink.rendered(.json))
        assertClean(sink.rendered(.human))
    }

    @Test(arguments: LogFormat.allCases)
    func consoleSinkNeverWritesSecrets(format: LogFormat) throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let sink = ConsoleSink(format: format, fileDescriptor: fds[1], colour: false)
        Secrets.logEverything(LogSystem(sinks: [sink]).logger(.auth))
        close(fds[1])
        let data = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true).readDataToEndOfFile()
        assertClean(String(decoding: data, as: UTF8.self))
    }

    @Test(arguments: LogFormat.allCases)
    func fileSinkAndExportNeverWriteSecrets(format: LogFormat) throws {
        let dir = TemporaryDirectory()
        let sink = RotatingFileSink(directory: dir.url.appendingPathComponent("logs"), format: format)
        let logs = LogSystem(sinks: [sink])
        Secrets.logEverything(logs.logger(.auth))
        logs.shutdown()
        assertClean(try String(contentsOf: sink.activeFile, encoding: .utf8))

        let bundle = dir.url.appendingPathComponent("export.txt")
        _ = try LogDirectory(directory: dir.url.appendingPathComponent("logs")).export(to: bundle, appVersion: "test")
        assertClean(try String(contentsOf: bundle, encoding: .utf8))
    }

    @Test func exportRedactsLinesWrittenByOthers() throws {
        let dir = TemporaryDirectory()
        let logs = dir.url.appendingPathComponent("logs")
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
        try "legacy line password=\(Secrets.password) for \(Secrets.email)\n".write(
            to: logs.appendingPathComponent("trendy.log"), atomically: true, encoding: .utf8)
        let bundle = dir.url.appendingPathComponent("bundle.txt")
        let summary = try LogDirectory(directory: logs).export(to: bundle, appVersion: "1.0")
        let text = try String(contentsOf: bundle, encoding: .utf8)
        #expect(summary.fileCount == 1)
        #expect(!text.contains(Secrets.password))
        #expect(text.contains("j***@example.com"))
        let perms = try FileManager.default.attributesOfItem(atPath: bundle.path)[.posixPermissions] as? Int
        #expect(perms == 0o600)
    }

    @Test func errorsAreRenderedWithTheirType() {
        struct Boom: Error, CustomStringConvertible { var description: String { "boom with password=abc" } }
        let sink = InMemoryLogSink()
        LogSystem(sinks: [sink]).logger(.sync).error("failed", metadata: ["error": .error(Boom())])
        let text = sink.rendered(.human)
        #expect(text.contains("Boom: boom with password=[REDACTED]"))
    }
}
