import ArgumentParser
import Foundation
import TrendyInsights
import TrendyModels

/// `trendy insights`: streaks, this week against last, time patterns and correlations, computed
/// on this device (offline too); `explain` shows one insight's working; `settings` sets the zone,
/// the day start, days off and grace days.
struct InsightsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "insights",
        abstract: "Streaks, weeks, time patterns and correlations, computed on this device.",
        discussion: """
            Days are the local dates where events were logged, from the day-start hour (see \
            `trendy insights settings`). Correlations are tested as one family with a week-block permutation \
            test and Benjamini–Hochberg at q ≤ 0.10; only what passes is shown. docs/insights.md explains \
            every number.
            """,
        subcommands: [Show.self, Explain.self, Settings.self], defaultSubcommand: Show.self)

    /// `trendy insights [show]`.
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Every insight, in words.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Count days in this IANA zone instead of the saved one (e.g. Asia/Tokyo).") var timeZone: String?
        @Option(help: "As at this moment (ISO-8601, or now): later events count for nothing.") var at: String?

        func validate() throws {
            if let timeZone, ZoneOffsets.known(timeZone) == nil {
                throw ValidationError("'\(timeZone)' is not a time zone this device knows (try Europe/Berlin)")
            }
            if let at, at != "now", TrendyJSON.parseDate(at) == nil {
                throw ValidationError("'\(at)' is not an ISO-8601 time (2026-11-26T09:30:00Z)")
            }
        }

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                let report = try await InsightActions.report(env, zone: timeZone, now: at.flatMap(TrendyJSON.parseDate))
                for line in InsightsCommand.lines(report) { out.line(line) }
                out.document(report)
            }
        }
    }

    /// `trendy insights explain <id>`.
    struct Explain: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "explain",
            abstract: "One insight's working: window, n, method, statistic, p, q, tests run, days.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The insight's id, as `trendy insights` lists it (streak:…, week:…, pattern:…, corr:…).")
        var id: String

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                guard let x = try await InsightActions.explain(env, id: id) else {
                    throw CLIError(
                        code: .notFound, message: "there is no insight '\(id)' now (`trendy insights` lists them)",
                        exitCode: .dataError)
                }
                for line in InsightsCommand.working(x) { out.line(line) }
                out.document(x)
            }
        }
    }

    /// `trendy insights settings`.
    struct Settings: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "settings", abstract: "Show or change the zone, the day start, days off and grace days.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "The zone for events logged without one (an IANA name).") var homeZone: String?
        @Option(help: "The hour the day starts, 0–12 (4: a log at 00:20 counts for the day before).")
        var dayStart: Int?
        @Option(help: "Weekdays that never break a streak: comma-separated names (sat,sun), or 'none'.")
        var skipWeekdays: String?
        @Option(parsing: .singleValue, help: "A date that never breaks a streak (YYYY-MM-DD); repeat it.")
        var skipDay: [String] = []
        @Flag(help: "Forget the dates given before.") var clearSkipDays = false
        @Option(help: "Missed days forgiven per month before a streak breaks (0–31).") var grace: Int?

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                let store = try env.requireInsights()
                var settings = try await store.settings()
                let changes =
                    homeZone != nil || dayStart != nil || skipWeekdays != nil || !skipDay.isEmpty
                    || clearSkipDays || grace != nil
                if let homeZone { settings.timeZone = homeZone }
                if let dayStart { settings.dayStartHour = dayStart }
                if let skipWeekdays { settings.skipWeekdays = try InsightsCommand.weekdays(skipWeekdays) }
                if clearSkipDays { settings.skipDays = [] }
                for text in skipDay {
                    guard let day = Day(iso: text) else {
                        throw CLIError(
                            code: .invalidSettings, message: "'\(text)' is not a date (YYYY-MM-DD)", exitCode: .usage)
                    }
                    if !settings.skipDays.contains(day) { settings.skipDays.append(day) }
                }
                settings.skipDays.sort()
                if let grace { settings.gracePerMonth = grace }
                if changes {
                    do { try await store.save(settings) } catch let error as InsightSettingsError {
                        throw CLIError(code: .invalidSettings, message: error.description, exitCode: .usage)
                    }
                    out.line("Saved; every day is counted again with these settings.")
                }
                out.line("Home zone:     \(settings.timeZone)")
                out.line("Day starts at: \(settings.dayStartHour):00")
                let names = settings.skipWeekdays.sorted().map { Day.weekdayNames[$0] }
                out.line("Days off:      \(names.isEmpty ? "none" : names.joined(separator: ", "))")
                out.line(
                    "Dates off:     \(settings.skipDays.isEmpty ? "none" : settings.skipDays.map(\.iso).joined(separator: ", "))"
                )
                out.line("Grace days:    \(settings.gracePerMonth) a month")
                out.line("Device zone:   \(env.timeZone) (new events are stamped with it)")
                out.document(settings)
            }
        }
    }

    /// Weekday names (`sat,sun`, `saturday`, `none`) as numbers, Monday 0.
    static func weekdays(_ text: String) throws(CLIError) -> [Int] {
        let words = text.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        if words == ["none"] || words.isEmpty { return [] }
        return try words.map { word throws(CLIError) -> Int in
            guard word.count >= 2, let i = Day.weekdayNames.firstIndex(where: { $0.lowercased().hasPrefix(word) })
            else {
                throw CLIError(
                    code: .invalidSettings, message: "'\(word)' is not a weekday (mon … sun)", exitCode: .usage)
            }
            return i
        }
    }

    /// The report in words, with ids for `explain`.
    static func lines(_ report: InsightReport) -> [String] {
        var out: [String] = []
        if let incomplete = report.incomplete { out += ["⚠ \(incomplete)", ""] }
        if let headline = report.headline { out += ["★ \(headline.sentence)", ""] }
        func section(_ title: String, _ items: [(id: String, sentence: String)], empty: String) {
            out.append(title)
            if items.isEmpty { out.append("  \(empty)") }
            for item in items { out.append("  \(item.sentence)  [\(item.id)]") }
            out.append("")
        }
        section("Streaks", report.streaks.map { ($0.id, $0.sentence) }, empty: "nothing logged yet")
        section("This week", report.weeks.map { ($0.id, $0.sentence) }, empty: "nothing logged this week or last")
        section(
            "When", report.patterns.map { ($0.id, $0.sentence) },
            empty: "fewer than \(TimePattern.minimumEvents) events of any type")
        let c = report.correlations
        section(
            "Correlations (\(c.testsRun) tests, q ≤ 0.10)", c.findings.map { ($0.id, $0.effect.sentence) },
            empty: c.testsRun == 0
                ? (c.excluded.first.map { "none tested: \($0.text)" } ?? "none tested yet")
                : "none passed the correction; that is the usual answer")
        out.append(
            "Days are local dates from \(report.settings.dayStartHour):00; `trendy insights explain <id>` shows the working."
        )
        return out
    }

    /// One insight's working, line by line.
    static func working(_ x: InsightActions.Explained) -> [String] {
        let e = x.explanation
        var out = [
            x.sentence, "",
            "Window:     \(e.firstDay.iso) to \(e.lastDay.iso)",
            "n:          \(e.n)",
            "Statistic:  \(e.statistic)",
        ]
        if let p = e.p { out.append("p:          \(InsightFormat.p(p))") }
        if let q = e.q { out.append("q:          \(InsightFormat.p(q)) (Benjamini–Hochberg)") }
        if let tests = e.testsRun { out.append("Tests run:  \(tests), one family") }
        out.append("Method:     \(e.method)")
        if !e.days.isEmpty {
            out.append(
                "Days:       " + e.days.suffix(30).map(\.iso).joined(separator: " ")
                    + (e.days.count > 30 ? " (last 30 of \(e.days.count))" : ""))
        }
        if x.agrees {
            out.append("Recomputed from the events one by one: the same.")
        } else if let incomplete = x.incomplete {
            // During a download's counting the two differ by design (an outsider was told to run
            // `trendy repair` mid-download, which downloaded everything again).
            out.append("Recomputed from the events one by one: not the same yet. \(incomplete)")
        } else {
            out.append("Recomputed from the events one by one: DIFFERENT — run `trendy repair` and report this.")
        }
        return out
    }
}
