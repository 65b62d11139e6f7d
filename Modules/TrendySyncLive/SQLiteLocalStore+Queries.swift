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
        var conditions: [String] = []
        var arguments: [(any DatabaseValueConvertible)?] = []
        if let typeId = filter.typeId {
            conditions.append("event_type_id = ?")
            arguments.append(typeId.description)
        }
        if let source = filter.source {
            conditions.append("source_type = ?")
            arguments.append(source.rawValue)
        }
        if let since = filter.since {
            conditions.append("timestamp_ms >= ?")
            arguments.append(Self.milliseconds(since))
        }
        if let until = filter.until {
            conditions.append("timestamp_ms < ?")
            arguments.append(Self.milliseconds(until))
        }
        for word in (filter.text ?? "").split(whereSeparator: \.isWhitespace) {
            // Each word somewhere: the note, the place, or the type's name (ASCII letters
            // in any case; other letters as typed). `%`, `_` and `\\` are the person's characters, not patterns.
            let escaped = word.lowercased().replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
            let like = "LIKE ? ESCAPE '\\'"
            conditions.append(
                "(lower(coalesce(json_extract(body, '$.notes'), '') || ' ' || "
                    + "coalesce(json_extract(body, '$.location_name'), '')) \(like) "
                    + "OR event_type_id IN (SELECT id FROM local_event_types WHERE lower(name) \(like)))")
            arguments += ["%\(escaped)%", "%\(escaped)%"]
        }
        let condition = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let sql = """
            SELECT body, sync_status FROM local_events \(condition)
            ORDER BY timestamp_ms DESC, id DESC LIMIT ? OFFSET ?
            """
        let bound = StatementArguments(arguments + [limit, offset])
        return try await db.read { db in try Row.fetchAll(db, sql: sql, arguments: bound).map(Self.event) }
    }
}
