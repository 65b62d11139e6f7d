import Foundation
import Testing
import TrendyInsights

/// The small tests on counts against published values.
struct CountTestsTests {
    @Test func binomialMatchesExactValues() {
        // 10 of 10 at ½: 2 × (½)^10.
        #expect(abs(CountTests.binomialTwoSided(10, of: 10) - 2.0 / 1024) < 1e-12)
        #expect(abs(CountTests.binomialTwoSided(0, of: 10) - 2.0 / 1024) < 1e-12)
        // 8 of 10: 2 × (1 + 10 + 45) / 1024 = 0.109375.
        #expect(abs(CountTests.binomialTwoSided(8, of: 10) - 0.109375) < 1e-12)
        #expect(CountTests.binomialTwoSided(5, of: 10) == 1)
        #expect(CountTests.binomialTwoSided(0, of: 0) == 1)
        // 60 of 100: R's binom.test gives 0.05689.
        #expect(abs(CountTests.binomialTwoSided(60, of: 100) - 0.056887) < 1e-5)
        // Large counts stay finite.
        #expect(CountTests.binomialTwoSided(5_200, of: 10_000) < 0.0001)
    }

    @Test func chiSquareTailMatchesTables() {
        // Critical values: 12.592 at 0.05 and 16.812 at 0.01 for 6 degrees of freedom; 5.991 at 0.05 for 2.
        #expect(abs(CountTests.chiSquareTail(12.592, degreesOfFreedom: 6) - 0.05) < 1e-4)
        #expect(abs(CountTests.chiSquareTail(16.812, degreesOfFreedom: 6) - 0.01) < 1e-4)
        #expect(abs(CountTests.chiSquareTail(5.991, degreesOfFreedom: 2) - 0.05) < 1e-4)
        #expect(CountTests.chiSquareTail(0, degreesOfFreedom: 6) == 1)
    }

    @Test func rayleighMatchesZar() {
        // Zar, Biostatistical Analysis, example 26.2: n = 8, r = 0.82522, p < 0.001 (z = 5.448).
        let p = CountTests.rayleigh(n: 8, r: 0.82522)
        #expect(p < 0.002 && p > 0.0005)
        #expect(CountTests.rayleigh(n: 100, r: 0.01) > 0.9)
    }
}
