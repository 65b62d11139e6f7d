import Foundation
import GRDB
import Testing
import TrendyModels
import TrendySync
import TrendySyncTesting

@testable import TrendySyncLive

/// How `nextWork` forms a unit from the outbox's `batch` column (`sync.v13`): the two branches
/// the engine's tests do not reach — an entry sent before the column existed, and an entry taken
/// but never sent.
@Suite struct OutboxBatchUnitTests {
    /// Three note edits queued for three events (their creates already gone from the outbox).
    static func threeEdits() async throws -> (SQLiteLocalStore, [Event]) {
        let store = try MemoryLocalStore.make()
        let ids = UUIDv7Generator()
        let coffee = EventType(id: ids.next(), name: "Coffee")
        try await store.createEventType(coffee)
        var events = (0..<3).map {
            Event(id: ids.next(), eventTypeId: coffee.id, timestamp: Date(timeIntervalSince1970: 1e9 + Double($0)))
        }
        for event in events { try await store.createEvent(event) }
        try await store.db.write { try $0.execute(sql: "DELETE FROM outbox") }
        for index in events.indices {
            events[index].notes = "edit \(index)"
            try await store.updateEvent(events[index])
        }
        return (store, events)
    }

    /// An entry sent before batches were remembered (`batch` NULL, upgraded mid-flight) goes
    /// alone: which entries it went with is unknown, and joining others would make a new key.
    @Test func anEntrySentBeforeBatchesWereRememberedGoesAlone() async throws {
        let (store, events) = try await Self.threeEdits()
        let first = try #require(try await store.db.read { try Int64.fetchOne($0, sql: "SELECT min(seq) FROM outbox") })
        try await store.db.write {
            try $0.execute(sql: "UPDATE outbox SET sent = 1, batch = NULL WHERE seq = ?", arguments: [first])
        }
        let alone = try await store.nextWork(now: Date(), batchSize: 50).entries
        #expect(alone.map(\.entityId) == [events[0].id.description])
        #expect(alone.first?.sentBefore == true)
        try await store.release(alone)
        // The never-sent ones go together, without it, once it is out of the way.
        try await store.complete(alone)
        let rest = try await store.nextWork(now: Date(), batchSize: 50).entries
        #expect(rest.map(\.entityId) == events.dropFirst().map(\.id.description))
    }

    /// An entry taken but never sent (the pass stopped before the request: a merge re-pointed
    /// ids, the session changed) is released as never sent: its `batch` is cleared, so the next
    /// unit is formed afresh and may take edits queued since.
    @Test func anEntryTakenButNeverSentForgetsItsBatch() async throws {
        let (store, events) = try await Self.threeEdits()
        let taken = try await store.nextWork(now: Date(), batchSize: 2).entries
        #expect(taken.count == 2)
        try await store.releaseUnsent(taken)
        let rows = try await store.db.read { (db: Database) in
            try String.fetchAll(
                db, sql: "SELECT coalesce(batch, '-') || ' ' || sent || ' ' || state FROM outbox ORDER BY seq")
        }
        #expect(rows == ["- 0 pending", "- 0 pending", "- 0 pending"])
        let all = try await store.nextWork(now: Date(), batchSize: 50).entries
        #expect(all.map(\.entityId) == events.map(\.id.description), "one unit of the three, formed afresh")

        // Taken again after it was sent: released as sent, it keeps its batch and goes as it went.
        try await store.release(all)
        let again = try await store.nextWork(now: Date(), batchSize: 50).entries
        #expect(again.map(\.seq) == all.map(\.seq))
        #expect(again.allSatisfy { $0.sentBefore })
    }
}
