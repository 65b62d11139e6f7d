import Foundation
import TrendyModels
import TrendySync

/// The help screen (`?`) and the event detail view, as text. Pure.
enum AppHelp {
    /// Every key of the main screens.
    static let lines = [
        "Everywhere",
        "  1-7 or Tab   the tabs: Dashboard … Analytics, Types, Places, Account",
        "  l            log an event (pick its type: its number, or j/k and Enter)",
        "  L            log with a note or at another time: -2h, yesterday 18:00,",
        "               2026-11-20 09:00 (empty: now)",
        "  u            undo the last log, delete or change made here",
        "  s            sync now   ? this help",
        "  q            quit (what is not sent yet goes first)",
        "",
        "Events",
        "  j/k or ↓/↑   select            Enter  the event in full",
        "  c  its note   t  its time   v  its values   e  its type",
        "  d  delete it (y confirms)",
        "  /  search notes, places and types (Esc shows all)   g  go to a date",
        "  n/p          next / previous page",
        "  f            show one type, then the next, then all",
        "",
        "Calendar: [ ] or ←/→ month before / after",
        "Types:    a add · r rename, colour, icon · Enter its events",
        "          d delete, with its events (y confirms)",
        "Places:   a add (name, where, radius, the type it logs)",
        "          e change it (the same fields) · d delete (its visits stay)",
        "Account:  r restore what lost a conflict · x dismiss it",
        "          t send refused changes again",
        "          p change password · o sign out · w switch account",
        "",
        "Forms and pickers",
        "  Enter next field or done · Tab or ↓ next field · ↑ field before",
        "  Ctrl-U empties a field · Esc cancel",
    ]

    /// One event in full: its note whole, when and how long, where it came from, and whether
    /// the server has it.
    static func detail(_ event: Event?, _ data: AppViewData, _ timeZone: TimeZone) -> [String] {
        guard let event else { return ["That event is no longer on this page."] }
        var lines = [
            "Type:    \(data.typeNames[event.eventTypeId] ?? "an unknown type")",
            "When:    \(when(event.timestamp, timeZone))",
        ]
        if let end = event.endDate {
            lines.append("Until:   \(when(end, timeZone)) (\(duration(end.timeIntervalSince(event.timestamp))))")
        }
        if event.isAllDay { lines.append("All day") }
        lines.append("Source:  \(source(event.sourceType))")
        if let place = event.locationName { lines.append("Place:   \(place)") }
        lines.append("Synced:  \(sync(data.pageSync[event.id]))")
        if let notes = event.notes, !notes.isEmpty {
            lines += ["", "Note:"] + wrap(notes, width: 60).map { "  " + $0 }
        }
        if !event.properties.isEmpty {
            // By label, in the type's order (an outside tester saw keys: "shots", not "Shots");
            // a value whose property is gone keeps its key, after the others.
            let definitions = data.definitions.filter { $0.eventTypeId == event.eventTypeId }
            let order = Dictionary(
                definitions.enumerated().map { ($1.key, ($0, $1.label)) }, uniquingKeysWith: { a, _ in a })
            lines += ["", "Properties:"]
            for (key, value) in event.properties.sorted(by: {
                (order[$0.key]?.0 ?? Int.max, $0.key) < (order[$1.key]?.0 ?? Int.max, $1.key)
            }) {
                lines.append("  \(order[key]?.1 ?? key): \(words(value))")
            }
        }
        return lines
    }

    /// A refused value in a person's words: "Colour must be a colour like #3B82F6", not the
    /// model's "Invalid EventType: color: …" (an outside tester saw the class names).
    static func refusal(_ error: ValidationError) -> String {
        error.issues.map { issue in
            let last = issue.field.split(separator: ".").last.map(String.init) ?? issue.field
            var name = last == "color" ? "colour" : last.replacingOccurrences(of: "_", with: " ")
            if name.hasSuffix(" id") { name.removeLast(3) }
            return name.prefix(1).uppercased() + name.dropFirst() + " " + issue.reason
        }.joined(separator: "; ")
    }

    /// One time format everywhere: `Wed  2 Dec 2026 09:05`, as the lists show it.
    static func when(_ date: Date, _ timeZone: TimeZone) -> String { Screen.when(date, timeZone) }

    /// A day: "Fri 20 Nov 2026".
    static func day(_ date: Date, _ timeZone: TimeZone = .current) -> String {
        String(Screen.when(date, timeZone).dropLast(6)).replacingOccurrences(of: "  ", with: " ")
    }

    static func duration(_ seconds: TimeInterval) -> String {
        let minutes = Int((seconds / 60).rounded())
        guard minutes >= 60 else { return "\(max(minutes, 0)) min" }
        let (h, m) = (minutes / 60, minutes % 60)
        return m == 0 ? "\(h) h" : "\(h) h \(m) min"
    }

    static func source(_ type: SourceType) -> String {
        switch type {
        case .manual: "logged by hand"
        case .imported: "imported"
        case .geofence: "a place you visited"
        default: type.rawValue.replacingOccurrences(of: "_", with: " ")
        }
    }

    /// A property's field in the log form: its label, its kind and its default or options.
    static func fieldLabel(_ d: PropertyDefinition) -> String {
        let kind: String =
            switch d.propertyType {
            case .select: (d.options ?? []).joined(separator: ", ")
            case .boolean: "yes or no"
            case .duration: "a duration: 90, 1:30, 1h30m"
            case .date: "a date-time: 2026-03-14T09:30:00Z"
            default: d.propertyType.described
            }
        return "\(d.label) (\(kind))"
    }

    /// A property's value in words.
    static func words(_ value: PropertyValue) -> String {
        switch value {
        case .text(let t), .select(let t), .url(let t), .email(let t): t
        case .number(let n): n.formatted()
        case .boolean(let b): b ? "yes" : "no"
        case .date(let d): d.formatted(date: .abbreviated, time: .shortened)
        case .duration(let s): duration(s)
        }
    }

    static func sync(_ status: EntitySyncStatus?) -> String {
        switch status {
        case .synced?: "yes"
        case .pending?: "not yet (waits to be sent)"
        case .failed?: "no: the server refused it (trendy sync explain)"
        case nil: "—"
        }
    }

    /// `text` in lines of at most `width` characters, broken at spaces where it can be.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = ""
            for word in paragraph.split(separator: " ", omittingEmptySubsequences: false) {
                var word = Substring(word)
                while word.count > width {
                    if !line.isEmpty { lines.append(line) }
                    lines.append(String(word.prefix(width)))
                    word = word.dropFirst(width)
                    line = ""
                }
                if line.isEmpty {
                    line = String(word)
                } else if line.count + 1 + word.count <= width {
                    line += " " + word
                } else {
                    lines.append(line)
                    line = String(word)
                }
            }
            lines.append(line)
        }
        return lines
    }
}
