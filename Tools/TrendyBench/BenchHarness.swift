import Foundation

/// One measured figure, with its same-run baseline where there is one.
struct BenchResult: Encodable {
    var suite: String
    var name: String
    var value: Double
    var unit: String
    var baseline: Double?
    var ratio: Double?
    var target: String
    var met: Bool?
}

/// Times closures with the monotonic clock and keeps the median of several rounds, so one
/// noisy round on a shared machine does not decide the figure.
enum BenchHarness {
    /// Median nanoseconds per operation over `rounds` rounds of `iterations` operations.
    static func nanosecondsPerOperation(iterations: Int, rounds: Int = 5, _ body: (Int) -> Void) -> Double {
        var perOp: [Double] = []
        body(min(iterations, 1_000))  // warm-up
        for _ in 0..<rounds {
            let clock = ContinuousClock()
            let start = clock.now
            body(iterations)
            let elapsed = clock.now - start
            perOp.append(seconds(elapsed) * 1e9 / Double(iterations))
        }
        return median(perOp)
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    static func median(_ values: [Double]) -> Double {
        let s = values.sorted()
        guard !s.isEmpty else { return 0 }
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        let s = values.sorted()
        guard !s.isEmpty else { return 0 }
        let index = min(s.count - 1, max(0, Int((p / 100 * Double(s.count)).rounded(.up)) - 1))
        return s[index]
    }

    static func temporaryDirectory(_ name: String) -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "trendy-bench-\(name)-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func format(_ r: BenchResult) -> String {
        var line = "\(r.suite)/\(r.name): \(String(format: "%.3f", r.value)) \(r.unit)"
        if let b = r.baseline { line += "  baseline \(String(format: "%.3f", b)) \(r.unit)" }
        if let ratio = r.ratio { line += "  ratio \(String(format: "%.2f", ratio))" }
        line += "  target \(r.target)"
        if let met = r.met { line += met ? "  ✓" : "  ✗ MISSED" }
        return line
    }
}
