import Foundation
import GRDB
import TrendyAPI
import TrendySync

/// One outbox row, as the engine works with it.
struct OutboxEntry: Sendable, Hashable {
    var seq: Int64
    var entity: SyncEntity
    var entityId: String
    var kind: MutationKind
    var payload: String?
    var idempotencyKey: String
    var attempts: Int
    /// The change-feed cursor the change was made on; nil for entries from before field-level
    /// changes (sent without a base: plain last-write-wins).
    var baseVersion: Int64? = nil
    /// Whether it had been sent before it was last taken (taking marks it sent, in case the
    /// process dies mid-send): an entry taken but never sent is released as it was.
    var sentBefore = false
}

/// The outbox's SQL, used inside the store's transactions.
enum Outbox {
    static func newKey() -> String { UUID().uuidString.lowercased() }

    /// The assignments that put an entry back in the queue as if never tried (a retry the
    /// person asked for, a refused entry revived): the key is only changed where the body is.
    static let requeued = "state = 'pending', attempts = 0, next_attempt_at = 0, last_error = NULL"

    /// ``requeued`` for a failed entry sent again: one the server refused (`sent` 0: it applied
    /// nothing) gets a new key. Under its old key a batch of edits, whose answer the server keeps
    /// (per-item refusals are a 2xx answer), was answered with the old refusal: `sync
    /// --retry-failed`, or a type sent again, refused the edit again for a day.
    static let retried =
        "\(requeued), idempotency_key = CASE WHEN sent = 0 THEN lower(hex(randomblob(16))) ELSE idempotency_key END"

    /// Entries left in flight (a killed process, a damaged database) go back to the queue. They
    /// may have reached the server under their keys, so they stay `sent` and keep their keys.
    static func requeueInFlight(_ db: Database) throws {
        try db.execute(sql: "UPDATE outbox SET state = 'pending', sent = 1 WHERE state = 'in_flight'")
    }

    /// Records a local change, coalescing with a waiting entry for the same entity. An update's
    /// `payload` is a field patch (only what changed, ``FieldPatch``) and `whole` the entity as
    /// it now is (what a create folded with it sends). A new entry records the change-feed
    /// cursor as its base (D37); a coalesced one keeps the base of its first change.
    static func enqueue(
        _ db: Database, _ entity: SyncEntity, _ id: String, _ kind: MutationKind, payload: String?,
        whole: String? = nil, now: Date
    ) throws {
        try queue(db, entity, id, kind, payload: payload, whole: whole, now: now)
        guard kind != .create else { return }
        // This edit's or delete's own tick of the change mark, kept after the entry is sent and
        // gone (whether the queue appended, folded, revived or dropped an entry for it).
        try db.cachedStatement(
            sql: """
                INSERT INTO local_changes (entity_id, mark) VALUES (?, ?)
                ON CONFLICT(entity_id) DO UPDATE SET mark = excluded.mark
                """
        ).execute(arguments: [id, try OutboxClock.tick(db)])
    }

    /// ``enqueue(_:_:_:_:payload:whole:now:)``'s queueing.
    private static func queue(
        _ db: Database, _ entity: SyncEntity, _ id: String, _ kind: MutationKind, payload: String?,
        whole: String?, now: Date
    ) throws {
        if kind == .update, let whole, try revivedRefusedCreate(db, entity, id, whole: whole, now: now) { return }
        // The newest waiting entry; when none waits, the newest failed one (it may be refused).
        let waiting = try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT seq, kind, state, sent, payload FROM outbox WHERE entity = ? AND entity_id = ?
                    ORDER BY state = 'failed', seq DESC LIMIT 1
                    """), arguments: [entity.rawValue, id])
        let existing = waiting.flatMap { row -> OutboxCoalescing.Existing? in
            guard let k = MutationKind(rawValue: row["kind"]), let s = OutboxState(rawValue: row["state"]) else {
                return nil
            }
            return (k, s, row["sent"])
        }
        let seq = waiting?["seq"] as Int64?
        /// What the merged entry sends: a create sends the whole entity, an update the union of
        /// both patches (the later value per field), a delete nothing.
        func merged(_ k: MutationKind) -> String? {
            switch k {
            case .create: return kind == .update ? whole : payload
            case .update:
                guard let old = waiting?["payload"] as String?, existing?.kind == .update, let payload else {
                    return payload
                }
                return FieldPatch.merge(old, payload)
            case .delete: return nil
            }
        }
        var decision = OutboxCoalescing.decide(existing: existing, incoming: kind)
        // A change is never folded into an entry that would then be sent before a creation it
        // refers to (an edit to a type made after the waiting entry): it goes after it instead.
        if let seq, kind == .update, let payload, try refersToLaterCreate(db, payload, after: seq) {
            switch decision {
            case .replace: decision = .append(.update)
            case .revive(let k):
                try db.execute(sql: "DELETE FROM outbox WHERE seq = ?", arguments: [seq])
                try insert(db, entity, id, k, payload: merged(k), base: try cursor(db), now: now)
                return
            case .append, .dropExisting: break
            }
        }
        switch decision {
        case .append(let k):
            try insert(
                db, entity, id, k, payload: k == .create ? (whole ?? payload) : payload, base: try cursor(db), now: now)
        case .replace(let k):
            try db.execute(
                sql: "UPDATE outbox SET kind = ?, payload = ? WHERE seq = ?", arguments: [k.rawValue, merged(k), seq])
        case .revive(let k):
            try db.execute(
                sql: "UPDATE outbox SET kind = ?, payload = ?, idempotency_key = ?, \(requeued) WHERE seq = ?",
                arguments: [k.rawValue, merged(k), newKey(), seq])
        case .dropExisting:
            try db.execute(sql: "DELETE FROM outbox WHERE seq = ?", arguments: [seq])
            // A create this device never sent, deleted: the server never had it from here, so no
            // tombstone holds it back. One with the same id from elsewhere (a copy of this
            // database, an archive imported on another device) is another device's event, and a
            // pull brings it here like any other; a tombstone hid it from every pull for ever
            // while the server and every other device had it (an outsider's attack, issue 35).
            try db.cachedStatement(
                sql: "DELETE FROM tombstones WHERE entity = ? AND entity_id = ? AND cascade_of IS NULL"
            )
            .execute(arguments: [entity.rawValue, id])
        }
        // A change folded into a waiting entry: when its fields were written, and a tick of the
        // change mark (an entry appended takes a number of its own).
        if let seq, decision.folds { try OutboxClock.stamp(db, seq: seq, payload: payload) }
        if kind == .delete {
            // The entity is going: its failed changes no longer need anyone's attention.
            try db.cachedStatement(sql: "DELETE FROM outbox WHERE entity = ? AND entity_id = ? AND state = 'failed'")
                .execute(arguments: [entity.rawValue, id])
        }
    }

    /// A create the server refused: the entity is not on the server, so a change sent on its own
    /// would be refused too ("no such event"). An update revives the create with the entity as it
    /// now is (`whole`), at the end of the queue (after anything it may name), and every other
    /// waiting or refused change of the entity goes into it. False when no refused create waits.
    static func revivedRefusedCreate(_ db: Database, _ entity: SyncEntity, _ id: String, whole: String, now: Date)
        throws -> Bool
    {
        guard
            try Bool.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT 1 FROM outbox WHERE entity = ? AND entity_id = ? AND kind = 'create'
                        AND state = 'failed' AND sent = 0
                        """), arguments: [entity.rawValue, id]) == true
        else { return false }
        let base = try Int64.fetchOne(
            db, sql: "SELECT MIN(base_version) FROM outbox WHERE entity = ? AND entity_id = ?",
            arguments: [entity.rawValue, id])
        try db.execute(
            sql: "DELETE FROM outbox WHERE entity = ? AND entity_id = ? AND state != 'in_flight'",
            arguments: [entity.rawValue, id])
        try insert(db, entity, id, .create, payload: whole, base: base ?? cursor(db), now: now)
        return true
    }

    /// Appends a new entry at the end of the queue with a new key.
    static func insert(
        _ db: Database, _ entity: SyncEntity, _ id: String, _ kind: MutationKind, payload: String?, base: Int64?,
        now: Date
    ) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO outbox (entity, entity_id, kind, payload, idempotency_key, created_at, base_version)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            entity.rawValue, id, kind.rawValue, payload, newKey(), now.timeIntervalSince1970, base ?? 0,
        ])
    }

    /// Whether `patch` names an entity whose create waits in the outbox after `seq`.
    private static func refersToLaterCreate(_ db: Database, _ patch: String, after seq: Int64) throws -> Bool {
        for reference in FieldPatch.references(patch) {
            if try Bool.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT 1 FROM outbox WHERE entity = ? AND entity_id = ? AND kind = 'create'
                        AND state != 'failed' AND seq > ?
                        """),
                arguments: [reference.entity, reference.id, seq]) == true
            {
                return true
            }
        }
        return false
    }

    /// The change-feed cursor this install has applied (nil before the first download).
    static func cursor(_ db: Database) throws -> Int64? {
        try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM sync_state WHERE key = 'cursor'"))
            .flatMap { Int64($0) }
    }

    /// This install's device id (made by the schema migration).
    static func deviceId(_ db: Database) throws -> String {
        try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM sync_state WHERE key = 'device_id'"))
            ?? "unknown"
    }

    /// Removes the entries of an entity deleted with its parent that nothing needs any more: all
    /// of them when its create was never sent (the server never had it), else the failed ones.
    /// Waiting edits of an entity the server has are still sent, before the parent's delete: the
    /// server's cascade then takes what this device saw in the parent (an event moved into a type
    /// goes with the type, not back to the type it was in on the server).
    static func dropUnsentAndFailed(_ db: Database, _ entity: SyncEntity, _ id: String) throws {
        let unsentCreate =
            try Bool.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT 1 FROM outbox WHERE entity = ? AND entity_id = ? AND kind = 'create'
                        AND state != 'in_flight' AND sent = 0
                        """), arguments: [entity.rawValue, id]) ?? false
        try db.execute(
            sql: """
                DELETE FROM outbox WHERE entity = ? AND entity_id = ?
                AND (state = 'failed' OR (? AND state = 'pending'))
                """,
            arguments: [entity.rawValue, id, unsentCreate])
    }

    /// Remembers a local delete, so no pull brings the entity back. `cascadeOf`: the event went
    /// with its deleted type, so only a server copy still of that type is held back.
    static func tombstone(_ db: Database, _ entity: SyncEntity, _ id: String, cascadeOf: String? = nil) throws {
        try db.execute(
            sql: "INSERT OR IGNORE INTO tombstones (entity, entity_id, cascade_of) VALUES (?, ?, ?)",
            arguments: [entity.rawValue, id, cascadeOf])
    }

    /// From the trigger-maintained `outbox_counts` table: one row read, whatever the outbox holds.
    static func counts(_ db: Database) throws -> (pending: Int, failed: Int) {
        var pending = 0
        var failed = 0
        for row in try Row.fetchAll(db, sql: "SELECT state, n FROM outbox_counts") {
            if OutboxState(rawValue: row["state"]) == .failed { failed = row["n"] } else { pending += row["n"] as Int }
        }
        return (pending, failed)
    }
}

extension OutboxCoalescing.Decision {
    /// The change went into a waiting entry (replacing or reviving it) rather than a new one.
    var folds: Bool {
        switch self {
        case .replace, .revive: true
        case .append, .dropExisting: false
        }
    }
}
