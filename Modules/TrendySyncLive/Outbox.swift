import Foundation
import GRDB
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
}

/// The outbox's SQL, used inside the store's transactions.
enum Outbox {
    static func newKey() -> String { UUID().uuidString.lowercased() }

    /// The assignments that put an entry back in the queue as if never tried (a retry the
    /// person asked for, a refused entry revived): the key is only changed where the body is.
    static let requeued = "state = 'pending', attempts = 0, next_attempt_at = 0, last_error = NULL"

    /// Entries left in flight (a killed process, a damaged database) go back to the queue. They
    /// may have reached the server under their keys, so they stay `sent` and keep their keys.
    static func requeueInFlight(_ db: Database) throws {
        try db.execute(sql: "UPDATE outbox SET state = 'pending', sent = 1 WHERE state = 'in_flight'")
    }

    /// Records a local change, coalescing with a waiting entry for the same entity.
    static func enqueue(
        _ db: Database, _ entity: SyncEntity, _ id: String, _ kind: MutationKind, payload: String?, now: Date
    ) throws {
        // The newest waiting entry; when none waits, the newest failed one (it may be refused).
        let waiting = try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT seq, kind, state, sent FROM outbox WHERE entity = ? AND entity_id = ?
                    ORDER BY state = 'failed', seq DESC LIMIT 1
                    """), arguments: [entity.rawValue, id])
        let existing = waiting.flatMap { row -> OutboxCoalescing.Existing? in
            guard let k = MutationKind(rawValue: row["kind"]), let s = OutboxState(rawValue: row["state"]) else {
                return nil
            }
            return (k, s, row["sent"])
        }
        switch OutboxCoalescing.decide(existing: existing, incoming: kind) {
        case .append(let k):
            try db.cachedStatement(
                sql: """
                    INSERT INTO outbox (entity, entity_id, kind, payload, idempotency_key, created_at)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """
            ).execute(arguments: [entity.rawValue, id, k.rawValue, payload, newKey(), now.timeIntervalSince1970])
        case .replace(let k):
            try db.execute(
                sql: "UPDATE outbox SET kind = ?, payload = ? WHERE seq = ?",
                arguments: [k.rawValue, payload, waiting?["seq"] as Int64?])
        case .revive(let k):
            try db.execute(
                sql: "UPDATE outbox SET kind = ?, payload = ?, idempotency_key = ?, \(requeued) WHERE seq = ?",
                arguments: [k.rawValue, payload, newKey(), waiting?["seq"] as Int64?])
        case .dropExisting:
            try db.execute(sql: "DELETE FROM outbox WHERE seq = ?", arguments: [waiting?["seq"] as Int64?])
        }
        if kind == .delete {
            // The entity is going: its failed changes no longer need anyone's attention.
            try db.cachedStatement(sql: "DELETE FROM outbox WHERE entity = ? AND entity_id = ? AND state = 'failed'")
                .execute(arguments: [entity.rawValue, id])
        }
    }

    /// Removes the entries of an entity deleted with its parent that nothing needs any more:
    /// unsent ones, and failed ones (the server deletes its copy with the parent).
    static func dropUnsentAndFailed(_ db: Database, _ entity: SyncEntity, _ id: String) throws {
        try db.execute(
            sql: """
                DELETE FROM outbox WHERE entity = ? AND entity_id = ?
                AND (state = 'failed' OR (state = 'pending' AND sent = 0))
                """,
            arguments: [entity.rawValue, id])
    }

    /// Remembers a local delete, so no pull brings the entity back.
    static func tombstone(_ db: Database, _ entity: SyncEntity, _ id: String) throws {
        try db.execute(
            sql: "INSERT OR IGNORE INTO tombstones (entity, entity_id) VALUES (?, ?)", arguments: [entity.rawValue, id])
    }

    /// From the trigger-maintained `outbox_counts` table: one row read, whatever the outbox holds.
    static func counts(_ db: Database) throws -> (pending: Int, failed: Int) {
        var pending = 0
        var failed = 0
        for row in try Row.fetchAll(db, sql: "SELECT state, n FROM outbox_counts") {
            if (row["state"] as String) == "failed" { failed = row["n"] } else { pending += row["n"] as Int }
        }
        return (pending, failed)
    }
}
