import Foundation
import TrendyModels
import TrendyOnboarding

/// What a screen shows, gathered from the local store and the caches.
enum ScreenContent: Sendable {
    case loading
    case onboarding(OnboardingStep, OnboardingFacts)
    case login(email: String?)
    case main(MainTab, MainFacts, banner: String)
    case error(String)

    /// The screen's id in frames.
    var id: String {
        switch self {
        case .loading: "loading"
        case .onboarding(let step, _): "onboarding.\(step.rawValue)"
        case .login: "login"
        case .main(let tab, _, _): tab.rawValue
        case .error: "error"
        }
    }

    var banner: String? {
        if case .main(_, _, let banner) = self { return banner }
        return nil
    }
}

/// What the onboarding screens mention.
struct OnboardingFacts: Sendable {
    var email: String?
    var typeNames: [String]
    var eventCount: Int
    var permissions: [PermissionKind: PermissionOutcome]
}

/// What the main tabs show.
struct MainFacts: Sendable {
    /// Type names by id.
    var typeNames: [UUIDv7: String]
    /// Newest first.
    var recent: [Event]
    /// Events since midnight.
    var today: Int
    /// Per day of the current month (calendar tab).
    var days: [Int: Int] = [:]
    /// Per type name over 30 days (analytics tab).
    var perType: [(String, Int)] = []
    /// The first day of the month shown (calendar tab).
    var month: Date?
}

/// Renders screens as text. Pure: the same content always gives the same text.
enum ScreenRenderer {
    static let width = 60

    /// The screen as text; `plain` (screen readers, D40) says the same words without box drawing,
    /// bars, grids or symbols, each part deciding its plain form where it is drawn.
    static func render(_ content: ScreenContent, plain: Bool = false, timeZone: TimeZone = .current) -> String {
        Screen(plain: plain).render(content, timeZone: timeZone)
    }

    /// A line of human text without arrows, dots and ellipses (plain mode, any command's output).
    static func plainWords(_ line: String) -> String {
        var line = line
        if line.hasPrefix("→ ") { line = "Next: " + line.dropFirst(2) }
        line = line.replacingOccurrences(of: "→ trendy", with: "next: trendy")
        line = line.replacingOccurrences(of: " → ", with: ": ").replacingOccurrences(of: "→ ", with: "")
        line = line.replacingOccurrences(of: "…", with: "...")
        return line.replacingOccurrences(of: " · ", with: ", ").replacingOccurrences(of: "·", with: ",")
    }
}

/// One rendering, rich or plain.
struct Screen {
    let plain: Bool
    let width = ScreenRenderer.width

    func render(_ content: ScreenContent, timeZone: TimeZone) -> String {
        switch content {
        case .loading:
            return box("Trendy", [ScreenCopy.loading])
        case .onboarding(let step, let facts):
            return onboarding(step, facts)
        case .login(let email):
            return box(
                "Trendy · Sign in",
                [
                    ScreenCopy.login,
                    "",
                    "→ trendy login --email \(email ?? "you@example.com")",
                ])
        case .error(let message):
            return box(ScreenCopy.errorTitle, [message, "", "→ trendy status"])
        case .main(let tab, let facts, let banner):
            return main(tab, facts, banner, timeZone)
        }
    }

    func onboarding(_ step: OnboardingStep, _ f: OnboardingFacts) -> String {
        let all = OnboardingStep.allCases
        let position = (all.firstIndex(of: step) ?? 0) + 1
        let filled = Int((OnboardingFlow.progress(at: step) * 10).rounded())
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: 10 - filled)
        let hints: [String]
        switch step {
        case .welcome, .finish: hints = ["→ trendy onboarding next"]
        case .auth: hints = ["→ trendy signup --email you@example.com", "→ trendy login --email you@example.com"]
        case .createEventType: hints = ["→ trendy onboarding next --type \"Coffee\""]
        case .logFirstEvent: hints = ["→ trendy onboarding next --log \"\(f.typeNames.first ?? "Coffee")\""]
        case .permissions: hints = ["→ trendy onboarding next   (asks for each)", "→ trendy onboarding skip"]
        }
        let lines = ScreenCopy.onboarding(step, f) + [""] + hints
        let title = "Trendy · \(ScreenCopy.stepTitle(step))"
        let progress =
            plain
            ? "Step \(position) of \(all.count), \(filled * 10)% done." : "step \(position) of \(all.count)  \(bar)"
        return box(title, [progress, ""] + lines)
    }

    func main(_ tab: MainTab, _ f: MainFacts, _ banner: String, _ timeZone: TimeZone) -> String {
        let others = MainTab.allCases.filter { $0 != tab }.map(\.title)
        let tabs =
            plain
            ? "\(tab.title) tab (also: \(others.joined(separator: ", ")))"
            : MainTab.allCases.map { $0 == tab ? "[\($0.title)]" : $0.title }.joined(separator: "  ")
        var lines = [Self.bannerLine(banner, plain: plain), ""]
        switch tab {
        case .dashboard:
            lines.append("Today: \(f.today) event(s) · \(f.typeNames.count) type(s)")
            lines.append("")
            lines.append(f.recent.isEmpty ? "No events yet. → trendy log <type>" : "Recent")
            lines += f.recent.prefix(5).map { Self.row($0, f, timeZone) }
        case .events:
            lines.append(f.recent.isEmpty ? "No events yet." : "Latest \(f.recent.count) event(s)")
            lines += f.recent.map { Self.row($0, f, timeZone) }
        case .calendar:
            lines += calendar(f, timeZone)
        case .types:
            lines += f.typeNames.values.sorted().map { "  \($0)" }
        case .places, .account:
            lines.append("Open `trendy app` for this tab.")
        case .analytics:
            lines.append("Last 30 days")
            if f.perType.isEmpty { lines.append("  nothing logged") }
            let top = f.perType.first?.1 ?? 1
            for (name, count) in f.perType.prefix(8) {
                if plain {
                    lines.append("  \(name): \(count)")
                    continue
                }
                let bar = String(repeating: "▇", count: max(1, count * 20 / max(top, 1)))
                lines.append("  \(name.padding(toLength: 16, withPad: " ", startingAt: 0)) \(bar) \(count)")
            }
        }
        return box("Trendy · \(tabs)", lines)
    }

    /// The sync banner's line: ⟳ while it syncs or is up to date; ⚠ when offline, failing or
    /// waiting to retry (a ⟳ beside "Offline" said it was syncing).
    static func bannerLine(_ banner: String, plain: Bool) -> String {
        guard !plain else { return "Sync: \(banner)" }
        let trouble =
            ["Offline", "Server", "Retrying", "Sync failed"].contains { banner.hasPrefix($0) }
            || banner.contains("could not sync")
        return "\(trouble ? "⚠" : "⟳") \(banner)"
    }

    static func row(_ e: Event, _ f: MainFacts, _ timeZone: TimeZone) -> String {
        let name = f.typeNames[e.eventTypeId] ?? "?"
        return "  \(when(e.timestamp, timeZone))  \(name)\(e.notes.map { " — \($0)" } ?? "")"
    }

    /// A time in a list: unambiguous and of one width, `Wed  2 Dec 2026 09:05` (it was
    /// `02/12/2026, 9:05`, which reads as 12 February to half the world).
    static func when(_ date: Date, _ timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.weekday, .day, .month, .year, .hour, .minute], from: date)
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        return String(
            format: "%@ %2d %@ %04d %02d:%02d", weekdays[((c.weekday ?? 1) - 1) % 7], c.day ?? 0,
            months[((c.month ?? 1) - 1) % 12], c.year ?? 0, c.hour ?? 0, c.minute ?? 0)
    }

    func calendar(_ f: MainFacts, _ timeZone: TimeZone) -> [String] {
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = timeZone
        cal.firstWeekday = 2
        guard let month = f.month, let range = cal.range(of: .day, in: .month, for: month) else { return [] }
        var title = Date.FormatStyle().month(.wide).year().locale(Locale(identifier: "en_GB"))
        title.timeZone = timeZone
        if plain {
            // The grid as a list of the days that have events.
            let days = range.compactMap { day in f.days[day].flatMap { $0 > 0 ? "  Day \(day): \($0) event(s)" : nil } }
            return [month.formatted(title)] + (days.isEmpty ? ["  No events this month."] : days)
        }
        // Fixed-width cells, the count after the day, so no two run together (a day with 10+
        // events used to run into the next: `9·4110·38`); thousands read as `4k`.
        let width = 7
        var lines = [
            month.formatted(title),
            ["Mo", "Tu", "We", "Th", "Fr", "Sa", "Su"].map {
                " \($0)".padding(toLength: width, withPad: " ", startingAt: 0)
            }
            .joined(),
        ]
        let weekday = (cal.component(.weekday, from: month) + 5) % 7
        var cells = Array(repeating: String(repeating: " ", count: width), count: weekday)
        let today = cal.isDate(month, equalTo: Date(), toGranularity: .month) ? cal.component(.day, from: Date()) : nil
        for day in range {
            let n = f.days[day] ?? 0
            // Today is marked `*` (nothing marked it).
            let count = (n == 0 ? "" : n < 1_000 ? "·\(n)" : "·\(n / 1_000)k") + (day == today ? "*" : "")
            cells.append(String(format: "%2d", day) + count.padding(toLength: width - 2, withPad: " ", startingAt: 0))
        }
        while !cells.isEmpty {
            lines.append(cells.prefix(7).joined())
            cells.removeFirst(min(7, cells.count))
        }
        return lines
    }

    /// Every screen's frame. Whatever a line holds (a note, a type name, a link someone sent), it
    /// draws as one line of text: control characters show as escapes, never reach the terminal.
    func box(_ title: String, _ lines: [String]) -> String {
        let title = oneLine(title)
        let lines = lines.map(oneLine)
        if plain {
            // A title and the lines; no frame, no runs of blank lines, no symbols.
            var out = [ScreenRenderer.plainWords(title), ""]
            for line in lines.map(ScreenRenderer.plainWords) where !(line.isEmpty && (out.last?.isEmpty ?? true)) {
                out.append(line)
            }
            while out.last?.isEmpty == true { out.removeLast() }
            return out.joined(separator: "\n")
        }
        let rule = String(repeating: "─", count: width)
        return (["┌ \(title)", "│"] + lines.map { $0.isEmpty ? "│" : "│ \($0)" } + ["└" + rule]).joined(separator: "\n")
    }
}
