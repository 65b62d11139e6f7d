import Foundation
import GRDB
import Testing
import TrendyModels
import TrendySync
import TrendySyncTesting

@testable import TrendySyncLive

/// `changedLocally(_:after:)`: whether an entity was changed here after a change mark — a new
/// entry, or a field folded into a waiting one — whatever the values it left (undo asks it: a
/// restore or another terminal that put back the very values a key left still counts).
@Suite struct LocalChangeTests {
    @Test func anyLaterLocalChangeOfTheEntityCountsAndOthersDoNot() async throws {
        let store = try MemoryLocalStore.make()
        let ids = UUIDv7Generator()
        let coffee = EventType(id: ids.next(), name: "Coffee")
        try await store.createEventType(coffee)
        var event = Event(id: ids.next(), eventTypeId: coffee.id, timestamp: Date(), notes: "mine")
        try await store.createEvent(event)
        let mark = try await store.localChangeMark()
        let id = event.id.description
        #expect(try await !store.changedLocally(id, after: mark))
        try await store.createEvent(Event(id: ids.next(), eventTypeId: coffee.id, timestamp: Date() + 60))
        #expect(try await !store.changedLocally(id, after: mark), "another event's change is not this one's")
        event.notes = "theirs"
        try await store.updateEvent(event)
        event.notes = "mine"
        try await store.updateEvent(event)
        #expect(try await store.changedLocally(id, after: mark), "folded into the waiting create, back to its value")
        // A pass sends the entry and forgets it: the change is still known (a pass between the
        // other terminal's edit and u hid it, and u overwrote it).
        try await store.db.write { try $0.execute(sql: "DELETE FROM outbox") }
        #expect(try await store.changedLocally(id, after: mark), "sent since, still a change made after the mark")
        #expect(try await !store.changedLocally(id, after: try await store.localChangeMark()))
    }
}
