import Foundation
import GRDB
import Testing
import TrendyModels
import TrendySync
import TrendySyncLive
import TrendySyncTesting

/// The `LocalUnitOfWork` port over the real store (issue 21): a feature's own rows, the events it
/// writes and their outbox entries commit together or not at all.
@Suite(.timeLimit(.minutes(5)))
struct LocalUnitOfWorkTests {
    struct Boom: Error {}

    func rig() async throws -> (SQLiteLocalStore, DatabaseQueue, EventType) {
        let (store, queue) = try MemoryLocalStore.makeWithDatabase()
        try await queue.write { db in try db.execute(sql: "CREATE TABLE feature_rows (id TEXT PRIMARY KEY, n INTEGER)")
        }
        let type = EventType(id: UUIDv7Generator().next(), name: "Walk")
        try await store.createEventType(type)
        return (store, queue, type)
    }

    @Test func aFeaturesRowsAndItsEventCommitTogether() async throws {
        let (store, _, type) = try await rig()
        let ids = UUIDv7Generator()
        let before = try await store.outboxCounts().pending
        let event = Event(id: ids.next(), eventTypeId: type.id, timestamp: Date())
        let rowId = try await store.write { tx in
            try tx.execute("INSERT INTO feature_rows (id, n) VALUES (?, ?)", [.text("a"), .integer(7)])
            let rowId = tx.lastInsertedRowID
            #expect(try tx.eventTypeExists(type.id))
            try tx.insertEvent(event, now: Date())
            var changed = event
            changed.notes = "later"
            try tx.replaceEvent(changed, now: Date())
            return rowId
        }
        #expect(rowId == 1)
        let rows = try await store.read { tx in try tx.rows("SELECT id, n FROM feature_rows", []) }
        #expect(rows == [["id": .text("a"), "n": .integer(7)]])
        #expect(try await store.read { tx in try tx.event(event.id)?.notes } == "later")
        #expect(try await store.outboxCounts().pending > before)
    }

    @Test func anErrorRollsBackTheFeaturesRowsTheEventAndItsOutboxEntry() async throws {
        let (store, _, type) = try await rig()
        let before = try await store.outboxCounts().pending
        let event = Event(id: UUIDv7Generator().next(), eventTypeId: type.id, timestamp: Date())
        await #expect(throws: Boom.self) {
            try await store.write { tx in
                try tx.execute("INSERT INTO feature_rows (id, n) VALUES (?, ?)", [.text("b"), .null])
                try tx.insertEvent(event, now: Date())
                throw Boom()
            }
        }
        #expect(try await store.read { tx in try tx.rows("SELECT * FROM feature_rows", []) }.isEmpty)
        #expect(try await store.read { tx in try tx.event(event.id) } == nil)
        #expect(try await store.outboxCounts().pending == before)
    }

    @Test func anInvalidEventOrAMissingTypeIsRefusedInsideTheTransaction() async throws {
        let (store, _, _) = try await rig()
        let orphan = Event(id: UUIDv7Generator().next(), eventTypeId: UUIDv7Generator().next(), timestamp: Date())
        await #expect(throws: (any Error).self) {
            try await store.write { tx in try tx.insertEvent(orphan, now: Date()) }
        }
        // A read transaction cannot write.
        await #expect(throws: (any Error).self) {
            try await store.read { tx in try tx.execute("INSERT INTO feature_rows (id) VALUES ('c')", []) }
        }
    }

    @Test func localValuesReadBackAsTheyWereWritten() {
        #expect(LocalValue("x" as String?) == .text("x"))
        #expect(LocalValue(nil as String?) == .null)
        #expect(LocalValue(true).bool == true)
        #expect(LocalValue.real(3).integer == 3)
        #expect(LocalValue.real(3.5).integer == nil)
        #expect(LocalValue.text("7").integer == nil)
    }
}
