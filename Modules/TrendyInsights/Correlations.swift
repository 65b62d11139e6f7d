/// Honest correlations between a person's daily series: a declared family of tests on weekday-adjusted,
/// pre-whitened series, whole-week permutation p-values widened for the dependence a week shuffle
/// cannot keep, and one Benjamini–Hochberg correction.
///
/// ```swift
/// let report = Correlations.run(series, firstDay: Day(year: 2026, month: 1, day: 5))
/// for finding in report.findings { print(finding.effect.sentence) }
/// ```
///
/// Pure and deterministic: the same input and settings give the same report bit for bit (the only
/// randomness is the seeded permutation sequence). No I/O; safe to call from any thread or task.
/// The cost grows with the number of tests and, for tests that are real findings, with the
/// permutation limit; run it off the main actor.
public enum Correlations {
    /// Tests every declared pair of `series` and reports what passes, in the person's units.
    ///
    /// Every series has one value per day from `firstDay`; the window is as long as the longest
    /// series (shorter ones read as not logged / no value at the end). The caller trims the window to
    /// the first and last day with data.
    public static func run(
        _ series: [DailySeries], firstDay: Day, settings: CorrelationSettings = .standard
    ) -> CorrelationReport {
        let days = series.map(\.values.count).max() ?? 0
        let inputs = CorrelationInputs(series, days: days, settings: settings)
        let kept = inputs.kept
        let lags = settings.declaredLags
        let planned = days >= settings.minimumDays ? CorrelationFamily.plan(kept, lags: lags) : []
        let blocks = CorrelationFamily.blocks(days: days, maxLag: lags.last ?? 0)
        let limit = settings.permutationLimit(tests: planned.count)

        let whitened = kept.map {
            Statistics.whitened($0.values, firstWeekday: firstDay.weekday, phiLimit: settings.phiLimit).residuals
        }
        // Each residual series' own autocorrelation, for the dependence the week shuffle cannot keep.
        let autocorrelations = whitened.map { Statistics.autocorrelations($0) }
        let runner = PermutationRunner(
            blocks: blocks, limit: limit, stopAfter: max(1, settings.exceedancesToStop), seed: settings.seed)
        let spreads = planned.map { Statistics.dependenceFactor(autocorrelations[$0.x], autocorrelations[$0.y]) }
        let outcomes = runner.run(count: planned.count) { i in
            let test = planned[i]
            return BlockStatistic(
                x: whitened[test.x], y: whitened[test.y], lag: test.lag, start: 1, blocks: blocks, spread: spreads[i])
        }
        let qValues = BenjaminiHochberg.qValues(outcomes.map(\.p))

        var tests: [CorrelationTest] = []
        for (i, test) in planned.enumerated() {
            let (x, y) = (kept[test.x], kept[test.y])
            let (effect, highDays) = Effect.of(x: x, y: y, lag: test.lag, firstDay: firstDay)
            tests.append(
                CorrelationTest(
                    id: CorrelationTest.id(x: x.series.id, y: y.series.id, lag: test.lag), x: x.series.id,
                    y: y.series.id, lag: test.lag, n: outcomes[i].n, r: outcomes[i].r,
                    rawR: Statistics.laggedPearson(x.values, y.values, lag: test.lag).r, p: outcomes[i].p,
                    q: qValues[i], permutations: outcomes[i].drawn, effect: effect, days: highDays))
        }
        tests.sort { ($0.p, -abs($0.r), $0.id) < ($1.p, -abs($1.r), $1.id) }
        let findings = tests.filter { $0.q <= settings.q }
            .sorted { (-abs($0.r), $0.p, $0.id) < (-abs($1.r), $1.p, $1.id) }
        let excluded = inputs.excluded.sorted { $0.series < $1.series }
        let facts = CorrelationMethod.Facts(
            firstDay: firstDay, days: days, tests: planned.count, blocks: blocks, limit: limit,
            findings: findings.count, excluded: excluded.count, collapsedGroups: inputs.collapsed.count,
            settings: settings, widened: spreads.count(where: { $0 > 1 }), largestSpread: spreads.max() ?? 1)
        return CorrelationReport(
            firstDay: firstDay, days: days, testsRun: planned.count, tests: tests, findings: findings,
            excluded: excluded, collapsed: inputs.collapsed, permutationLimit: planned.isEmpty ? 0 : limit,
            settings: settings, method: CorrelationMethod.text(facts))
    }
}
