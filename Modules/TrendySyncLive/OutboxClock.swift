import Foundation
import GRDB
import TrendyAPI

/// When each field of a waiting change was written, in the outbox's own order. A change folded
/// into a waiting entry (an edit of an unsent create, a second edit before the first is sent)
/// keeps that entry's place in the queue, so the place alone does not say which of two entries
/// of one entity holds the value written last. That matters when two entities become one: the
/// server de-duplicates this device's unsent event into another event this device has edits
/// waiting for (simulation seed 80,084: the copy's newer note went first and the event's older
/// edit, queued after the copy's create but written before its note, overwrote it).
///
/// Sequence numbers and field clocks share the outbox's AUTOINCREMENT counter: an entry's
/// fields were written at its `seq`; a field folded in later is stamped with a fresh tick of the
/// same counter, which no entry will ever take.
enum OutboxClock {
    /// The next tick of the outbox's counter (an entry exists, so its row in `sqlite_sequence` does).
    static func tick(_ db: Database) throws -> Int64 {
        try db.cachedStatement(sql: "UPDATE sqlite_sequence SET seq = seq + 1 WHERE name = 'outbox'").execute()
        return try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT seq FROM sqlite_sequence WHERE name = 'outbox'")) ?? 0
    }

    /// Records that the fields of `payload` (a patch or a whole entity; none for a delete) were
    /// written into entry `seq` now. The counter ticks either way: it marks every local change
    /// (``SQLiteLocalStore/localChangeMark()``).
    static func stamp(_ db: Database, seq: Int64, payload: String?) throws {
        let now = try tick(db)
        guard let payload else { return }
        let fields = FieldPatch.fields(payload)
        guard !fields.isEmpty else { return }
        let stamps = FieldPatch.text(Dictionary(uniqueKeysWithValues: fields.map { ($0, now as Any) }))
        try db.cachedStatement(
            sql: "UPDATE outbox SET field_clock = json_patch(coalesce(field_clock, '{}'), ?) WHERE seq = ?"
        ).execute(arguments: [stamps, seq])
    }

    /// When each field of entry `seq` was written; a field not named was written at `seq`.
    static func clocks(_ db: Database, seq: Int64) throws -> [String: Int64] {
        parse(
            try String.fetchOne(
                db.cachedStatement(sql: "SELECT field_clock FROM outbox WHERE seq = ?"), arguments: [seq]))
    }

    /// A `field_clock` column's value as field → tick.
    static func parse(_ text: String?) -> [String: Int64] {
        guard let text else { return [:] }
        return FieldPatch.object(text: text).compactMapValues { value in
            if let n = value as? Int64 { return n }
            if let n = value as? Int { return Int64(n) }
            return (value as? NSNumber)?.int64Value
        }
    }

    /// One entry's fields and when each was written.
    struct Writes {
        var seq: Int64
        var patch: String
        var clocks: [String: Int64]
        /// Sent at least once: its body is fixed (a resend under its key must match).
        var fixed: Bool

        func clock(_ field: String) -> Int64 { clocks[field] ?? seq }
    }

    /// Adds `incoming` (the fields a merged-away copy set, written per its clocks) to the waiting
    /// updates of event `id`, keeping each field only where this device wrote it last: an older
    /// value of a field is dropped from every entry that can still change, so whichever order the
    /// entries are sent in, the last value stays. `incoming` takes the merged create's place.
    static func addKeepingLastWrites(_ db: Database, event id: String, _ incoming: Writes, now: Date) throws {
        let waiting = try Row.fetchAll(
            db,
            sql: """
                SELECT seq, state, sent, payload, field_clock FROM outbox
                WHERE entity = 'event' AND entity_id = ? AND kind = 'update' AND state != 'failed'
                AND payload IS NOT NULL
                """, arguments: [id]
        ).map { row in
            Writes(
                seq: row["seq"], patch: row["payload"],
                clocks: parse(row["field_clock"]), fixed: row["state"] == "in_flight" || row["sent"] == true)
        }
        var last: [String: Int64] = [:]
        for w in waiting + [incoming] {
            for field in FieldPatch.fields(w.patch) { last[field] = max(last[field] ?? .min, w.clock(field)) }
        }
        func olderFields(_ w: Writes) -> [String] {
            FieldPatch.fields(w.patch).filter { w.clock($0) < last[$0] ?? .min }
        }
        for w in waiting where !w.fixed {
            let older = olderFields(w)
            guard !older.isEmpty else { continue }
            if let rest = FieldPatch.removing(older, from: w.patch) {
                try db.execute(sql: "UPDATE outbox SET payload = ? WHERE seq = ?", arguments: [rest, w.seq])
            } else {
                try db.execute(sql: "DELETE FROM outbox WHERE seq = ?", arguments: [w.seq])
            }
        }
        guard let patch = FieldPatch.removing(olderFields(incoming), from: incoming.patch) else { return }
        let stamps = incoming.clocks.filter { FieldPatch.fields(patch).contains($0.key) }
        try db.execute(
            sql: """
                INSERT INTO outbox (seq, entity, entity_id, kind, payload, idempotency_key, created_at, base_version,
                                    field_clock)
                VALUES (?, 'event', ?, 'update', ?, ?, ?, 0, ?)
                """,
            arguments: [
                incoming.seq, id, patch, Outbox.newKey(), now.timeIntervalSince1970,
                stamps.isEmpty ? nil : FieldPatch.text(stamps),
            ])
    }
}
