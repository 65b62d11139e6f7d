import Foundation
import TrendyAPI
import TrendyInsights
import TrendyModels
import TrendyOnboarding
import TrendyRouting
import TrendySync

/// What the running app's screens show, read from the local store (never the network).
struct AppViewData: Sendable {
    var types: [EventType] = []
    /// Every type's properties, in display order (the log form asks for them).
    var definitions: [PropertyDefinition] = []
    /// Events since midnight.
    var today = 0
    /// The newest events (dashboard).
    var recent: [Event] = []
    /// The events page (events tab), newest first, and each one's sync state.
    var page: [Event] = []
    var pageSync: [UUIDv7: EntitySyncStatus] = [:]
    var hasMore = false
    /// How many events the list holds (of the filtered type): "page 2 of 14"; nil while counted.
    var total: Int?
    /// The first day of the month shown and the count per day (calendar tab).
    var month = Date()
    var days: [Int: Int] = [:]
    /// The weeks shown (their Mondays) and, per type name, the count per week (analytics tab).
    var weeks: [Date] = []
    var perWeek: [(name: String, counts: [Int])] = []
    /// Insights (the dashboard's banner and the analytics tab); nil while computed or without them.
    var insights: InsightReport?
    /// Events per type (types tab), by the type's id.
    var typeCounts: [String: Int]?
    /// The places and the latest visits (places tab).
    var places: [LocalRecord<Geofence>] = []
    var visits: [Event] = []
    /// Who is signed in and what waits (account tab; `unsent` on every main tab).
    var account = AccountFacts()
    var conflicts: [StoredConflict] = []
    var failed: [FailedChange] = []
    /// The conflicts' and refused changes' words: what each is about, by entity id ("Coffee, Wed 2
    /// Dec 09:05"), and which device is this one.
    var words: ConflictWords?
    /// What the onboarding screens mention.
    var onboarding = OnboardingFacts(email: nil, typeNames: [], eventCount: 0, permissions: [:])

    var typeNames: [UUIDv7: String] { Dictionary(types.map { ($0.id, $0.name) }, uniquingKeysWith: { a, _ in a }) }

    /// The selectable rows of a tab other than the events list: their ids.
    func rows(_ tab: MainTab) -> [String] {
        switch tab {
        case .types: types.map(\.id.description)
        case .places: places.map(\.value.id.description)
        case .account: conflicts.map(\.conflict.id)
        case .dashboard, .events, .calendar, .analytics: []
        }
    }

    /// Each type's and place's fields as its edit form shows them: a type's name, colour and icon;
    /// a place's name, "lat, lon", radius and the type it logs.
    var editFields: [String: [String]] {
        let names = typeNames
        return Dictionary(
            types.map { ($0.id.description, [$0.name, $0.color, $0.icon]) }
                + places.map { record in
                    let p = record.value
                    return (
                        p.id.description,
                        [
                            p.name, "\(p.center.latitude), \(p.center.longitude)", String(format: "%g", p.radius),
                            p.entryEventTypeId.flatMap { names[$0] } ?? "",
                        ]
                    )
                }, uniquingKeysWith: { a, _ in a })
    }

    /// The names of types and places by id (a question names what it deletes).
    var rowNames: [String: String] {
        Dictionary(
            types.map { ($0.id.description, $0.name) } + places.map { ($0.value.id.description, $0.value.name) },
            uniquingKeysWith: { a, _ in a })
    }
}

/// The account tab's facts.
struct AccountFacts: Sendable {
    var email: String?
    /// Changes waiting to be sent.
    var unsent = 0
}

/// The running app's screens as text: the route's screen, the tab's content, the open picker or
/// form, the keys that work here, and the sync banner on every main screen. Pure.
enum AppScreens {
    /// The screen's id and text.
    static func render(
        _ ui: AppUI, route: AppRoute, data: AppViewData, banner: String, plain: Bool, timeZone: TimeZone = .current
    ) -> (id: String, text: String) {
        let screen = Screen(plain: plain)
        var id: String
        var title: String
        var lines: [String]
        var keys: [String]
        switch route {
        case .loading:
            (id, title, lines, keys) = ("loading", "Trendy", [ScreenCopy.loading], ["q quit"])
        case .error(let message):
            (id, title, lines, keys) = ("error", ScreenCopy.errorTitle, [message], ["q quit"])
        case .login:
            (id, title) = ("login", ui.isMakingAccount ? "Trendy · New account" : "Trendy · Sign in")
            lines = [ui.isMakingAccount ? "A new account: your email and a password." : ScreenCopy.login]
            keys = ["Enter sign in", "u new account", "q quit"]
        case .onboarding(let step):
            id = "onboarding.\(step.rawValue)"
            title = "Trendy · \(ScreenCopy.stepTitle(step))"
            (lines, keys) = onboarding(step, data)
        case .authenticated:
            id = ui.tab.rawValue
            let others = MainTab.allCases.filter { $0 != ui.tab }.map(\.title)
            let tabs =
                plain
                ? "\(ui.tab.title) tab (also: \(others.joined(separator: ", ")))"
                : MainTab.allCases.enumerated().map { i, t in
                    t == ui.tab ? "[\(i + 1) \(t.title)]" : "\(i + 1) \(t.title)"
                }
                .joined(separator: " ")
            // The tabs alone: seven with their numbers fit 80 columns without the app's name.
            title = plain ? "Trendy · \(tabs)" : tabs
            // In the app, a retry is a key away.
            let banner = banner.replacingOccurrences(of: "run `trendy sync` to retry", with: "press s to retry")
            lines = [Screen.bannerLine(banner, plain: plain), ""]
            let (body, tabKeys) = main(ui, data, timeZone, screen)
            lines += body
            keys =
                tabKeys + ["l log", "L log with note/time"] + (ui.undo.map { ["u \(AppTabs.undoLabel($0))"] } ?? [])
                + ["s sync now", "1-7 tabs", "? help", "q quit"]
        }
        switch ui.mode {
        case .browse, .confirm: break
        case .help:
            id += ".help"
            (lines, keys) = (AppHelp.lines, ["any key closes"])
            title = "Trendy · Keys"
        case .detail(let event):
            id += ".detail"
            lines = [lines.first ?? "", ""] + AppHelp.detail(data.page.first { $0.id == event }, data, timeZone)
            keys = ["c note", "t time", "v values", "e type", "d delete", "Esc back", "q quit"]
        case .pickType(let purpose):
            id += ".pick"
            (lines, keys) = picker(purpose, ui, data, plain, lines)
        case .form(let form):
            id += ".form"
            lines += [""]
            for (i, label) in form.labels.enumerated() {
                var value =
                    form.isSecret(i) ? String(repeating: "•", count: form.values[i].count) : form.values[i]
                // A long value shows its end, where the typing is (it showed the start).
                let room = max(20, 74 - label.count)
                if i == form.field, value.count > room { value = "…" + value.suffix(room - 1) }
                lines.append("\(i == form.field ? (plain ? "Editing " : "› ") : "  ")\(label): \(value)")
            }
            keys = ["type, Enter next/done", "Esc cancel"]
        }
        if case .confirm(_, let question) = ui.mode {
            lines += ["", "\(question) y: yes · any other key: no"]
        }
        // A question stands alone (the line of what came before sat under it).
        if let message = ui.message, !ui.isAsking { lines += ["", message] }
        lines += [""] + Self.keyLines(keys)
        return (id, screen.box(title, lines))
    }

    /// The type picker under the screen, and its keys.
    static func picker(_ purpose: AppUI.Purpose, _ ui: AppUI, _ data: AppViewData, _ plain: Bool, _ above: [String])
        -> (lines: [String], keys: [String])
    {
        var lines =
            above + [
                "",
                { if case .retype = purpose { "Move it to which type?" } else { "Log an event of which type?" } }(),
            ]
        for (i, type) in data.types.enumerated() {
            lines.append("\(i == ui.pick ? (plain ? "Selected: " : "› ") : "  ")\(i + 1). \(type.name)")
        }
        if !ui.typed.isEmpty { lines.append("Number \(ui.typed)… (another digit, or Enter)") }
        let keys = [
            data.types.count > 9 ? "its number" : "1-\(max(data.types.count, 1)) choose", "j/k + Enter choose",
            "Esc cancel",
        ]
        return (lines, keys)
    }

    /// The keys, as lines of at most 72 characters (a narrow terminal still shows them all).
    static func keyLines(_ keys: [String]) -> [String] {
        var lines: [String] = []
        var line = "Keys:"
        for key in keys {
            let next = line == "Keys:" ? "\(line) \(key)" : "\(line) · \(key)"
            if next.count > 72, line != "Keys:" {
                lines.append(line)
                line = "      \(key)"
            } else {
                line = next
            }
        }
        return lines + [line]
    }

    static func onboarding(_ step: OnboardingStep, _ data: AppViewData) -> (lines: [String], keys: [String]) {
        let keys: [String]
        switch step {
        case .welcome: keys = ["Enter start", "q quit"]
        case .auth: keys = ["u sign up", "l sign in", "b back", "q quit"]
        case .createEventType:
            keys = data.types.isEmpty ? ["Enter name it", "q quit"] : ["Enter keep them", "n a new type", "q quit"]
        case .logFirstEvent:
            keys =
                data.onboarding.eventCount > 0
                ? ["Enter go on", "n log one more", "b back", "q quit"] : ["Enter choose a type", "b back", "q quit"]
        case .permissions: keys = ["a allow all", "s not now", "b back", "q quit"]
        case .finish: keys = ["Enter finish", "q quit"]
        }
        return (ScreenCopy.onboarding(step, data.onboarding), keys)
    }

    static func main(_ ui: AppUI, _ data: AppViewData, _ timeZone: TimeZone, _ screen: Screen) -> (
        lines: [String], keys: [String]
    ) {
        let facts = MainFacts(typeNames: data.typeNames, recent: data.recent, today: data.today)
        switch ui.tab {
        case .dashboard:
            var lines = ["Today: \(data.today) event(s) · \(data.types.count) type(s)", ""]
            // The strongest insight, one line, only when there is one.
            if let headline = data.insights?.headline {
                lines += [(screen.plain ? "Insight: " : "★ ") + headline.sentence, ""]
            }
            lines.append(data.recent.isEmpty ? "No events yet: press l to log one." : "Recent")
            lines += data.recent.prefix(5).map { Screen.row($0, facts, timeZone) }
            return (lines, [])
        case .events:
            let filter = ui.filter.flatMap { data.typeNames[$0] }
            let of = data.total.map { total in
                let pages = max(1, (total + AppUI.pageSize - 1) / AppUI.pageSize)
                return " of \(max(pages, ui.page + 1)) (\(total) in all)"
            }
            let matching = ui.query.map { " matching “\($0)”" } ?? ""
            var lines = [
                "Events\(filter.map { " of type \($0)" } ?? "")\(matching), page \(ui.page + 1)\(of ?? (ui.query == nil ? " (counting…)" : ""))"
            ]
            if data.page.isEmpty { lines.append(ui.query == nil ? "  none" : "  nothing matches: Esc shows all") }
            for (i, event) in data.page.enumerated() {
                let row = Screen.row(event, facts, timeZone)
                lines.append(i == ui.selection ? (screen.plain ? "Selected:" + row : "›" + row.dropFirst()) : row)
            }
            // Only what works here (c, e and d were offered on an empty list).
            var keys: [String] = []
            if !data.page.isEmpty {
                keys += ["j/k select", "Enter details", "c note", "t time", "v values", "e move to type", "d delete"]
            }
            keys += ["/ search", "g go to date"] + (ui.query == nil ? [] : ["Esc all events"])
            if ui.page > 0 || data.hasMore { keys.append("n/p page") }
            if !data.types.isEmpty { keys.append("f filter") }
            return (lines, keys)
        case .calendar:
            var f = facts
            f.month = data.month
            f.days = data.days
            let total = data.days.values.reduce(0, +)
            return (screen.calendar(f, timeZone) + ["\(total) event(s) this month · * today"], ["[ ] month"])
        case .types, .places, .account: return AppTabs.render(ui, data, timeZone, screen)
        case .analytics:
            // "5 Oct", not "05/10" (which reads as May 10 to half the world).
            var style = Date.FormatStyle().day(.defaultDigits).month(.abbreviated).locale(Locale(identifier: "en_GB"))
            style.timeZone = timeZone
            var lines = [
                "Events per type per week (weeks starting \(data.weeks.first.map { $0.formatted(style) } ?? "—"))"
            ]
            if data.perWeek.isEmpty { lines.append("  nothing logged in these weeks") }
            if screen.plain {
                for row in data.perWeek {
                    lines.append("  \(row.name): \(row.counts.map(String.init).joined(separator: ", "))")
                }
            } else {
                lines.append(
                    "  " + "".padding(toLength: 24, withPad: " ", startingAt: 0)
                        + data.weeks.map { $0.formatted(style).padding(toLength: 8, withPad: " ", startingAt: 0) }
                        .joined())
                for row in data.perWeek {
                    lines.append(
                        "  " + row.name.prefix(13).padding(toLength: 14, withPad: " ", startingAt: 0)
                            + AppInsightViews.bars(row.counts).padding(toLength: 10, withPad: " ", startingAt: 0)
                            + row.counts.map { String($0).padding(toLength: 8, withPad: " ", startingAt: 0) }.joined())
                }
            }
            return (lines + AppInsightViews.lines(data.insights, plain: screen.plain), [])
        }
    }
}
