/// One series as the run uses it: its values over the window, cleaned.
struct CorrelationInput: Sendable {
    /// The caller's series (values as given).
    var series: DailySeries
    /// One value per window day: a type's missing or negative counts read as 0; a property's
    /// non-finite values read as missing (`nan`).
    var values: [Double]
    /// The event types this input stands for: its own, plus those of the series collapsed into it.
    var typeIds: Set<String>

    /// The input for `series` over a window of `days` days.
    init(_ series: DailySeries, days: Int) {
        self.series = series
        var values = Array(series.values.prefix(days))
        if values.count < days {
            values += [Double](repeating: series.isType ? 0 : .nan, count: days - values.count)
        }
        self.values =
            series.isType ? values.map { $0.isFinite && $0 > 0 ? $0 : 0 } : values.map { $0.isFinite ? $0 : .nan }
        typeIds = [series.typeId]
    }
}

/// The inputs that survive the coverage rules and the redundancy collapse, and what happened to the rest.
struct CorrelationInputs: Sendable {
    /// The inputs to test, in id order.
    var kept: [CorrelationInput] = []
    /// Series left out, and why.
    var excluded: [Exclusion] = []
    /// Groups tested as one, the kept id first.
    var collapsed: [[String]] = []

    /// Applies the rules to `series` over a window of `days` days.
    init(_ series: [DailySeries], days: Int, settings: CorrelationSettings) {
        var seen: Set<String> = []
        var eligible: [CorrelationInput] = []
        // Id order makes the result independent of the caller's order (the first of equal ids wins).
        for item in series.enumerated().sorted(by: { ($0.element.id, $0.offset) < ($1.element.id, $1.offset) }) {
            let one = item.element
            guard seen.insert(one.id).inserted else {
                excluded.append(Exclusion(series: one.id, label: one.label, reason: .duplicateId))
                continue
            }
            if days < settings.minimumDays {
                let reason = Exclusion.Reason.historyTooShort(days: days, needed: settings.minimumDays)
                excluded.append(Exclusion(series: one.id, label: one.label, reason: reason))
                continue
            }
            let input = CorrelationInput(one, days: days)
            if let reason = Self.ineligibility(of: input, settings: settings) {
                excluded.append(Exclusion(series: one.id, label: one.label, reason: reason))
            } else {
                eligible.append(input)
            }
        }
        collapse(eligible, settings: settings)
    }

    /// Why an input cannot be tested, or nil when it can.
    static func ineligibility(of input: CorrelationInput, settings: CorrelationSettings) -> Exclusion.Reason? {
        let days = input.values.count
        if input.series.isType {
            let logged = input.values.count(where: { $0 > 0 })
            if logged < settings.minimumActiveDays {
                return .tooFewLoggedDays(logged: logged, needed: settings.minimumActiveDays)
            }
            if days - logged < settings.minimumActiveDays {
                return .tooFewUnloggedDays(unlogged: days - logged, needed: settings.minimumActiveDays)
            }
            return nil
        }
        let present = input.values.filter { !$0.isNaN }
        if present.count < settings.minimumValues {
            return .tooFewValues(values: present.count, needed: settings.minimumValues)
        }
        if let first = present.first, present.allSatisfy({ $0 == first }) { return .noVariation }
        return nil
    }

    /// Groups inputs of the same kind whose raw same-day |r| reaches the redundancy bar, comparing each
    /// input (in id order) with the kept input of every earlier group; the first id of a group is kept.
    private mutating func collapse(_ eligible: [CorrelationInput], settings: CorrelationSettings) {
        var groups: [[Int]] = []
        for (index, input) in eligible.enumerated() {
            var joined = false
            for g in groups.indices {
                let head = eligible[groups[g][0]]
                guard head.series.isType == input.series.isType else { continue }
                let (r, n) = Statistics.pearson(head.values, input.values)
                let enough = input.series.isType || n >= settings.minimumValues
                if enough, abs(r) >= settings.redundancy {
                    groups[g].append(index)
                    let reason = Exclusion.Reason.redundant(keptAs: head.series.id, r: r)
                    excluded.append(Exclusion(series: input.series.id, label: input.series.label, reason: reason))
                    joined = true
                    break
                }
            }
            if !joined { groups.append([index]) }
        }
        for group in groups {
            var head = eligible[group[0]]
            for member in group.dropFirst() { head.typeIds.formUnion(eligible[member].typeIds) }
            kept.append(head)
            if group.count > 1 { collapsed.append(group.map { eligible[$0].series.id }) }
        }
    }
}
