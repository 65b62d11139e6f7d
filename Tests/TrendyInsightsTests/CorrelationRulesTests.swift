import Foundation
import Testing
import TrendyInsights
import TrendyInsightsTesting

/// The rules a report keeps whatever the data: determinism, the declared family, no tautologies,
/// collapse of redundant inputs, exclusions with reasons, refusal of short histories.
struct CorrelationRulesTests {
    static let firstDay = Day(year: 2026, month: 1, day: 5)

    /// Independent noise counts, seeded: logged on roughly half the days.
    static func noise(_ seed: UInt64, days: Int = 84) -> [Double] {
        var rng = SeededGenerator(seed: seed)
        return (0..<days).map { _ in Double(rng.below(3) == 0 ? 0 : rng.below(3)) }
    }

    static func values(_ seed: UInt64, days: Int = 84, present: (Int) -> Bool = { _ in true }) -> [Double] {
        var rng = SeededGenerator(seed: seed)
        return (0..<days).map { t in
            let v = 5 + 2 * rng.unit()
            return present(t) ? v : .nan
        }
    }

    @Test func sameInputGivesTheSameReportBitForBitWhateverTheOrder() throws {
        let history = NullHistories.history(seed: 7)
        let a = Correlations.run(history.series, firstDay: history.firstDay)
        let b = Correlations.run(history.series, firstDay: history.firstDay)
        let c = Correlations.run(history.series.reversed(), firstDay: history.firstDay)
        #expect(a == b)
        #expect(a == c)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(try encoder.encode(a) == encoder.encode(c))
        #expect(a.testsRun > 0)
    }

    @Test func familyPairsTypesAndForeignPropertiesAtDeclaredLagsOnly() {
        let series: [DailySeries] = [
            .type("a", label: "A", counts: Self.noise(1)),
            .type("b", label: "B", counts: Self.noise(2)),
            .type("c", label: "C", counts: Self.noise(3)),
            .property("a", key: "k", label: "A's k", values: Self.values(4) { $0 % 3 != 0 }),
            .property("b", key: "k", label: "B's k", values: Self.values(5)),
        ]
        let report = Correlations.run(series, firstDay: Self.firstDay)
        // 3 type pairs × 3 + (A, B's k), (B, A's k), (C, A's k), (C, B's k) × 3.
        #expect(report.testsRun == 9 + 12)
        #expect(report.tests.count == report.testsRun)
        let ids = Set(report.tests.map(\.id))
        #expect(ids.count == report.testsRun)
        #expect(ids.contains("corr:type:a:type:b:lag0"))
        #expect(!ids.contains("corr:type:b:type:a:lag0"))
        #expect(ids.contains("corr:type:a:type:b:lag1") && ids.contains("corr:type:b:type:a:lag1"))
        #expect(ids.contains("corr:type:c:prop:a:k:lag0") && ids.contains("corr:prop:a:k:type:c:lag1"))
        #expect(Set(report.tests.map(\.lag)) == [0, 1])
        for test in report.tests {
            let ownerPairs = [("type:a", "prop:a:k"), ("type:b", "prop:b:k")]
            #expect(!ownerPairs.contains { ($0 == test.x && $1 == test.y) || ($0 == test.y && $1 == test.x) })
            #expect(test.x.hasPrefix("type:") || test.y.hasPrefix("type:"))
            #expect(test.id == CorrelationTest.id(x: test.x, y: test.y, lag: test.lag))
        }
        // One family: q is Benjamini–Hochberg over exactly these p-values.
        let q = BenjaminiHochberg.qValues(report.tests.map(\.p))
        #expect(report.tests.map(\.q) == q)
        #expect(report.tests.map(\.p) == report.tests.map(\.p).sorted())
        #expect(report.findings.allSatisfy { $0.q <= CorrelationSettings.standard.q })
    }

    @Test func redundantSeriesAreTestedOnceAsTheFirstById() {
        let a = Self.noise(1)
        let series: [DailySeries] = [
            .type("z", label: "Z", counts: a.map { $0 * 2 }),
            .type("a", label: "A", counts: a),
            .type("b", label: "B", counts: Self.noise(2)),
            .property("z", key: "k", label: "Z's k", values: Self.values(4) { a[$0] > 0 }),
        ]
        let report = Correlations.run(series, firstDay: Self.firstDay)
        #expect(report.collapsed == [["type:a", "type:z"]])
        let z = report.excluded.first { $0.series == "type:z" }
        guard case .redundant(let keptAs, let r)? = z?.reason else {
            Issue.record("type:z should be excluded as redundant, got \(String(describing: z))")
            return
        }
        #expect(keptAs == "type:a" && abs(r - 1) < 1e-12)
        #expect(z?.text.contains("tested as type:a") == true)
        #expect(!report.tests.contains { $0.x == "type:z" || $0.y == "type:z" })
        // Z's property is Z's, and Z is tested as A: testing it against A would be a tautology.
        #expect(!report.tests.contains { Set([$0.x, $0.y]) == ["type:a", "prop:z:k"] })
        #expect(report.tests.contains { Set([$0.x, $0.y]) == ["type:b", "prop:z:k"] })
        #expect(report.testsRun == 3 + 3)
    }

    @Test func seriesWithoutEnoughDataAreExcludedWithTheirReason() {
        var rare = [Double](repeating: 0, count: 84)
        for t in [3, 40, 70] { rare[t] = 1 }
        var daily = [Double](repeating: 1, count: 84)
        daily[10] = 0
        let series: [DailySeries] = [
            .type("rare", label: "Rare", counts: rare),
            .type("daily", label: "Daily", counts: daily),
            .type("ok", label: "OK", counts: Self.noise(1)),
            .type("ok", label: "OK again", counts: Self.noise(2)),
            .property("ok", key: "sparse", label: "Sparse", values: Self.values(3) { $0 % 10 == 0 }),
            .property("ok", key: "flat", label: "Flat", values: [Double](repeating: 4, count: 84)),
        ]
        let report = Correlations.run(series, firstDay: Self.firstDay)
        let reasons = Dictionary(
            report.excluded.map { ($0.series + "|" + $0.label, $0) }, uniquingKeysWith: { a, _ in a })
        #expect(reasons["type:rare|Rare"]?.reason == .tooFewLoggedDays(logged: 3, needed: 8))
        #expect(reasons["type:rare|Rare"]?.text == "logged on 3 days; 8 needed")
        #expect(reasons["type:daily|Daily"]?.reason == .tooFewUnloggedDays(unlogged: 1, needed: 8))
        #expect(reasons["type:ok|OK again"]?.reason == .duplicateId)
        #expect(reasons["prop:ok:sparse|Sparse"]?.reason == .tooFewValues(values: 9, needed: 14))
        #expect(reasons["prop:ok:flat|Flat"]?.reason == .noVariation)
        #expect(report.excluded.count == 5)
        #expect(report.testsRun == 0)
        #expect(report.findings.isEmpty)
    }

    @Test func historiesShorterThanTheMinimumAreRefusedWithTheReason() {
        let series: [DailySeries] = [
            .type("a", label: "A", counts: Self.noise(1, days: 40)),
            .type("b", label: "B", counts: Self.noise(2, days: 40)),
        ]
        let report = Correlations.run(series, firstDay: Self.firstDay)
        #expect(report.days == 40)
        #expect(report.testsRun == 0 && report.tests.isEmpty && report.findings.isEmpty)
        #expect(report.excluded.map(\.reason) == Array(repeating: .historyTooShort(days: 40, needed: 56), count: 2))
        #expect(report.method.contains("at least 56 days"))
    }

    @Test func permutationLimitLetsTheStrongestTestPassTheBar() {
        let settings = CorrelationSettings.standard
        #expect(settings.permutationLimit(tests: 9) == 5_000)
        #expect(settings.permutationLimit(tests: 855) == 171_000)
        #expect(settings.permutationLimit(tests: 100_000) == settings.maximumPermutations)
        for m in [1, 30, 855, 2_000] {
            #expect(1 / Double(settings.permutationLimit(tests: m) + 1) <= settings.q / Double(m))
        }
    }

    @Test func methodParagraphStatesThisRunsChoices() {
        let history = NullHistories.history(seed: 3)
        let report = Correlations.run(history.series, firstDay: history.firstDay)
        #expect(report.method.contains("All \(report.testsRun) tests form one Benjamini–Hochberg family"))
        #expect(report.method.contains("drew \(report.permutationLimit) shuffles"))
        #expect(report.method.contains("whole weeks"))
        #expect(report.method.contains("pre-whitened"))
    }
}
