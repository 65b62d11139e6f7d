import Foundation
import Testing
import TrendyModels
import TrendySync

/// What every ``LocalStore`` must do, as a test any implementation runs: reads see writes at
/// once, every write queues one change for the server, names are unique case-insensitively,
/// imports skip duplicates, deleting a type deletes its events, bad values are refused with
/// ``LocalStoreError/invalid(_:)``, and the data belongs to one account at a time. The SQLite
/// store runs it in memory and on a file; a Core Data or SwiftData store would run it too. See
/// docs/porting.md.
public enum LocalStoreContract {
    /// Runs the contract. `fresh` makes an empty store over storage of its own; `reopen`, when the
    /// store persists, makes a second one over the same storage (a new process).
    public static func verify(
        fresh: () throws -> any LocalStore, reopen: ((any LocalStore) throws -> any LocalStore)? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let run = ContractRun(store: try fresh(), sourceLocation: sourceLocation)
        try await run.startsEmpty()
        let (coffee, renamed) = try await run.eventTypes()
        let (_, second) = try await run.events(coffee: coffee, renamed: renamed)
        try await run.screenQueries(coffee: coffee, renamed: renamed)
        let place = try await run.geofences(coffee: coffee)
        if let reopen {
            let other = try reopen(run.store)
            #expect(
                try await other.events(limit: 10, since: nil).count == 4, "another process sees every write",
                sourceLocation: sourceLocation)
            #expect(try await other.outboxCounts().pending > 0, sourceLocation: sourceLocation)
        }
        try await run.deletesAndOwnership(coffee: coffee, renamed: renamed, second: second, place: place)
    }
}

/// One run of ``LocalStoreContract``: its store, ids and where to report.
private struct ContractRun {
    let store: any LocalStore
    let sourceLocation: SourceLocation
    let ids = UUIDv7Generator()

    func isConflict(_ error: LocalStoreError) -> Bool {
        if case .conflict = error { return true }
        return false
    }

    func isInvalid(_ error: LocalStoreError) -> Bool {
        if case .invalid = error { return true }
        return false
    }

    func expectStoreError(
        _ comment: Comment, _ matches: (LocalStoreError) -> Bool, _ body: () async throws -> Void
    ) async {
        do {
            try await body()
            Issue.record("\(comment): accepted", sourceLocation: sourceLocation)
        } catch let error as LocalStoreError {
            #expect(matches(error), "\(comment): got \(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(comment): not a LocalStoreError: \(error)", sourceLocation: sourceLocation)
        }
    }

    /// A new store is empty, and a first claim clears nothing.
    func startsEmpty() async throws {
        #expect(try await store.eventTypes().isEmpty, "a new store is empty", sourceLocation: sourceLocation)
        #expect(try await store.events(limit: 10, since: nil).isEmpty, sourceLocation: sourceLocation)
        #expect(try await store.geofences().isEmpty, sourceLocation: sourceLocation)
        #expect(try await store.outboxCounts() == (0, 0), "nothing to send", sourceLocation: sourceLocation)
        #expect(try await store.openConflictCount() == 0, sourceLocation: sourceLocation)

        // The data belongs to the account that claims it.
        #expect(
            try await store.claim(for: "contract-a") == false, "a first claim clears nothing",
            sourceLocation: sourceLocation)
    }

    /// Event types: created, found by id and by name in any case, unique by name.
    func eventTypes() async throws -> (coffee: EventType, renamed: EventType) {
        // Event types: created, found by id and by name in any case, unique by name.
        let coffee = EventType(id: ids.next(), name: "Coffee")
        try await store.createEventType(coffee)
        #expect(try await store.eventType(id: coffee.id)?.value == coffee, sourceLocation: sourceLocation)
        #expect(try await store.eventType(named: "cOFFEE")?.value.id == coffee.id, sourceLocation: sourceLocation)
        #expect(
            try await store.eventType(id: coffee.id)?.syncStatus == .pending, "a local write waits to be sent",
            sourceLocation: sourceLocation)
        #expect(try await store.outboxCounts().pending == 1, "one write, one change", sourceLocation: sourceLocation)
        await expectStoreError("a second type with the same name, in another case", isConflict) {
            try await store.createEventType(EventType(id: ids.next(), name: "coffee"))
        }
        let found = try await store.findOrCreateEventType(EventType(id: ids.next(), name: "COFFEE"))
        #expect(found.type.id == coffee.id && !found.created, "find-or-create finds", sourceLocation: sourceLocation)
        let tea = try await store.findOrCreateEventType(EventType(id: ids.next(), name: "Tea"))
        #expect(tea.created, "find-or-create creates", sourceLocation: sourceLocation)
        await expectStoreError("an empty name", isInvalid) {
            try await store.createEventType(EventType(id: ids.next(), name: "  "))
        }
        #expect(
            try await store.outboxCounts().pending == 2, "a refused write queues nothing",
            sourceLocation: sourceLocation)
        var renamed = tea.type
        renamed.name = "Green tea"
        let before = try await store.localChangeMark()
        try await store.updateEventType(renamed)
        #expect(try await store.eventType(named: "green tea")?.value == renamed, sourceLocation: sourceLocation)
        // A change folded into a waiting one still moves the mark (the app learns of it).
        #expect(
            try await store.localChangeMark() > before, "every write moves the mark", sourceLocation: sourceLocation)
        return (coffee, renamed)
    }

    /// Events: newest first, counted by time, updated and deleted; imports skip duplicates.
    func events(coffee: EventType, renamed: EventType) async throws -> (first: Event, second: Event) {
        // Events: newest first, counted by time, updated and deleted; imports skip duplicates.
        let t = Date(timeIntervalSince1970: 1_800_000_000)
        let first = Event(id: ids.next(), eventTypeId: coffee.id, timestamp: t)
        let second = Event(id: ids.next(), eventTypeId: coffee.id, timestamp: t + 3_600, notes: "second")
        try await store.createEvent(first)
        try await store.createEvent(second)
        let queued = try await store.outboxCounts().pending
        // Four creates and a rename: four or five entries (a store may fold the rename into the
        // create still waiting).
        #expect((4...5).contains(queued), "every write is queued once (\(queued))", sourceLocation: sourceLocation)
        #expect(
            try await store.events(limit: 10, since: nil).map(\.value.id) == [second.id, first.id], "newest first",
            sourceLocation: sourceLocation)
        #expect(
            try await store.events(limit: 1, since: nil).count == 1, "at most limit", sourceLocation: sourceLocation)
        #expect(try await store.eventCount(from: t + 60, to: .distantFuture) == 1, sourceLocation: sourceLocation)
        await #expect(throws: (any Error).self, "an event of an unknown type", sourceLocation: sourceLocation) {
            try await store.createEvent(Event(id: ids.next(), eventTypeId: ids.next(), timestamp: t))
        }
        let imported = (0..<3).map { i in
            Event(
                id: ids.next(), eventTypeId: renamed.id, timestamp: t + Double(i) * 60, sourceType: .imported,
                externalId: "row-\(i)")
        }
        let summary = try await store.insertEvents(imported)
        #expect(summary == InsertSummary(inserted: 3, duplicates: 0), sourceLocation: sourceLocation)
        let again = imported.map { event in
            var copy = event
            copy.id = ids.next()
            return copy
        }
        #expect(
            try await store.insertEvents(again) == InsertSummary(inserted: 0, duplicates: 3),
            "importing twice adds nothing", sourceLocation: sourceLocation)
        var edited = second
        edited.notes = "edited"
        try await store.updateEvent(edited)
        #expect(try await store.event(id: second.id)?.value.notes == "edited", sourceLocation: sourceLocation)
        try await store.deleteEvent(id: first.id)
        #expect(try await store.event(id: first.id) == nil, sourceLocation: sourceLocation)
        return (first, second)
    }

    /// Pages, positions and counts agree with the newest-first list.
    func screenQueries(coffee: EventType, renamed: EventType) async throws {
        let all = try await store.events(limit: 100, since: nil).map(\.value)
        #expect(all.count == 4, sourceLocation: sourceLocation)
        #expect(
            try await store.eventPage(offset: 1, limit: 2, typeId: nil).map(\.value) == Array(all[1...2]),
            "a page is a slice of the list", sourceLocation: sourceLocation)
        let ofRenamed = all.filter { $0.eventTypeId == renamed.id }
        #expect(
            try await store.eventPage(offset: 0, limit: 10, typeId: renamed.id).map(\.value) == ofRenamed,
            "a page of one type", sourceLocation: sourceLocation)
        for (index, event) in all.enumerated() {
            #expect(try await store.eventPosition(id: event.id, typeId: nil) == index, sourceLocation: sourceLocation)
        }
        if let last = ofRenamed.last {
            #expect(
                try await store.eventPosition(id: last.id, typeId: renamed.id) == ofRenamed.count - 1,
                "a position among one type's events", sourceLocation: sourceLocation)
        }
        #expect(try await store.eventPosition(id: ids.next(), typeId: nil) == nil, sourceLocation: sourceLocation)
        let times = all.map(\.timestamp)
        guard let oldest = times.min(), let newest = times.max() else { return }
        #expect(
            try await store.eventCountsByType(from: oldest, to: newest.addingTimeInterval(1))
                == [renamed.id: ofRenamed.count, coffee.id: all.count - ofRenamed.count],
            "counted per type", sourceLocation: sourceLocation)
        #expect(
            try await store.eventCountsByType(from: oldest, to: oldest) == [:], "an empty range counts nothing",
            sourceLocation: sourceLocation)
        #expect(
            try await store.eventCount(from: oldest, to: newest) == all.count - 1, "the end is not in the range",
            sourceLocation: sourceLocation)
    }

    /// Geofences: created, edited, a bad one refused.
    func geofences(coffee: EventType) async throws -> Geofence {
        // Geofences.
        let place = Geofence(
            id: ids.next(), name: "Café", center: Coordinate(latitude: 52.52, longitude: 13.405), radius: 100,
            entryEventTypeId: coffee.id)
        try await store.createGeofence(place)
        var moved = place
        moved.radius = 150
        try await store.updateGeofence(moved)
        #expect(try await store.geofences().map(\.value) == [moved], sourceLocation: sourceLocation)
        await expectStoreError("a geofence with a radius of 0", isInvalid) {
            var bad = place
            bad.id = ids.next()
            bad.radius = 0
            try await store.createGeofence(bad)
        }
        return place
    }

    /// Deleting a type deletes its events; an account's unsynced changes are never handed to another.
    func deletesAndOwnership(coffee: EventType, renamed: EventType, second: Event, place: Geofence) async throws {
        // Deleting a type deletes its events.
        try await store.deleteEventType(id: renamed.id)
        #expect(try await store.eventType(id: renamed.id) == nil, sourceLocation: sourceLocation)
        #expect(
            try await store.events(limit: 10, since: nil).map(\.value.id) == [second.id],
            "the type's events went with it", sourceLocation: sourceLocation)
        try await store.deleteGeofence(id: place.id)
        #expect(try await store.geofences().isEmpty, sourceLocation: sourceLocation)

        // Unsynced changes of one account are never handed to another.
        #expect(
            try await store.claim(for: "contract-a") == false, "claiming again is a no-op",
            sourceLocation: sourceLocation)
        await #expect(throws: (any Error).self, "another account while changes wait", sourceLocation: sourceLocation) {
            try await store.claim(for: "contract-b")
        }
        #expect(
            try await store.eventType(id: coffee.id) != nil, "and nothing was cleared", sourceLocation: sourceLocation)
    }
}
