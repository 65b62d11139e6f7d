/// One declared test: input `x` on day t against input `y` on day t + `lag` (indices into the kept inputs).
struct PlannedTest: Sendable, Hashable {
    /// Index of the earlier (or same-day) input.
    var x: Int
    /// Index of the later (or same-day) input.
    var y: Int
    /// Days from x to y.
    var lag: Int
}

/// The family of tests a run declares before looking at any result.
enum CorrelationFamily {
    /// Every test of the family, in a fixed order.
    ///
    /// - Type × type, for each unordered pair {A, B} in id order: lag 0 once (A, B), and each positive
    ///   lag both ways (A → B and B → A).
    /// - Type × property, for each type A and each property P standing for none of A's event types:
    ///   lag 0 once (A, P), and each positive lag both ways (A → P and P → A).
    /// - Never a property against its own type (a tautology), never property × property.
    static func plan(_ kept: [CorrelationInput], lags: [Int]) -> [PlannedTest] {
        var tests: [PlannedTest] = []
        func pair(_ a: Int, _ b: Int) {
            for lag in lags {
                tests.append(PlannedTest(x: a, y: b, lag: lag))
                if lag > 0 { tests.append(PlannedTest(x: b, y: a, lag: lag)) }
            }
        }
        let types = kept.indices.filter { kept[$0].series.isType }
        let properties = kept.indices.filter { !kept[$0].series.isType }
        for (i, a) in types.enumerated() {
            for b in types[(i + 1)...] { pair(a, b) }
        }
        for a in types {
            for p in properties where kept[a].typeIds.isDisjoint(with: kept[p].typeIds) { pair(a, p) }
        }
        return tests
    }

    /// The 7-day blocks every test of the family shares: paired days t = 1 ..< 1 + 7·blocks, so day 0
    /// (dropped by pre-whitening) and the last `maxLag` days (no partner) stay out, and the incomplete
    /// trailing block is dropped.
    static func blocks(days: Int, maxLag: Int) -> Int { max(0, (days - 1 - maxLag) / 7) }
}
