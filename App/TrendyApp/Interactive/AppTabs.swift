import Foundation
import TrendyAPI
import TrendyModels
import TrendySync

/// The types, places and account tabs as text, and conflicts in words. Pure.
enum AppTabs {
    static func render(_ ui: AppUI, _ data: AppViewData, _ timeZone: TimeZone, _ screen: Screen) -> (
        lines: [String], keys: [String]
    ) {
        switch ui.tab {
        case .types: return types(ui, data, screen)
        case .places: return places(ui, data, timeZone, screen)
        default: return account(ui, data, timeZone, screen)
        }
    }

    /// A row, marked when selected.
    static func row(_ text: String, selected: Bool, _ screen: Screen) -> String {
        selected ? (screen.plain ? "Selected: " : "› ") + text : "  " + text
    }

    static func types(_ ui: AppUI, _ data: AppViewData, _ screen: Screen) -> (lines: [String], keys: [String]) {
        var lines = ["Event types (\(data.types.count))"]
        if data.types.isEmpty { lines.append("  none yet: press a to add one") }
        for (i, type) in data.types.enumerated() {
            // Counted in the background on a big account: said so meanwhile, never a wrong 0.
            let count = data.typeCounts.map { counts in
                let n = counts[type.id.description] ?? 0
                return "\(n) event\(n == 1 ? "" : "s")"
            }
            lines.append(row("\(type.name) · \(count ?? "counting…")", selected: i == ui.selection, screen))
        }
        var keys = ["a add"]
        if !data.types.isEmpty { keys += ["j/k select", "Enter its events", "r rename/colour/icon", "d delete"] }
        return (lines, keys)
    }

    static func places(_ ui: AppUI, _ data: AppViewData, _ timeZone: TimeZone, _ screen: Screen) -> (
        lines: [String], keys: [String]
    ) {
        let names = data.typeNames
        var lines = ["Places (\(data.places.count)): arriving logs an event, leaving ends it"]
        if data.places.isEmpty { lines.append("  none yet: press a to add one") }
        for (i, record) in data.places.enumerated() {
            let p = record.value
            let logs = p.entryEventTypeId.flatMap { names[$0] } ?? "nothing"
            let text =
                "\(p.name) · \(Int(p.radius)) m around \(String(format: "%.4f, %.4f", p.center.latitude, p.center.longitude))"
                + " · logs \(logs)\(p.isActive ? "" : " · paused")"
            lines.append(row(text, selected: i == ui.selection, screen))
        }
        lines += ["", data.visits.isEmpty ? "No visits yet." : "Latest visits"]
        for visit in data.visits {
            let stay = visit.endDate.map { AppHelp.duration($0.timeIntervalSince(visit.timestamp)) } ?? "still there"
            let type = names[visit.eventTypeId] ?? "?"
            lines.append(
                "  \(Screen.when(visit.timestamp, timeZone))  \(type)\(visit.locationName.map { " at \($0)" } ?? "") (\(stay))"
            )
        }
        var keys = ["a add"]
        if !data.places.isEmpty { keys += ["j/k select", "e change", "d delete"] }
        return (lines, keys)
    }

    static func account(_ ui: AppUI, _ data: AppViewData, _ timeZone: TimeZone, _ screen: Screen) -> (
        lines: [String], keys: [String]
    ) {
        let a = data.account
        var lines = [
            "Signed in as \(a.email ?? "—")",
            a.unsent == 0 ? "Every change is sent." : "\(a.unsent) change(s) wait to be sent.", "",
        ]
        lines.append(data.conflicts.isEmpty ? "No conflicts." : "Conflicts: changes that lost to another one")
        for (i, stored) in data.conflicts.enumerated() {
            let words = conflict(stored.conflict, data, timeZone)
            lines.append(row(words[0], selected: i == ui.selection, screen))
            lines += words.dropFirst().map { "    " + $0 }
        }
        if !data.failed.isEmpty {
            lines += ["", "Changes the server refused"]
            for change in data.failed.prefix(5) {
                let what =
                    data.words?.subjects[change.entityId]
                    ?? change.entity.rawValue.replacingOccurrences(of: "_", with: " ")
                lines.append("  \(what) (\(change.kind.rawValue)): \(change.error)")
            }
            if data.failed.count > 5 { lines.append("  … and \(data.failed.count - 5) more (trendy sync explain)") }
            if data.failed.contains(where: { $0.entity == .event }) {
                lines.append("  Fix a refused event on the Events tab (e moves it to a type, d deletes it), then t.")
            }
        }
        var keys: [String] = []
        if !data.conflicts.isEmpty { keys += ["j/k select", "r restore what lost", "x dismiss"] }
        if !data.failed.isEmpty { keys.append("t try refused again") }
        keys += ["p change password", "o sign out", "w switch account"]
        return (lines, keys)
    }

    /// A conflict in words (``ConflictWords``), with what the account tab read.
    static func conflict(_ c: SyncConflict, _ data: AppViewData, _ timeZone: TimeZone) -> [String] {
        var words = data.words ?? ConflictWords(typeNames: data.typeNames, subjects: [:], deviceId: "")
        words.timeZone = timeZone
        return words.lines(c)
    }

    static func undoLabel(_ undo: AppUI.Undo) -> String {
        switch undo {
        case .unlog: "undo log"
        case .relog: "undo delete"
        case .revert: "undo change"
        }
    }
}
