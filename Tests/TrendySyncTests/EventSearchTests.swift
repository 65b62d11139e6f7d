import Foundation
import Testing
import TrendyModels
import TrendySync
import TrendySyncLive
import TrendySyncTesting

/// The events list's search (`EventFilter`) on a real SQLite store: words in the note, the place
/// or the type's name, in any case, each one needed; a type and a source narrow it; the person's
/// `%` and `_` are characters, not patterns.
@Suite struct EventSearchTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    /// Both ways of searching find letters beyond ASCII in any case, as the index does: a short
    /// word or a type's name sends a query to the scan, whose `LIKE` folded ASCII only (an outside
    /// attack: "ÉCLAIR dé" found nothing while "ÉCLAIR" alone found the éclair).
    @Test func everyLetterInAnyCaseOnBothPaths() async throws {
        let store = try MemoryLocalStore.make()
        let ids = UUIDv7Generator()
        let cream = EventType(id: ids.next(), name: "Crème")
        let plain = EventType(id: ids.next(), name: "Coffee")
        try await store.createEventType(cream)
        try await store.createEventType(plain)
        let eclair = Event(id: ids.next(), eventTypeId: plain.id, timestamp: Self.t0, notes: "ÉCLAIR DÉLICE")
        let flan = Event(id: ids.next(), eventTypeId: cream.id, timestamp: Self.t0.addingTimeInterval(1), notes: "flan")
        let other = Event(id: ids.next(), eventTypeId: plain.id, timestamp: Self.t0.addingTimeInterval(2), notes: "tea")
        _ = try await store.insertEvents([eclair, flan, other])
        func found(_ text: String) async throws -> Set<UUIDv7> {
            Set(try await store.eventPage(offset: 0, limit: 10, filter: EventFilter(text: text)).map(\.value.id))
        }
        #expect(try await found("éclair") == [eclair.id], "the index")
        #expect(try await found("éclair dé") == [eclair.id], "the scan (a short word)")
        #expect(try await found("dÉ") == [eclair.id])
        #expect(try await found("CRÈME") == [flan.id], "a type's name in another case")
        #expect(try await found("crème fla") == [flan.id])
        #expect(try await found("ea") == [other.id], "ASCII as before")
        #expect(try await found("é_") == [], "the person's characters, not patterns")
    }

    @Test func wordsAreFoundInNotesPlacesAndTypeNamesNewestFirst() async throws {
        let store = try MemoryLocalStore.make()
        let ids = UUIDv7Generator()
        let coffee = EventType(id: ids.next(), name: "Coffee")
        let run = EventType(id: ids.next(), name: "Morning Run")
        try await store.createEventType(coffee)
        try await store.createEventType(run)
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        let events = [
            Event(id: ids.next(), eventTypeId: coffee.id, timestamp: start, notes: "with Sam at the café"),
            Event(id: ids.next(), eventTypeId: coffee.id, timestamp: start + 60, notes: "alone, 100% tired"),
            Event(
                id: ids.next(), eventTypeId: run.id, timestamp: start + 120, sourceType: .geofence,
                geofenceId: ids.next(),
                locationName: "Park"),
            Event(id: ids.next(), eventTypeId: run.id, timestamp: start + 180, notes: "sam_style intervals"),
        ]
        for event in events { try await store.createEvent(event) }
        func found(_ filter: EventFilter) async throws -> [UUIDv7] {
            try await store.eventPage(offset: 0, limit: 10, filter: filter).map(\.value.id)
        }
        #expect(try await found(EventFilter(text: "m_s")) == [events[3].id])
        #expect(try await found(EventFilter(text: "SAM")) == [events[3].id, events[0].id], "any case, newest first")
        #expect(try await found(EventFilter(text: "sam café")) == [events[0].id], "every word is needed")
        #expect(try await found(EventFilter(text: "park")) == [events[2].id], "the place's name")
        #expect(try await found(EventFilter(text: "morning")) == [events[3].id, events[2].id], "the type's name")
        #expect(try await found(EventFilter(text: "100%")) == [events[1].id], "% is a character")
        #expect(try await found(EventFilter(text: "s_m")).isEmpty, "_ is a character, not any one (it would match Sam)")
        #expect(try await found(EventFilter(text: "sam", typeId: coffee.id)) == [events[0].id])
        #expect(try await found(EventFilter(source: .geofence)) == [events[2].id])
        #expect(try await found(EventFilter()).count == 4, "no condition: every event")
        #expect(
            try await store.eventPage(offset: 1, limit: 1, filter: EventFilter(text: "sam")).map(\.value.id) == [
                events[0].id
            ])
    }
}
