import Foundation
import GRDB
import TrendyModels
import TrendySync

/// What the app's screens ask the store: pages, positions and counts, each from an index, so a
/// screen never loads events it does not show.
extension SQLiteLocalStore {
    public func eventPage(offset: Int, limit: Int, typeId: UUIDv7?) async throws -> [LocalRecord<Event>] {
        try await db.read { db in
            let order = "ORDER BY timestamp_ms DESC, id DESC LIMIT ? OFFSET ?"
            let rows: [Row]
            if let typeId {
                rows = try Row.fetchAll(
                    db, sql: "SELECT body, sync_status FROM local_events WHERE event_type_id = ? \(order)",
                    arguments: [typeId.description, limit, offset])
            } else {
                rows = try Row.fetchAll(
                    db, sql: "SELECT body, sync_status FROM local_events \(order)", arguments: [limit, offset])
            }
            return try rows.map(Self.event)
        }
    }

    public func eventPosition(id: UUIDv7, typeId: UUIDv7?) async throws -> Int? {
        try await db.read { db in
            guard
                let time = try Int64.fetchOne(
                    db, sql: "SELECT timestamp_ms FROM local_events WHERE id = ?", arguments: [id.description])
            else { return nil }
            // Newer, or as new with a greater id: the list's order (timestamp_ms DESC, id DESC), a
            // range of the time index.
            let newer = "(timestamp_ms, id) > (?, ?)"
            if let typeId {
                return try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM local_events WHERE event_type_id = ? AND \(newer)",
                    arguments: [typeId.description, time, id.description])
            }
            return try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM local_events WHERE \(newer)", arguments: [time, id.description])
        }
    }

    public func eventCountsByType(from: Date, to: Date) async throws -> [UUIDv7: Int] {
        try await db.read { db in
            var counts: [UUIDv7: Int] = [:]
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT event_type_id, COUNT(*) FROM local_events WHERE timestamp_ms >= ? AND timestamp_ms < ?
                    GROUP BY event_type_id
                    """, arguments: [Self.milliseconds(from), Self.milliseconds(to)])
            {
                if let id = UUIDv7(row[0] as String) { counts[id] = row[1] }
            }
            return counts
        }
    }

    public func eventCount(from: Date, to: Date) async throws -> Int {
        try await db.read { db in
            try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM local_events WHERE timestamp_ms >= ? AND timestamp_ms < ?",
                arguments: [Self.milliseconds(from), Self.milliseconds(to)]) ?? 0
        }
    }

    public func eventPage(offset: Int, limit: Int, filter: EventFilter) async throws -> [LocalRecord<Event>] {
        let words = (filter.text ?? "").split(whereSeparator: \.isWhitespace).map(String.init)
        // Nothing holds a word longer than the longest text (and SQLite refuses such a pattern).
        if words.contains(where: { $0.count > 10_000 }) { return [] }
        return try await db.read { db in
            // Only for a word with letters beyond ASCII: adding a function expires the
            // connection's prepared statements.
            if words.contains(where: { !$0.allSatisfy(\.isASCII) }) { db.add(function: Self.fold) }
            // Words of three characters or more that name no type: the full-text index, newest
            // first; else a walk of the time index that checks each event.
            if let match = SearchIndex.query(words), try !Self.namesAType(db, words) {
                return try Self.searchPage(db, match: match, filter: filter, offset: offset, limit: limit)
            }
            return try Self.scanPage(db, words: words, filter: filter, offset: offset, limit: limit)
        }
    }

    /// `%`, `_` and `\\` as the person's characters in a `LIKE … ESCAPE '\\'` pattern (`LIKE`
    /// ignores the case of ASCII letters, and finds other letters as typed).
    static func likePattern(_ word: String) -> String {
        "%"
            + word.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_") + "%"
    }

    /// A text in lower case, every letter (`trendy_fold`): SQLite's `LIKE` and `lower` fold ASCII
    /// only, while the index's trigram tokenizer folds every letter, so a word with other letters
    /// ("ÉCLAIR") was found by the index in any case but by the scan only as typed.
    static let fold = DatabaseFunction("trendy_fold", argumentCount: 1, pure: true) { values in
        String.fromDatabaseValue(values[0])?.lowercased()
    }

    /// The condition that `column` holds `word` in any case, and its argument: `LIKE` for an
    /// ASCII word (it folds those letters, and uses no function), else the folded text.
    static func holds(_ column: String, _ word: String) -> (String, String) {
        if word.allSatisfy(\.isASCII) { return ("\(column) LIKE ? ESCAPE '\\'", likePattern(word)) }
        return ("instr(trendy_fold(\(column)), ?) > 0", word.lowercased())
    }

    /// Whether a word is found in a type's name (such words match the type's every event).
    static func namesAType(_ db: Database, _ words: [String]) throws -> Bool {
        try words.contains { word in
            let (condition, argument) = holds("name", word)
            return try Bool.fetchOne(
                db, sql: "SELECT 1 FROM local_event_types WHERE \(condition) LIMIT 1", arguments: [argument]) == true
        }
    }

    /// The conditions of `filter` but its words, on the events' columns (`e.`).
    static func conditions(_ filter: EventFilter) -> ([String], [(any DatabaseValueConvertible)?]) {
        var conditions: [String] = []
        var arguments: [(any DatabaseValueConvertible)?] = []
        if let typeId = filter.typeId {
            conditions.append("e.event_type_id = ?")
            arguments.append(typeId.description)
        }
        if let source = filter.source {
            conditions.append("e.source_type = ?")
            arguments.append(source.rawValue)
        }
        if let since = filter.since {
            conditions.append("e.timestamp_ms >= ?")
            arguments.append(milliseconds(since))
        }
        if let until = filter.until {
            conditions.append("e.timestamp_ms < ?")
            arguments.append(milliseconds(until))
        }
        if let after = filter.after {
            conditions.append("(e.timestamp_ms, e.id) < (?, ?)")
            arguments += [milliseconds(after.timestamp), after.id.description]
        }
        for (key, value) in filter.properties.sorted(by: { $0.key < $1.key }) {
            // The stored JSON value, as SQLite reads it: numbers as numbers, yes/no as 1/0.
            conditions.append("json_extract(e.body, ?) = ?")
            arguments.append("$.properties.\"\(key.replacingOccurrences(of: "\"", with: ""))\".value")
            switch value {
            case .number(let n), .duration(let n): arguments.append(n)
            case .boolean(let b): arguments.append(b ? 1 : 0)
            case .date(let d): arguments.append(TrendyJSON.formatDate(d))
            case .text(let t), .select(let t), .url(let t), .email(let t): arguments.append(t)
            }
        }
        return (conditions, arguments)
    }

    /// A page of the events the index finds for `match`, newest first (the index's own order).
    static func searchPage(_ db: Database, match: String, filter: EventFilter, offset: Int, limit: Int) throws
        -> [LocalRecord<Event>]
    {
        var (conditions, arguments) = conditions(filter)
        conditions.insert("local_events_fts MATCH ?", at: 0)
        arguments.insert(match, at: 0)
        // The time range as a range of the index's keys: it reads only those.
        if let since = filter.since {
            conditions.append("f.rowid >= ?")
            arguments.append(milliseconds(since) * 65_536)
        }
        if let until = filter.until {
            conditions.append("f.rowid < ?")
            arguments.append(milliseconds(until) * 65_536)
        }
        let sql = """
            SELECT e.body, e.sync_status FROM local_events_fts AS f
            JOIN local_event_search AS s ON s.key = f.rowid JOIN local_events AS e ON e.id = s.event_id
            WHERE \(conditions.joined(separator: " AND ")) ORDER BY f.rowid DESC LIMIT ? OFFSET ?
            """
        return try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments + [limit, offset])).map(event)
    }

    /// A page of the time index, each event checked: every word somewhere in its indexed text (the
    /// note, the place, text-like values) or its type's name, in any case (``holds(_:_:)``).
    static func scanPage(_ db: Database, words: [String], filter: EventFilter, offset: Int, limit: Int) throws
        -> [LocalRecord<Event>]
    {
        var (conditions, arguments) = conditions(filter)
        for word in words {
            let (text, textArgument) = holds(
                """
                coalesce((SELECT f.text FROM local_event_search AS s JOIN local_events_fts AS f ON f.rowid = s.key
                  WHERE s.event_id = e.id), '')
                """, word)
            let (name, nameArgument) = holds("name", word)
            conditions.append("(\(text) OR e.event_type_id IN (SELECT id FROM local_event_types WHERE \(name)))")
            arguments += [textArgument, nameArgument]
        }
        let condition = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let sql = """
            SELECT e.body, e.sync_status FROM local_events AS e \(condition)
            ORDER BY e.timestamp_ms DESC, e.id DESC LIMIT ? OFFSET ?
            """
        return try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments + [limit, offset])).map(event)
    }
}
