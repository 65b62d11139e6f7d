/// The report's `method` paragraph: how the run chose and decided its tests, with this run's numbers.
enum CorrelationMethod {
    /// The facts of one run the paragraph quotes.
    struct Facts {
        var firstDay: Day
        var days: Int
        var tests: Int
        var blocks: Int
        var limit: Int
        var findings: Int
        var excluded: Int
        var collapsedGroups: Int
        var settings: CorrelationSettings
        /// How many tests had their shuffled spread widened (dependence factor above 1).
        var widened: Int = 0
        /// The largest dependence factor of the run (1 when none was widened).
        var largestSpread: Double = 1
    }

    /// The paragraph.
    static func text(_ f: Facts) -> String {
        let s = f.settings
        let lagsText = s.declaredLags.map(String.init).joined(separator: " and ")
        var parts: [String] = []
        parts.append(
            "Window: \(f.days) days from \(f.firstDay.iso).")
        if f.days < s.minimumDays {
            parts.append(
                "Nothing was tested: correlations need at least \(s.minimumDays) days of history, "
                    + "because with fewer a few coincidences look like a pattern.")
            return parts.joined(separator: " ")
        }
        parts.append(
            "A type was tested only if it was logged on at least \(s.minimumActiveDays) days and not logged on "
                + "at least as many; a property only with a value on at least \(s.minimumValues) days "
                + "(\(f.excluded) series left out, each with its reason).")
        parts.append(
            "Series of the same kind whose same-day |r| reached \(Effect.decimal(s.redundancy, places: 2)) "
                + "were tested once, as the first by id (\(f.collapsedGroups) such group\(f.collapsedGroups == 1 ? "" : "s"))."
        )
        parts.append(
            "Types were paired with types and with the properties of other types, never a property with its own "
                + "type or with another property; each pair was tested at the declared lags (\(lagsText) "
                + "day\(lagsText == "1" ? "" : "s") later), same-day once and later days in both directions, "
                + "declared in advance rather than searched.")
        if f.tests == 0 {
            parts.append("No pair was left to test, so nothing was published.")
            return parts.joined(separator: " ")
        }
        parts.append(
            "Before testing, each series had its weekday means removed and was pre-whitened with its own AR(1) "
                + "fit (φ clamped to ±\(Effect.decimal(s.phiLimit, places: 2))), so habits that merely drift or "
                + "repeat by weekday do not look related; the statistic is Pearson's r of these residuals "
                + "over the days both sides have a value.")
        let smallest = 1.0 / Double(f.limit + 1)
        let bar = s.q / Double(f.tests)
        let resolution =
            smallest <= bar
            ? "so even the strongest test can reach the Benjamini–Hochberg bar q/m = \(scientific(bar))"
            : "capped there, so the smallest attainable p is above the Benjamini–Hochberg bar q/m = "
                + "\(scientific(bar)) and with this many tests no finding can pass"
        parts.append(
            "Each p-value is two-sided, from a permutation test that moves whole weeks of one series against "
                + "the other (\(f.blocks) blocks of 7 days, weekday positions kept, the incomplete last week "
                + "dropped), all tests sharing one sequence of shuffles seeded with \(s.seed).")
        parts.append(
            "Moving whole weeks keeps each series' day-to-day dependence within a week but breaks it across "
                + "weeks, and one AR(1) step does not remove all of it (the counts of a persistent habit stay a "
                + "little autocorrelated for weeks), so shuffles alone would show the chance spread of r too "
                + "narrow and call some coincidences rare. Each test therefore took both residual series' own "
                + "autocorrelations ρ(k) up to \(Statistics.dependenceLags) days apart and Bartlett's "
                + "variance factor f = (1 + 2·Σ ρx(k)·ρy(k) over those lags) / "
                + "(1 + 2·Σ (1 − k/7)·ρx(k)·ρy(k) over lags 1 to 6, the part the shuffles keep), "
                + "never below 1 because less would be "
                + "estimation noise; a shuffle counts as reaching the test when its |r| × √f reaches the "
                + "observed |r|. \(f.widened) of the \(f.tests) tests were widened this way"
                + (f.widened > 0 ? ", the most by f = \(Effect.decimal(f.largestSpread, places: 2))." : "."))
        parts.append(
            "A test stopped as soon as \(s.exceedancesToStop) shuffles reached its |r| (Besag–Clifford: p = "
                + "\(s.exceedancesToStop) / shuffles drawn); otherwise it drew \(f.limit) shuffles and p = "
                + "(shuffles reaching it + 1) / \(f.limit + 1). That limit is "
                + "max(\(s.minimumPermutations), \(Effect.decimal(s.resolution, places: 0)) × m / q) for the "
                + "m = \(f.tests) tests, at most \(s.maximumPermutations), \(resolution).")
        parts.append(
            "All \(f.tests) tests form one Benjamini–Hochberg family at q = \(Effect.decimal(s.q, places: 2)); "
                + "\(f.findings) passed. Effects are told in the person's units: how often, or how much, the "
                + "second series showed up after (or with) the first's high days, against its other days.")
        return parts.joined(separator: " ")
    }

    /// A small positive number in short scientific form: `0.000117` → `"1.2e-4"`.
    static func scientific(_ value: Double) -> String {
        guard value > 0, value.isFinite else { return Effect.decimal(value, places: 2) }
        if value >= 0.01 { return Effect.decimal(value, places: 3) }
        var mantissa = value
        var exponent = 0
        while mantissa < 1 {
            mantissa *= 10
            exponent -= 1
        }
        return "\(Effect.decimal(mantissa, places: 1))e\(exponent)"
    }
}
