import GRDB
import Testing
import TrendySyncLive

/// An outbox written before entries recorded whether they were sent: the upgrade judges them by
/// what they went through, so none that may be on the server can be folded into later.
struct OutboxMigrationTests {
    @Test func entriesFromBeforeTheSentColumnAreJudgedByTheirAttempts() throws {
        var migrator = DatabaseMigrator()
        SyncSchema.register(in: &migrator)
        let db = try DatabaseQueue()
        try migrator.migrate(db, upTo: "sync.v2-outbox-counts")
        try db.write { db in
            for (id, state, attempts) in [
                ("a", "pending", 0), ("b", "pending", 2), ("c", "in_flight", 0), ("d", "failed", 1),
            ] {
                try db.execute(
                    sql: """
                        INSERT INTO outbox (entity, entity_id, kind, idempotency_key, state, attempts, created_at)
                        VALUES ('event', ?, 'update', ?, ?, ?, 0)
                        """, arguments: [id, "key-\(id)", state, attempts])
            }
        }
        try migrator.migrate(db)
        let sent = try db.read { db in
            try Row.fetchAll(db, sql: "SELECT entity_id, sent FROM outbox ORDER BY entity_id").map {
                "\($0["entity_id"] as String)=\($0["sent"] as Int)"
            }
        }
        #expect(sent == ["a=0", "b=1", "c=1", "d=1"])
    }
}
