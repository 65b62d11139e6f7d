import Foundation

/// A frame made to fit the window: long lines wrapped, the keys flowed to its width, a tall frame
/// cut to what matters. Pure.
extension Terminal {
    /// `lines` as at most `rows` rows of at most `columns` cells. Lines wrap (a question lost its
    /// "y: yes", the tabs past 5 were cut at 50 columns); the keys flow to the width. A frame
    /// taller than the window keeps its title, its keys (at most a third of the window, ending
    /// with "q quit") and, of the lines between, those around the cursor — the selected row, the
    /// picker's choice, the form's field — and an open question (at 30×10 "Delete …? y" and the
    /// row it deletes were hidden); it says how many rows it left out.
    static func fit(_ lines: [String], rows: Int, columns: Int) -> [String] {
        let rule =
            lines.last.map { $0.hasPrefix("└") } == true ? [fitting(lines[lines.count - 1], columns: columns)] : []
        let end = lines.count - rule.count
        let keyStart = lines[..<end].lastIndex { $0.contains("Keys:") } ?? end
        let keys = flowKeys(Array(lines[keyStart..<end]), columns: columns)
        let groups = lines[..<keyStart].map { wrapping($0, columns: columns) }
        let all = groups.flatMap { $0 } + keys + rule
        guard all.count > rows, rows > 0, let title = groups.first else { return all }
        let shownKeys = Array(keys.suffix(max(1, rows / 3)))
        // The tabs' second row only when the window has room for it.
        let head = Array(title.prefix(rows >= 14 ? 2 : 1))
        let budget = rows - head.count - shownKeys.count - rule.count - 1
        guard budget >= 1 else { return Array(all.suffix(rows)) }
        let body = Array(groups.dropFirst())
        let shown = window(body, budget: budget, frame: title[0].hasPrefix("┌"))
        return head + shown.map { fitting($0, columns: columns) } + shownKeys + rule
    }

    /// At most `budget` + 1 rows of `groups` (each line's rows): those around the cursor and the
    /// question, and a row that says how many were left out.
    static func window(_ groups: [[String]], budget: Int, frame: Bool) -> [String] {
        let rows = groups.flatMap { $0 }
        var ranges: [ClosedRange<Int>] = []
        var at = 0
        for group in groups {
            ranges.append(at...(at + group.count - 1))
            at += group.count
        }
        let cursor = groups.lastIndex { $0.first.map(isCursor) == true }.map { ranges[$0] }
        let question = groups.lastIndex { $0.joined().contains("y: yes") }.map { ranges[$0] }
        let focus = [cursor, question].compactMap { $0 }
        func marker(_ shown: Int) -> String {
            (frame ? "│ " : "") + "… \(rows.count - shown) more line(s): a taller window shows them"
        }
        if let cursor, let question, question.upperBound - cursor.lowerBound >= budget {
            // The cursor and the question with what lies between do not fit: the cursor's line,
            // then the question's end of the frame.
            let head = Array(rows[cursor].prefix(max(0, budget - question.count)))
            let tail = rows[
                max(cursor.upperBound + 1, question.upperBound - (budget - head.count) + 1)...question.upperBound]
            let shown = head + tail
            return [marker(shown.count)] + shown
        }
        var start = 0
        if let last = focus.map(\.upperBound).max(), last >= budget { start = last - budget + 1 }
        if let first = focus.map(\.lowerBound).min(), first < start { start = first }
        let shown = Array(rows[start..<min(rows.count, start + budget)])
        return start > 0 ? [marker(shown.count)] + shown : shown + [marker(shown.count)]
    }

    /// The key lines flowed to `columns`: "Keys: a · b · c" as many rows as the width needs.
    static func flowKeys(_ lines: [String], columns: Int) -> [String] {
        guard let first = lines.first else { return [] }
        let bar = first.hasPrefix("│") ? "│ " : ""
        let keys = lines.joined(separator: " · ")
            .replacingOccurrences(of: "Keys:", with: "")
            .split(separator: "│").joined()
            .components(separatedBy: " · ")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        var rows: [String] = []
        var row = ""
        for key in keys {
            let next = row.isEmpty ? bar + "Keys: " + key : row + " · " + key
            if row.isEmpty || fitting(next, columns: columns) == next {
                row = next
            } else {
                rows.append(row)
                row = bar + "      " + key
            }
        }
        return (rows + [row]).map { fitting($0, columns: columns) }
    }

    /// `line` as rows of at most `columns` cells, broken at a space where one is near the end; a
    /// row after the first is indented, inside the frame's bar when the line has one. A rule
    /// (`└───`) is cut, not wrapped.
    static func wrapping(_ line: String, columns: Int) -> [String] {
        guard columns >= 12, !line.hasPrefix("└") else { return [fitting(line, columns: columns)] }
        let indent = line.hasPrefix("│") ? "│     " : "    "
        var rows: [String] = []
        var rest = Substring(line)
        while true {
            let prefix = rows.isEmpty ? "" : indent
            let fit = fitting(String(rest), columns: columns - prefix.count)
            if fit.count >= rest.count {
                rows.append(prefix + rest)
                return rows
            }
            var take = fit.count
            if let space = fit.lastIndex(of: " "), fit.distance(from: fit.startIndex, to: space) > fit.count / 2 {
                take = fit.distance(from: fit.startIndex, to: space)
            }
            rows.append(prefix + rest.prefix(max(take, 1)))
            rest = rest.dropFirst(max(take, 1)).drop { $0 == " " }
            if rest.isEmpty { return rows }
        }
    }

    /// Whether `line` holds the cursor: a selected row, a picker's choice or a form's field.
    static func isCursor(_ line: String) -> Bool {
        line.hasPrefix("│ › ") || line.hasPrefix("› ") || line.contains("Selected: ") || line.contains("Editing ")
    }
}
