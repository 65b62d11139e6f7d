import Foundation
import Logging
import TrendyLogging

/// Logging costs: a line with context through the rotating file sink vs a plain buffered
/// write of the same bytes, and a call filtered out by level.
enum LoggingBenchmarks {
    static func run(smoke: Bool) -> [BenchResult] {
        let iterations = smoke ? 2_000 : 200_000
        let rounds = smoke ? 1 : 5
        let dir = BenchHarness.temporaryDirectory("logging")
        defer { try? FileManager.default.removeItem(at: dir) }

        // The same line the logger writes, rendered once, for the baseline.
        let fixed = Date(timeIntervalSince1970: 1_800_000_000)
        let renderer = LogRenderer(format: .json)
        let metadata: Logger.Metadata = [
            "count": .int(50), "phase": .string("pushing"), "elapsed": .duration(.milliseconds(12)),
        ]
        let lineBytes = Array(
            renderer.render(
                LogRecord(timestamp: fixed, level: .info, category: "sync", message: "Pushed batch", metadata: metadata)
            ).utf8)

        // Baseline: stdio-buffered appends of those bytes to a file.
        let baselinePath = dir.appendingPathComponent("plain.log").path
        let plain = BenchHarness.nanosecondsPerOperation(iterations: iterations, rounds: rounds) { n in
            guard let file = fopen(baselinePath, "a") else { return }
            setvbuf(file, nil, _IOFBF, 64 * 1024)
            lineBytes.withUnsafeBufferPointer { buffer in
                for _ in 0..<n { fwrite(buffer.baseAddress, 1, buffer.count, file) }
            }
            fclose(file)
        }

        // Logging through the real handler: level check, context merge, redaction, render, buffer.
        let sink = RotatingFileSink(directory: dir.appendingPathComponent("logs"), format: .json)
        let logs = LogSystem(configuration: LogConfiguration(defaultLevel: .info), sinks: [sink])
        let logger = logs.logger(.sync)
        let logged = BenchHarness.nanosecondsPerOperation(iterations: iterations, rounds: rounds) { n in
            for _ in 0..<n { logger.info("Pushed batch", metadata: metadata) }
            sink.flush()
        }

        // A debug call at info level: swift-log checks the level before evaluating anything.
        var counter = 0
        let filtered = BenchHarness.nanosecondsPerOperation(iterations: iterations * 10, rounds: rounds) { n in
            for i in 0..<n {
                logger.debug("never shown \(i)", metadata: ["i": .int(i)])
                counter &+= 1
            }
        }
        logs.shutdown()
        let ratio = logged / plain
        return [
            BenchResult(
                suite: "logging", name: "file_line_with_context", value: logged, unit: "ns/line", baseline: plain,
                ratio: ratio, target: "report (ratio to plain buffered write)", met: nil),
            BenchResult(
                suite: "logging", name: "filtered_out_call", value: filtered, unit: "ns/call", baseline: nil,
                ratio: nil, target: "≤ 50 ns", met: filtered <= 50),
        ]
    }
}
