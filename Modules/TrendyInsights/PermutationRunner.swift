/// The p-value of one test and the permutations it took.
struct PermutationOutcome: Sendable, Hashable {
    /// The two-sided permutation p-value.
    var p: Double
    /// Permutations drawn before stopping.
    var drawn: Int
    /// The observed r of the test's statistic.
    var r: Double
    /// The paired days behind `r`.
    var n: Int
}

/// Runs the whole-week permutation tests of a family with Besag–Clifford sequential stopping.
///
/// All tests share one seeded sequence of block permutations: permutation number b is the same
/// for every test, so the outcome of a test does not depend on which other tests ran. A test stops
/// once `stopAfter` permuted |r| have reached its observed |r| after L draws (p = h / L); a test
/// that never gets there draws `limit` permutations and reports p = (g + 1) / (limit + 1).
///
/// The sequence is generated in chunks; each chunk's permutations are applied test by test, and only
/// the tables of tests still running after a chunk are kept, so memory stays small.
struct PermutationRunner {
    /// Number of 7-day blocks every test of the family uses.
    var blocks: Int
    /// The most permutations a test may draw.
    var limit: Int
    /// Exceedances that stop a test early (h).
    var stopAfter: Int
    /// The seed of the permutation sequence.
    var seed: UInt64
    /// Permutations generated per chunk.
    var chunk = 2_048

    /// The outcome of each of `count` tests; `build(i)` makes test i's statistic. It is called once per
    /// test; only the statistics of tests still running after a chunk are kept for the next.
    func run(count: Int, build: (Int) -> BlockStatistic) -> [PermutationOutcome] {
        var outcomes = [PermutationOutcome?](repeating: nil, count: count)
        var exceed = [Int](repeating: 0, count: count)
        var drawn = [Int](repeating: 0, count: count)
        var cache: [Int: BlockStatistic] = [:]
        var observed = [(r: Double, n: Int)](repeating: (0, 0), count: count)
        var running = Array(0..<count)
        if blocks < 2 {
            // Too few blocks to shuffle: no test can be told from chance.
            for i in running {
                let statistic = build(i)
                outcomes[i] = PermutationOutcome(p: 1, drawn: 0, r: statistic.r, n: statistic.n)
            }
            running = []
        }
        var generator = SeededGenerator(seed: seed)
        var order = Array(0..<blocks)
        var offsets = [Int32](repeating: 0, count: chunk * blocks)
        var done = 0
        while done < limit, !running.isEmpty {
            let rounds = min(chunk, limit - done)
            order.withUnsafeMutableBufferPointer { order in
                offsets.withUnsafeMutableBufferPointer { offsets in
                    for round in 0..<rounds {
                        // Fisher–Yates on the previous arrangement: uniform, and independent of it.
                        var i = blocks - 1
                        while i > 0 {
                            let j = generator.below(i + 1)
                            (order[i], order[j]) = (order[j], order[i])
                            i -= 1
                        }
                        for i in 0..<blocks { offsets[round * blocks + i] = Int32(i * blocks + order[i]) }
                    }
                }
            }
            var stillRunning: [Int] = []
            offsets.withUnsafeBufferPointer { offsets in
                for test in running {
                    let statistic = cache[test] ?? build(test)
                    observed[test] = (statistic.r, statistic.n)
                    // A test with no spread cannot be told from chance.
                    var finished = statistic.degenerate
                    if finished { outcomes[test] = PermutationOutcome(p: 1, drawn: 0, r: 0, n: statistic.n) }
                    for round in 0..<rounds where !finished {
                        drawn[test] += 1
                        if statistic.reaches(offsets, at: round * blocks) {
                            exceed[test] += 1
                            if exceed[test] >= stopAfter {
                                outcomes[test] = PermutationOutcome(
                                    p: Double(exceed[test]) / Double(drawn[test]), drawn: drawn[test],
                                    r: statistic.r, n: statistic.n)
                                finished = true
                            }
                        }
                    }
                    if finished {
                        cache[test] = nil
                    } else {
                        cache[test] = statistic
                        stillRunning.append(test)
                    }
                }
            }
            running = stillRunning
            done += rounds
        }
        for test in running {
            outcomes[test] = PermutationOutcome(
                p: Double(exceed[test] + 1) / Double(drawn[test] + 1), drawn: drawn[test], r: observed[test].r,
                n: observed[test].n)
        }
        return outcomes.enumerated().map { i, outcome in
            outcome ?? PermutationOutcome(p: 1, drawn: 0, r: observed[i].r, n: observed[i].n)
        }
    }
}
