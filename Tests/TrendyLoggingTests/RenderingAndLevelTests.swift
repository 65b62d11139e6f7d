import Foundation
import Logging
import Testing

@testable import TrendyLogging

struct RenderingAndLevelTests {
    @Test func jsonLinesAreValidJSONWithTypedContext() throws {
        let sink = InMemoryLogSink()
        let id = UUID()
        LogSystem(sinks: [sink]).logger(.sync).info(
            "pushed \"batch\"\nnext",
            metadata: [
                "count": .int(50), "ratio": .double(0.5), "ok": .bool(true), "batch": .id(id),
                "elapsed": .duration(.milliseconds(12)), "phase": .string("push"),
                "nested": .dictionary(["a": .int(1)]), "list": .array([.string("x")]),
            ])
        let lines = sink.rendered(.json).split(separator: "\n")
        #expect(lines.count == 1)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(object["level"] as? String == "info")
        #expect(object["category"] as? String == "sync")
        #expect(object["message"] as? String == "pushed \"batch\"\nnext")
        #expect(object["count"] as? Int == 50)
        #expect(object["ratio"] as? Double == 0.5)
        #expect(object["ok"] as? Bool == true)
        #expect(object["batch"] as? String == id.uuidString.lowercased())
        #expect(object["elapsed"] as? Double == 12)
        #expect(object["phase"] as? String == "push")
        #expect((object["nested"] as? [String: Any])?["a"] as? Int == 1)
        #expect(object["list"] as? [String] == ["x"])
        #expect(object["ts"] is String)
    }

    @Test func humanLinesShowCategoryLevelAndSortedContext() {
        let sink = InMemoryLogSink()
        let fixed = Date(timeIntervalSince1970: 1_800_000_000)
        LogSystem(sinks: [sink], now: { fixed }).logger(.geofence).warning(
            "entered", metadata: ["region": .string("gym"), "count": .int(2), "name": .string("two words")])
        #expect(
            sink.rendered(.human)
                == "2027-01-15T08:00:00.000Z WARNING [geofence] entered count=2 name=\"two words\" region=gym\n")
    }

    @Test func colourOnlyWhenAsked() {
        let record = LogRecord(timestamp: Date(), level: .error, category: "app", message: "m", metadata: [:])
        #expect(LogRenderer(format: .human, colour: true).render(record).contains("\u{1B}[31m"))
        #expect(!LogRenderer(format: .human, colour: false).render(record).contains("\u{1B}"))
    }

    @Test func perCategoryLevelsFilter() {
        let sink = InMemoryLogSink()
        let logs = LogSystem(
            configuration: LogConfiguration(defaultLevel: .warning, categoryLevels: ["sync": .debug]), sinks: [sink])
        logs.logger(.sync).debug("sync debug")
        logs.logger(.sync).trace("sync trace")
        logs.logger(.auth).info("auth info")
        logs.logger(.auth).warning("auth warning")
        #expect(sink.records.map(\.message) == ["sync debug", "auth warning"])
    }

    @Test func levelSpecificationsParse() throws {
        let c = try LogConfiguration(parsing: "warning, sync=debug,Auth=trace")
        #expect(c.defaultLevel == .warning)
        #expect(c.level(for: .sync) == .debug)
        #expect(c.level(for: .auth) == .trace)
        #expect(c.level(for: .app) == .warning)
        #expect(try LogConfiguration(parsing: "warn").defaultLevel == .warning)
    }

    @Test(arguments: ["loud", "sync=verbose", "=debug"])
    func badLevelSpecificationsAreRejected(spec: String) {
        #expect(throws: LogConfigurationError.self) { try LogConfiguration(parsing: spec) }
    }

    @Test func consoleSinkHonoursItsMinimumLevel() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let sink = ConsoleSink(format: .human, minimumLevel: .warning, fileDescriptor: fds[1])
        let logger = LogSystem(sinks: [sink]).logger(.app)
        logger.info("quiet")
        logger.error("loud")
        close(fds[1])
        let text = String(
            decoding: FileHandle(fileDescriptor: fds[0], closeOnDealloc: true).readDataToEndOfFile(), as: UTF8.self)
        #expect(!text.contains("quiet"))
        #expect(text.contains("loud"))
    }

    @Test func loggerContextIsMergedIntoEveryLine() {
        let sink = InMemoryLogSink()
        var logger = LogSystem(sinks: [sink]).logger(.api)
        logger[metadataKey: "request_id"] = "r-1"
        logger.info("one", metadata: ["status": .int(200)])
        #expect(sink.records.first?.metadata["request_id"] == .string("r-1"))
        #expect(sink.records.first?.metadata["status"]?.description == "200")
    }
}
