import Foundation
import Testing
import TrendyInsights
import TrendyInsightsTesting

/// What the method publishes on histories where nothing is related, against Trendy's old rule, and how
/// often it finds a dependency that was planted. Seeded: every run sees the same histories.
struct CorrelationCalibrationTests {
    static let nullHistories = 1_000

    /// What one null history gives: whether each method publishes, and our p-values.
    struct NullOutcome: Sendable {
        var ours: Bool
        var baseline: Bool
        var pValues: [Double]
    }

    /// `work` on a thread of its own: seconds of arithmetic kept off the cooperative threads,
    /// which the suite's timed tests need (two workers held both of this machine's for 10 s and a
    /// reachability test's 2-second budget was measured at 22 s).
    static func offThePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: work()) }
        }
    }

    /// Runs the null histories with seeds in `seeds`, two workers at a time (the runs are pure).
    static func nullOutcomes(_ seeds: Range<Int>) async -> [NullOutcome] {
        let half = seeds.lowerBound + seeds.count / 2
        @Sendable func run(_ part: Range<Int>) -> [NullOutcome] {
            part.map { seed in
                let history = NullHistories.history(seed: UInt64(seed))
                let report = Correlations.run(history.series, firstDay: history.firstDay)
                return NullOutcome(
                    ours: !report.findings.isEmpty, baseline: TrendyBaseline.publishesAny(history),
                    pValues: report.tests.map(\.p))
            }
        }
        async let first = offThePool { run(seeds.lowerBound..<half) }
        async let second = offThePool { run(half..<seeds.upperBound) }
        return await first + second
    }

    @Test func nullHistoriesRarelyPublishWhileTheBaselinePublishesInMost() async {
        let outcomes = await Self.nullOutcomes(0..<Self.nullHistories)
        let ours = outcomes.count(where: \.ours)
        let baseline = outcomes.count(where: \.baseline)
        let n = Double(outcomes.count)
        let (oursRate, baselineRate) = (Double(ours) / n, Double(baseline) / n)
        print(
            "null histories: ours publish in \(ours)/\(outcomes.count) (\(100 * oursRate) %), "
                + "Trendy's baseline in \(baseline)/\(outcomes.count) (\(100 * baselineRate) %)")
        // Under the complete null, Benjamini–Hochberg at q holds the chance of publishing anything at q
        // when the p-values are valid and the tests independent (Simes), and below q when they are
        // positively dependent, as a pair's same-day and next-day tests are. With the dependence factor
        // the p-values stay valid for autocorrelated habits too, so the seeded rate is held to q outright.
        let q = CorrelationSettings.standard.q
        #expect(oursRate <= q)
        #expect(baselineRate > 0.5)
        #expect(baselineRate > 4 * oursRate)
        // The p-values behind it are calibrated: about 5 % of null tests at p ≤ 0.05, 1 % at p ≤ 0.01.
        let p = outcomes.flatMap(\.pValues)
        let at5 = Double(p.count(where: { $0 <= 0.05 })) / Double(p.count)
        let at1 = Double(p.count(where: { $0 <= 0.01 })) / Double(p.count)
        print("null tests: \(p.count), share with p ≤ 0.05: \(at5), p ≤ 0.01: \(at1)")
        #expect((0.04...0.06).contains(at5))
        #expect((0.007...0.013).contains(at1))
    }

    @Test func plantedNextDayEffectsAreFoundInThePlantedDirection() async {
        let histories = 100
        let outcomes = await Self.offThePool {
            (0..<histories).map { seed in
                let history = NullHistories.planted(effect: 0.4, days: 120, seed: UInt64(seed))
                let planted = history.planted[0]
                let report = Correlations.run(history.series, firstDay: history.firstDay)
                let lagOne = report.findings.filter { $0.lag == 1 }
                return (
                    realized: planted.realizedR,
                    found: lagOne.contains { $0.x == planted.cause && $0.y == planted.effect && $0.r > 0 },
                    reversed: lagOne.contains { $0.x == planted.effect && $0.y == planted.cause }
                )
            }
        }
        #expect(outcomes.allSatisfy { $0.realized >= 0.4 })
        let found = outcomes.count(where: \.found)
        let wrongWay = outcomes.count(where: \.reversed)
        print("planted lag-1 effects (r ≥ 0.4, 120 days): found \(found)/\(histories), reversed \(wrongWay)")
        #expect(Double(found) / Double(histories) >= 0.70)
        #expect(wrongWay <= histories / 10)
    }
}
