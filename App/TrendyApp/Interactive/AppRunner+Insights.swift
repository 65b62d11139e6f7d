import Foundation
import Synchronization
import TrendyInsights
import TrendySync

extension AppRunner {
    /// What the insights depend on: a local write moves the change mark, a pass its time, and the
    /// minute (today, this week "up to now").
    struct InsightKey: Equatable {
        var mark: Int64
        var synced: Date?
        var minute: Int64
    }

    /// The insights, computed off the key path: the last ones until new ones are in (then the
    /// screen is drawn again), nil before the first or without the insights plugin.
    func insightReport(sink: AsyncStream<Input>.Continuation?) async throws -> InsightReport? {
        guard env.insights != nil else { return nil }
        let key = InsightKey(
            mark: try await env.store.localChangeMark(), synced: env.sync.status.lastSuccessfulSync,
            minute: Int64(env.now().timeIntervalSince1970 / 60))
        let known = insights.withLock { $0 }
        if let known, known.key == key { return known.report }
        let env = env
        let compute: @Sendable () async -> InsightReport? = { try? await InsightActions.report(env) }
        guard let sink else {
            let report = await compute()
            if let report { insights.withLock { $0 = (key, report) } }
            return report
        }
        Task {
            guard let report = await compute() else { return }
            let changed = insights.withLock { last in
                defer { last = (key, report) }
                return last?.report != report
            }
            // Drawn again only when something shows differently (not once a minute for nothing).
            if changed { sink.yield(.refresh) }
        }
        return known?.report
    }
}

/// The analytics tab's insights: streaks, this week against last, when (a 7 × 24 heat row per
/// type) and what passed the correlation test; sentences only in plain mode.
enum AppInsightViews {
    /// Shades from none to most, for the heat rows.
    static let shades: [Character] = [" ", "░", "▒", "▓", "█"]

    static func lines(_ report: InsightReport?, plain: Bool) -> [String] {
        guard let report else { return ["", "Insights: counting…"] }
        var out: [String] = [""]
        if let incomplete = report.incomplete { out += [incomplete, ""] }
        out.append("Streaks")
        let streaks = report.streaks.sorted {
            ($0.current?.logged ?? 0, $0.strength) > ($1.current?.logged ?? 0, $1.strength)
        }
        out += streaks.prefix(5).map { "  " + $0.sentence }
        if streaks.isEmpty { out.append("  nothing logged yet") }
        out += ["", "This week (Monday to now) against the same span last week"]
        out += report.weeks.prefix(5).map { "  " + $0.sentence }
        if report.weeks.isEmpty { out.append("  nothing logged this week or last") }
        out += ["", "When"]
        if report.patterns.isEmpty { out.append("  fewer than \(TimePattern.minimumEvents) events of any type") }
        for pattern in report.patterns.sorted(by: { $0.n > $1.n }).prefix(plain ? 5 : 2) {
            out.append("  " + pattern.sentence)
            if !plain { out += heat(pattern) }
        }
        let c = report.correlations
        out += ["", "Related (\(c.testsRun) tests, corrected, q ≤ 0.10)"]
        if c.findings.isEmpty {
            out.append(
                c.testsRun == 0
                    ? "  not enough days yet: \(c.excluded.first?.text ?? "keep logging")"
                    : "  nothing passed the correction — the usual, honest answer")
        }
        out += c.findings.prefix(3).map { "  " + $0.effect.sentence }
        out.append("  `trendy insights` lists each with its id; `trendy insights explain <id>` shows its working.")
        return out
    }

    /// One bar per week, as tall as its count against the highest.
    static func bars(_ counts: [Int]) -> String {
        let blocks: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]
        let top = max(1, counts.max() ?? 1)
        return String(counts.map { $0 == 0 ? " " : blocks[min(7, $0 * 8 / (top + 1))] })
    }

    /// Seven rows (Monday first) of 24 hours, shaded by events.
    static func heat(_ pattern: TimePattern) -> [String] {
        let top = max(1, pattern.slots.max() ?? 1)
        var rows = ["      0     6     12    18   "]
        for w in 0..<7 {
            let cells = (0..<24).map { h -> Character in
                let c = pattern.slots[w * 24 + h]
                return c == 0 ? "·" : shades[min(4, 1 + c * 4 / (top + 1))]
            }
            rows.append("    \(Day.weekdayNames[w].prefix(2)) " + String(cells))
        }
        return rows
    }
}
