extension Effect {
    /// The effect of test x → y at `lag` in the person's units, and x's high days whose y was compared.
    ///
    /// x's "high" days: for a type, days with count ≥ threshold, where the threshold is 1 when x is
    /// usually logged once (fewer than a quarter of its logged days have 2 or more), else the count
    /// ≥ 2 whose share of logged days is closest to a third (the smaller on a tie). For a property,
    /// days whose value reaches its upper tercile; its other days are those with a lower value.
    static func of(x: CorrelationInput, y: CorrelationInput, lag: Int, firstDay: Day) -> (Effect, [Day]) {
        let threshold = x.series.isType ? countThreshold(x.values) : (Statistics.upperTercile(x.values) ?? 0)
        var highDays: [Day] = []
        var high: [Double] = []
        var other: [Double] = []
        for t in 0..<max(0, x.values.count - lag) {
            let (a, b) = (x.values[t], y.values[t + lag])
            guard !a.isNaN, !b.isNaN else { continue }
            if a >= threshold {
                high.append(b)
                highDays.append(firstDay.adding(t))
            } else {
                other.append(b)
            }
        }
        let relation = lag == 0 ? "with" : lag == 1 ? "after" : "\(lag) days after"
        let cause: String
        if x.series.isType {
            cause = threshold <= 1 ? x.series.label : "\(decimal(threshold, places: 0))+ \(x.series.label)"
        } else {
            cause = "\(x.series.label) of \(number(threshold, unit: x.series.unit, label: x.series.label)) or more"
        }
        let outcome = y.series.label
        if y.series.isType {
            let (highHits, otherHits) = (high.count(where: { $0 > 0 }), other.count(where: { $0 > 0 }))
            let sentence =
                "\(outcome) on \(highHits) of \(days(high.count)) \(relation) \(cause), "
                + "against \(otherHits) of \(days(other.count, "other "))"
            let effect = Effect(
                sentence: sentence, threshold: threshold, highDays: high.count, highHits: highHits, highMean: nil,
                otherDays: other.count, otherHits: otherHits, otherMean: nil)
            return (effect, highDays)
        }
        let (highMean, otherMean) = (Statistics.mean(high), Statistics.mean(other))
        func averaged(_ mean: Double?) -> String {
            guard let mean else { return "no value" }
            return decimal(mean, places: 1) + unitSuffix(y.series.unit, label: y.series.label)
        }
        let sentence =
            "\(outcome) averaged \(averaged(highMean)) on \(days(high.count)) \(relation) \(cause), "
            + "against \(averaged(otherMean)) on \(days(other.count, "other "))"
        let effect = Effect(
            sentence: sentence, threshold: threshold, highDays: high.count, highHits: nil, highMean: highMean,
            otherDays: other.count, otherHits: nil, otherMean: otherMean)
        return (effect, highDays)
    }

    /// The high-day bar of a type's counts (see `of(x:y:lag:firstDay:)`).
    static func countThreshold(_ counts: [Double]) -> Double {
        let active = counts.filter { $0 > 0 }
        guard !active.isEmpty else { return 1 }
        func share(_ c: Double) -> Double { Double(active.count(where: { $0 >= c })) / Double(active.count) }
        guard share(2) >= 0.25 else { return 1 }
        // Candidates are counts that occur, so the sentence names a count the person logged.
        let candidates = Set(active.map { $0.rounded(.up) }).filter { $0 >= 2 }.sorted()
        var best = candidates.first ?? 1
        for c in candidates where abs(share(c) - 1.0 / 3) < abs(share(best) - 1.0 / 3) { best = c }
        return best
    }

    /// `"1 day"`, `"14 days"`, `"61 other days"`.
    private static func days(_ n: Int, _ adjective: String = "") -> String {
        "\(n) \(adjective)day\(n == 1 ? "" : "s")"
    }

    /// A value with at most one decimal (`8.5`, `8`) and its unit when the label does not already say it.
    private static func number(_ value: Double, unit: String?, label: String) -> String {
        let text = decimal(value, places: 1)
        return (text.hasSuffix(".0") ? String(text.dropLast(2)) : text) + unitSuffix(unit, label: label)
    }

    /// `" km"` when there is a unit the label does not already contain, else `""`.
    private static func unitSuffix(_ unit: String?, label: String) -> String {
        guard let unit, !unit.isEmpty, !label.lowercased().contains(unit.lowercased()) else { return "" }
        return " \(unit)"
    }

    /// `value` rounded to `places` decimals, written without Foundation (`6.1`, `-0.42`, `3`).
    static func decimal(_ value: Double, places: Int) -> String {
        guard value.isFinite, abs(value) < 1e15 else { return "\(value)" }
        var factor = 1.0
        for _ in 0..<max(0, places) { factor *= 10 }
        let scaled = Int((abs(value) * factor).rounded())
        let unit = Int(factor)
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard places > 0 else { return "\(sign)\(scaled)" }
        let fraction = String(scaled % unit)
        return "\(sign)\(scaled / unit)." + String(repeating: "0", count: places - fraction.count) + fraction
    }
}
