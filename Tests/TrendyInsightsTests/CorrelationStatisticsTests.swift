import Testing
import TrendyInsightsTesting

@testable import TrendyInsights

/// The statistical pieces against references: Benjamini–Hochberg against its paper's worked example,
/// the block-permutation statistic and p-value against brute force, the pre-whitening arithmetic, and
/// Bartlett's dependence factor against its formula.
struct CorrelationStatisticsTests {
    /// Benjamini & Hochberg (1995), section 4: fifteen p-values from a study of myocardial infarction;
    /// at q = 0.05 the procedure rejects the four smallest.
    static let paperP = [
        0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262, 0.5719, 0.6528,
        0.7590, 1.000,
    ]

    @Test func benjaminiHochbergMatchesThePapersWorkedExample() {
        #expect(BenjaminiHochberg.discoveries(Self.paperP, alpha: 0.05) == [0, 1, 2, 3])
        // R: p.adjust(p, "BH").
        let expected = [
            0.0015, 0.003, 0.0095, 0.035625, 0.0603, 0.0638571428571, 0.0638571428571, 0.0645, 0.0765, 0.486,
            0.5811818181818, 0.714875, 0.7532307692308, 0.8132142857143, 1,
        ]
        let q = BenjaminiHochberg.qValues(Self.paperP)
        for (a, b) in zip(q, expected) { #expect(abs(a - b) < 1e-9) }
        // Order does not matter: q follows its p.
        let shuffled = Array(Self.paperP.reversed())
        #expect(BenjaminiHochberg.qValues(shuffled) == Array(q.reversed()))
        #expect(BenjaminiHochberg.qValues([]) == [])
    }

    /// A tiny case: 4 blocks of 7 days (24 arrangements), x on day t against y on day t + 1, where y
    /// follows x's previous day; with gaps, some days of each side have no value.
    static func tinyCase(gaps: Bool, blocks: Int = 4) -> (x: [Double], y: [Double]) {
        var rng = SeededGenerator(seed: 99)
        let days = 1 + 7 * blocks + 1
        var x = (0..<days).map { _ in rng.unit() }
        var y = (0..<days).map { t in rng.unit() + (t > 0 ? 0.8 * x[t - 1] : 0) }
        if gaps {
            for t in 0..<days where t % 6 == 4 { x[t] = .nan }
            for t in 0..<days where t % 5 == 2 { y[t] = .nan }
        }
        return (x, y)
    }

    static func permutations(_ n: Int) -> [[Int]] {
        guard n > 1 else { return [[0]] }
        return permutations(n - 1).flatMap { p in
            (0...p.count).map { i in
                var q = p
                q.insert(n - 1, at: i)
                return q
            }
        }
    }

    @Test(arguments: [false, true])
    func blockStatisticMatchesDayByDayPearsonForEveryArrangement(gaps: Bool) {
        let (x, y) = Self.tinyCase(gaps: gaps)
        let statistic = BlockStatistic(x: x, y: y, lag: 1, start: 1, blocks: 4)
        #expect(statistic.dense == !gaps)
        let all = Self.permutations(4)
        #expect(all.count == 24)
        var reached = 0
        let observed = Self.dayByDay(x, y, order: [0, 1, 2, 3])
        #expect(abs(statistic.r - observed) < 1e-12)
        for order in all {
            let brute = Self.dayByDay(x, y, order: order)
            let offsets = order.enumerated().map { Int32($0.offset * 4 + $0.element) }
            #expect(abs(statistic.permutedR(offsets: offsets) - brute) < 1e-12)
            if abs(brute) >= abs(observed) - 1e-12 { reached += 1 }
        }
        // The runner's Monte Carlo p (no early stop) converges on the exact permutation p.
        let exact = Double(reached) / 24
        let runner = PermutationRunner(blocks: 4, limit: 100_000, stopAfter: .max, seed: 5)
        let outcome = runner.run(count: 1) { _ in statistic }[0]
        #expect(outcome.drawn == 100_000)
        #expect(abs(outcome.p - exact) < 0.005)
    }

    /// Pearson r of x's block i against y's block order[i], one day at a time.
    static func dayByDay(_ x: [Double], _ y: [Double], order: [Int]) -> Double {
        var xs: [Double] = []
        var ys: [Double] = []
        for (i, j) in order.enumerated() {
            for d in 0..<7 {
                xs.append(x[1 + 7 * i + d])
                ys.append(y[1 + 7 * j + d + 1])
            }
        }
        return Statistics.pearson(xs, ys).r
    }

    @Test func sequentialStoppingStopsAtTenExceedancesAndFloorsAtTheLimit() {
        let (x, _) = Self.tinyCase(gaps: false, blocks: 20)
        let noise = (0..<x.count).map { Double(($0 * 7919) % 13) }
        let follower = [0] + x.dropLast().map { 2 * $0 }
        let weak = BlockStatistic(x: x, y: noise, lag: 1, start: 1, blocks: 20)
        let strong = BlockStatistic(x: x, y: follower, lag: 1, start: 1, blocks: 20)
        #expect(abs(strong.r - 1) < 1e-12)
        let runner = PermutationRunner(blocks: 20, limit: 5_000, stopAfter: 10, seed: 1)
        let outcomes = runner.run(count: 2) { $0 == 0 ? weak : strong }
        #expect(outcomes[0].drawn < 5_000)
        #expect(outcomes[0].p == 10 / Double(outcomes[0].drawn))
        // No shuffle of 20 weeks reaches r = 1: the test draws the limit and p is 1/(limit + 1).
        #expect(outcomes[1].drawn == 5_000)
        #expect(outcomes[1].p == 1.0 / 5_001)
        // Same seed, same outcomes.
        #expect(runner.run(count: 2) { $0 == 0 ? weak : strong } == outcomes)
    }

    @Test func prewhiteningRemovesWeekdayMeansAndTheLagOneFit() {
        // Day 0 is a Monday; Mondays read 10, other days alternate around 2.
        let values = (0..<28).map { t in t % 7 == 0 ? 10.0 : 2 + (t % 2 == 0 ? 1 : -1) }
        let adjusted = Statistics.weekdayAdjusted(values, firstWeekday: 0)
        #expect(adjusted[0] == 0 && adjusted[7] == 0)
        let whitened = Statistics.whitened(values, firstWeekday: 0, phiLimit: 0.95)
        #expect(whitened.residuals[0].isNaN)
        let z = adjusted
        for t in 1..<28 { #expect(abs(whitened.residuals[t] - (z[t] - whitened.phi * z[t - 1])) < 1e-12) }
        // A strongly persistent series is clamped at the limit.
        let ramp = (0..<60).map { Double($0 / 20) }
        #expect(Statistics.whitened(ramp, firstWeekday: 3, phiLimit: 0.5).phi == 0.5)
        // Missing stays missing, and a missing previous day counts as its weekday mean.
        let gappy: [Double] = [1, .nan, 3, 4, .nan, 6, 7, 8, 9, 10, .nan, 12, 13, 14]
        let g = Statistics.whitened(gappy, firstWeekday: 0, phiLimit: 0.95)
        let gz = Statistics.weekdayAdjusted(gappy, firstWeekday: 0)
        #expect(g.residuals[1].isNaN && g.residuals[4].isNaN)
        #expect(abs(g.residuals[2] - gz[2]) < 1e-12)
    }

    /// base^exponent by repeated multiplication.
    static func power(_ base: Double, _ exponent: Int) -> Double {
        (0..<exponent).reduce(1) { product, _ in product * base }
    }

    @Test func dependenceFactorFollowsBartlettAndNeverNarrows() {
        // ρ(k) = 0.5^k on both sides: the full sum is 1 + 2·Σ 0.25^k, the shuffles keep the first six
        // lags at weight (1 − k/7).
        let geometric = [1] + (1...Statistics.dependenceLags).map { Self.power(0.5, $0) }
        var full = 1.0
        var kept = 1.0
        for k in 1...Statistics.dependenceLags {
            full += 2 * Self.power(0.25, k)
            if k < 7 { kept += 2 * (1 - Double(k) / 7) * Self.power(0.25, k) }
        }
        let factor = Statistics.dependenceFactor(geometric, geometric)
        #expect(abs(factor - full / kept) < 1e-12)
        #expect(factor > 1)
        // Opposite signs would claim the shuffles are too wide: the factor stays at 1.
        let alternating = [1] + (1...Statistics.dependenceLags).map { Self.power(-0.5, $0) }
        #expect(Statistics.dependenceFactor(geometric, alternating) == 1)
        // White noise on one side leaves nothing to widen.
        let white = [1] + [Double](repeating: 0, count: Statistics.dependenceLags)
        #expect(Statistics.dependenceFactor(geometric, white) == 1)
    }

    @Test func autocorrelationsHandleGapsAndConstants() {
        // An alternating series: ρ(1) = −(n − 1)/n, ρ(2) = (n − 2)/n over the present days.
        let alternating = (0..<20).map { $0 % 2 == 0 ? 1.0 : -1.0 }
        let rho = Statistics.autocorrelations(alternating, lags: 3)
        #expect(rho.count == 4 && rho[0] == 1)
        #expect(abs(rho[1] + 19.0 / 20) < 1e-12 && abs(rho[2] - 18.0 / 20) < 1e-12)
        // A gap removes the products that touch it; a constant series has no autocorrelation.
        var gappy = alternating
        gappy[5] = .nan
        let g = Statistics.autocorrelations(gappy, lags: 1)
        let mean = gappy.filter { !$0.isNaN }.reduce(0, +) / 19
        let z = gappy.map { $0 - mean }
        var lagged = 0.0
        for t in 1..<20 where !z[t].isNaN && !z[t - 1].isNaN { lagged += z[t] * z[t - 1] }
        let square = z.filter { !$0.isNaN }.reduce(0) { $0 + $1 * $1 }
        #expect(abs(g[1] - lagged / square) < 1e-12)
        #expect(Statistics.autocorrelations([Double](repeating: 3, count: 10), lags: 2) == [1, 0, 0])
    }

    @Test func widenedSpreadOnlyRaisesTheBarFromTheObserved() {
        // spread f compares the observed |r| / √f with the shuffles: p can only grow, and f = 1 is unchanged.
        let (x, y) = Self.tinyCase(gaps: false, blocks: 20)
        let noise = (0..<y.count).map { Double(($0 * 7919) % 13) + 0.3 * y[$0] }
        let runner = PermutationRunner(blocks: 20, limit: 20_000, stopAfter: .max, seed: 3)
        let plain = BlockStatistic(x: x, y: noise, lag: 1, start: 1, blocks: 20)
        let same = BlockStatistic(x: x, y: noise, lag: 1, start: 1, blocks: 20, spread: 1)
        let wide = BlockStatistic(x: x, y: noise, lag: 1, start: 1, blocks: 20, spread: 1.5)
        let outcomes = runner.run(count: 3) { [plain, same, wide][$0] }
        #expect(outcomes[0] == outcomes[1])
        #expect(outcomes[2].p >= outcomes[0].p)
        #expect(outcomes[2].r == outcomes[0].r)
    }

    @Test func seededGeneratorReplaysAndDrawsInRange() {
        var a = SeededGenerator(seed: 42)
        var b = SeededGenerator(seed: 42)
        #expect((0..<100).map { _ in a.next() } == (0..<100).map { _ in b.next() })
        var c = SeededGenerator(seed: 43)
        #expect(a.next() != c.next())
        var counts = [Int](repeating: 0, count: 7)
        for _ in 0..<7_000 { counts[a.below(7)] += 1 }
        #expect(counts.allSatisfy { (850...1_150).contains($0) })
        #expect((0..<1_000).allSatisfy { _ in (0..<1).contains(a.unit()) })
    }
}
