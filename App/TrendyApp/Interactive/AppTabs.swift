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
            let count = data.typeCounts[type.id.description] ?? 0
            lines.append(
                row("\(type.name) · \(count) event\(count == 1 ? "" : "s")", selected: i == ui.selection, screen))
        }
        var keys = ["a add"]
        if !data.types.isEmpty { keys += ["j/k select", "Enter its events", "r rename", "d delete"] }
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
        if !data.places.isEmpty { keys += ["j/k select", "d delete"] }
        return (lines, keys)
    }

    static func account(_ ui: AppUI, _ data: AppViewData, _ timeZone: TimeZone, _ screen: Screen) -> (
        lines: [String], keys: [String]
    ) {
        let a = data.account
        var lines = [
            "Signed in as \(a.email ?? "—")\(a.server.map { " on \($0)" } ?? "")",
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
                    data.subjects[change.entityId] ?? change.entity.rawValue.replacingOccurrences(of: "_", with: " ")
                lines.append("  \(what) (\(change.kind.rawValue)): \(change.error)")
            }
            if data.failed.count > 5 { lines.append("  … and \(data.failed.count - 5) more (trendy sync explain)") }
        }
        var keys: [String] = []
        if !data.conflicts.isEmpty { keys += ["j/k select", "r restore what lost", "x dismiss"] }
        if !data.failed.isEmpty { keys.append("t try refused again") }
        keys += ["p change password", "o sign out", "w switch account"]
        return (lines, keys)
    }

    /// A conflict in words: what it is about, then what was kept and what lost, by whom and when.
    static func conflict(_ c: SyncConflict, _ data: AppViewData, _ timeZone: TimeZone) -> [String] {
        let subject = data.subjects[c.entityId] ?? "A \(c.entityType.rawValue.replacingOccurrences(of: "_", with: " "))"
        let kept = "\(device(c.keptBy, data)), \(AppHelp.when(c.keptAt, timeZone))"
        let lost = "\(device(c.lostBy, data)), \(AppHelp.when(c.lostAt, timeZone))"
        switch c.kind {
        case .field:
            let field = fieldName(c.field ?? "?")
            return [
                "\(subject): its \(field)",
                "kept: \(value(c.keptValue, c.field, data, timeZone)) (\(kept))",
                "lost: \(value(c.lostValue, c.field, data, timeZone)) (\(lost))",
            ]
        case .deleted:
            return ["\(subject): deleted (\(kept))", "lost edits: \(edits(c.lostValue, data, timeZone)) (\(lost))"]
        }
    }

    static func device(_ id: String, _ data: AppViewData) -> String {
        id == data.account.deviceId ? "this device" : "another device"
    }

    static func fieldName(_ field: String) -> String {
        switch field {
        case "notes": "note"
        case "event_type_id", "entry_event_type_id": "type"
        case "timestamp": "time"
        case "end_date": "end time"
        default: field.replacingOccurrences(of: "_", with: " ")
        }
    }

    /// A JSON value in words: text as it is, a type's id as its name, a time as a time.
    static func value(_ json: String?, _ field: String?, _ data: AppViewData, _ timeZone: TimeZone) -> String {
        guard let json,
            let parsed = try? JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)
        else { return json.map { "“\($0)”" } ?? "nothing" }
        switch parsed {
        case is NSNull: return "nothing"
        case let text as String:
            if let id = UUIDv7(text), let name = data.typeNames[id] { return name }
            if field == "timestamp" || field == "end_date", let date = TrendyJSON.parseDate(text) {
                return AppHelp.when(date, timeZone)
            }
            return "“\(text)”"
        case let number as NSNumber: return number.stringValue
        default: return json
        }
    }

    /// A deleted entity's lost edits ({"notes": "x"}) as "note “x”".
    static func edits(_ json: String, _ data: AppViewData, _ timeZone: TimeZone) -> String {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] else {
            return json
        }
        return object.keys.sorted().map { key in
            let raw = (try? JSONSerialization.data(withJSONObject: object[key] ?? NSNull(), options: .fragmentsAllowed))
                .map { String(decoding: $0, as: UTF8.self) }
            return "\(fieldName(key)) \(value(raw, key, data, timeZone))"
        }.joined(separator: ", ")
    }

    static func undoLabel(_ undo: AppUI.Undo) -> String {
        switch undo {
        case .unlog: "undo log"
        case .relog: "undo delete"
        case .revert: "undo change"
        }
    }
}
