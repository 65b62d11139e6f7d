import Foundation
import GRDB
import Testing
import TrendyAPI
import TrendyModels
import TrendySync
import TrendySyncLive
import TrendySyncTesting

/// Applying change-feed pages as the fast reader delivers them: the event text is stored as
/// received, local changes and deletes still win, and a failed page leaves nothing behind.
@Suite struct PullApplyTests {
    let ids = UUIDv7Generator()
    let t0 = Date(timeIntervalSince1970: 1_800_000_000.5)

    /// A page in the server's own shape, read by the fast reader (as the live client does).
    func serverPage(_ events: [Event], deletes: [UUIDv7] = [], from cursor: Int64 = 0) throws -> ChangesPage {
        try #require(serverFeedPage(events, deletes: deletes, from: cursor, at: t0))
    }

    @Test func eventsAreStoredAsReceivedAndReadBackTheSame() async throws {
        let store = try MemoryLocalStore.make()
        let type = ids.next()
        var events: [Event] = []
        for i in 0..<30 {
            let notes: String? = i % 3 == 0 ? "line\nbreak \"q\" ☕️" : nil
            let location: Coordinate? = i % 5 == 0 ? Coordinate(latitude: 48.1, longitude: -11.5) : nil
            events.append(
                Event(
                    id: ids.next(), eventTypeId: type, timestamp: t0.addingTimeInterval(Double(i)), notes: notes,
                    isAllDay: i % 2 == 0, location: location))
        }
        let page = try serverPage(events)
        #expect(page.changes.allSatisfy { $0.dataJSON != nil })
        #expect(try await store.apply(page) == 30)
        let stored = try await store.events(limit: 100, since: nil)
        #expect(Set(stored.map(\.value)) == Set(events))
        #expect(stored.allSatisfy { $0.syncStatus == .synced })
        #expect(try await store.cursor() == 30)
    }

    @Test func waitingLocalChangesAndLocalDeletesWinOverThePage() async throws {
        let store = try MemoryLocalStore.make()
        let type = EventType(id: ids.next(), name: "T")
        try await store.createEventType(type)
        let edited = Event(id: ids.next(), eventTypeId: type.id, timestamp: t0, notes: "mine")
        let deleted = Event(id: ids.next(), eventTypeId: type.id, timestamp: t0 + 1)
        try await store.createEvent(edited)
        // Deleted here after a pull brought it: the delete waits to be sent. (A create deleted
        // before it was ever sent leaves nothing behind: the server's copy of that id came from
        // elsewhere, and is stored — NeverLoseEngineTests.)
        #expect(try await store.apply(try serverPage([deleted])) == 1)
        try await store.deleteEvent(id: deleted.id)
        let fresh = Event(id: ids.next(), eventTypeId: type.id, timestamp: t0)
        var theirs = edited
        theirs.notes = "theirs"
        #expect(try await store.apply(try serverPage([theirs, deleted, fresh], from: 1)) == 1)
        #expect(try await store.event(id: edited.id)?.value.notes == "mine")
        #expect(try await store.event(id: deleted.id) == nil)
        #expect(try await store.event(id: fresh.id)?.value == fresh)
    }

    /// D37: a pull keeps the fields a waiting local change sets and takes every other field.
    @Test func aPullKeepsFieldsWithAWaitingChangeAndTakesTheRest() async throws {
        let (store, database) = try MemoryLocalStore.makeWithDatabase()
        let type = EventType(id: ids.next(), name: "T")
        try await store.createEventType(type)
        let event = Event(id: ids.next(), eventTypeId: type.id, timestamp: t0, notes: "server")
        _ = try await store.apply(try serverPage([event]))
        try await database.write { db in try db.execute(sql: "DELETE FROM outbox") }
        var mine = event
        mine.notes = "mine"
        try await store.updateEvent(mine)
        var theirs = event
        theirs.notes = "theirs"
        theirs.timestamp = t0.addingTimeInterval(60)
        theirs.isAllDay = true
        #expect(try await store.apply(try serverPage([theirs], from: 1)) == 1)
        let stored = try #require(try await store.event(id: event.id))
        #expect(stored.value.notes == "mine")
        #expect(stored.value.timestamp == theirs.timestamp)
        #expect(stored.value.isAllDay)
        #expect(stored.syncStatus == .pending)
        let x = try await store.explain(entityId: event.id.description)
        #expect(x.changes.map(\.fields) == [["notes"]])
        #expect(x.changes.first?.baseVersion == 1)
        #expect(x.nextStep.contains("update of notes based on cursor 1"))
        // A server delete of it keeps the waiting edit as a conflict.
        _ = try await store.apply(try serverPage([], deletes: [event.id], from: 2))
        #expect(try await store.event(id: event.id) == nil)
        let kept = try await store.conflicts(includeClosed: false)
        #expect(kept.first?.conflict.kind == .deleted)
        #expect(kept.first?.conflict.lostValue == #"{"notes":"mine"}"#)
        let conflictId = try #require(kept.first?.conflict.id)
        let restored = try await store.restoreConflict(id: conflictId, newId: ids.next())
        #expect(try await store.event(id: try #require(UUIDv7(restored)))?.value.notes == "mine")
        #expect(try await store.openConflictCount() == 0)
        // Restoring twice would make a second copy: refused.
        await #expect(throws: LocalStoreError.self) {
            try await store.restoreConflict(id: conflictId, newId: ids.next())
        }
    }

    @Test func aPageThatFailsHalfwayLeavesNothingAndKeepsTheCursor() async throws {
        let (store, database) = try MemoryLocalStore.makeWithDatabase()
        let type = ids.next()
        let events = (0..<10).map {
            Event(id: ids.next(), eventTypeId: type, timestamp: t0.addingTimeInterval(Double($0)))
        }
        try await store.setCursor(5, force: true)
        // The disk "fails" on the seventh row of the page.
        try await database.write { db in
            try db.execute(
                sql: """
                    CREATE TRIGGER fail_write BEFORE INSERT ON local_events WHEN NEW.id = '\(events[6].id)'
                    BEGIN SELECT RAISE(ABORT, 'disk I/O error (simulated)'); END
                    """)
        }
        await #expect(throws: DatabaseError.self) { try await store.apply(try serverPage(events, from: 5)) }
        #expect(try await store.events(limit: 100, since: nil).isEmpty)
        #expect(try await store.cursor() == 5)
        // Once the disk recovers, the same page applies whole.
        try await database.write { db in try db.execute(sql: "DROP TRIGGER fail_write") }
        #expect(try await store.apply(try serverPage(events, from: 5)) == 10)
        #expect(try await store.cursor() == 15)
    }

    @Test func deletesInThePageRemoveStoredEvents() async throws {
        let store = try MemoryLocalStore.make()
        let type = ids.next()
        let events = (0..<4).map {
            Event(id: ids.next(), eventTypeId: type, timestamp: t0.addingTimeInterval(Double($0)))
        }
        _ = try await store.apply(try serverPage(events))
        _ = try await store.apply(try serverPage([], deletes: [events[0].id, events[2].id], from: 4))
        #expect(Set(try await store.events(limit: 10, since: nil).map(\.value.id)) == [events[1].id, events[3].id])
    }
}
