import Testing
import TrendyInsights

/// The effect sentence and its numbers, on a hand-made history whose counts can be checked by hand.
struct CorrelationEffectTests {
    /// 70 days. Coffee: 3 cups every 5th day (t ≡ 0 mod 5, 14 days), 1 cup on days t ≡ 2 mod 5.
    /// Headache: the day after 10 of the 14 big-coffee days, plus 7 days t ≡ 3 mod 5 before day 35.
    /// Sleep's hours: 6.0 on days t ≡ 1 mod 5, 7.5 on the other even days, none on odd days.
    static func history() -> [DailySeries] {
        let days = 70
        let coffee = (0..<days).map { t in t % 5 == 0 ? 3.0 : t % 5 == 2 ? 1 : 0 }
        var headache = [Double](repeating: 0, count: days)
        for t in stride(from: 0, to: days, by: 5) where (t / 5) % 3 != 2 { headache[t + 1] = 1 }
        for t in stride(from: 3, to: 35, by: 5) { headache[t] = 1 }
        let sleep = (0..<days).map { t in t % 5 == 1 ? 6.0 : t % 2 == 0 ? 7.5 : .nan }
        return [
            .type("coffee", label: "Coffee", counts: coffee),
            .type("headache", label: "Headache", counts: headache),
            .property("sleep", key: "hours", label: "Sleep's hours", unit: "hours", values: sleep),
        ]
    }

    static let report = Correlations.run(history(), firstDay: Day(year: 2026, month: 3, day: 2))

    static func test(_ id: String) -> CorrelationTest? { report.tests.first { $0.id == id } }

    @Test func typeOutcomeTheDayAfterHighCounts() throws {
        let test = try #require(Self.test("corr:type:coffee:type:headache:lag1"))
        #expect(test.effect.sentence == "Headache on 10 of 14 days after 3+ Coffee, against 7 of 55 other days")
        #expect(test.effect.threshold == 3)
        #expect(test.effect.highDays == 14 && test.effect.highHits == 10)
        #expect(test.effect.otherDays == 55 && test.effect.otherHits == 7)
        #expect(test.effect.highMean == nil && test.effect.otherMean == nil)
        #expect(test.days.count == 14)
        #expect(test.days.first == Day(year: 2026, month: 3, day: 2))
        #expect(test.days.last == Day(year: 2026, month: 3, day: 2).adding(65))
    }

    @Test func sameDayWordingSaysWith() throws {
        let test = try #require(Self.test("corr:type:coffee:type:headache:lag0"))
        #expect(test.effect.sentence.hasPrefix("Headache on 0 of 14 days with 3+ Coffee, against"))
    }

    @Test func propertyOutcomeIsAveragedInItsUnits() throws {
        let test = try #require(Self.test("corr:type:coffee:prop:sleep:hours:lag1"))
        #expect(
            test.effect.sentence
                == "Sleep's hours averaged 6.0 on 14 days after 3+ Coffee, against 7.5 on 27 other days")
        #expect(test.effect.highMean == 6 && test.effect.otherMean == 7.5)
        #expect(test.effect.highHits == nil)
    }

    @Test func propertyCauseUsesItsUpperTercile() throws {
        let test = try #require(Self.test("corr:prop:sleep:hours:type:headache:lag1"))
        // 42 values: 14 of 6.0 and 28 of 7.5, so the top third starts at 7.5.
        #expect(test.effect.threshold == 7.5)
        #expect(test.effect.sentence.hasPrefix("Headache on "))
        #expect(test.effect.sentence.contains("days after Sleep's hours of 7.5 or more, against "))
        #expect(test.effect.highDays == 28 && test.effect.otherDays == 14)
    }

    @Test func usuallySingleCountsUseOneAsTheBar() {
        var counts = [Double](repeating: 0, count: 30)
        for t in stride(from: 0, to: 30, by: 2) { counts[t] = 1 }
        counts[4] = 2
        let series: [DailySeries] = [
            .type("walk", label: "Walk", counts: counts + counts + counts),
            .type("nap", label: "Nap", counts: (0..<90).map { Double(($0 / 3) % 2) }),
        ]
        let report = Correlations.run(series, firstDay: Day(year: 2026, month: 1, day: 1))
        let test = report.tests.first { $0.id == "corr:type:walk:type:nap:lag1" }
        #expect(test?.effect.threshold == 1)
        #expect(test?.effect.sentence.contains("days after Walk, against") == true)
    }
}
