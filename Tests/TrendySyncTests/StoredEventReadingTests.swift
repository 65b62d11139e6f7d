import Foundation
import Testing
import TrendyModels
import TrendySync
import TrendySyncTesting

@testable import TrendySyncLive

/// Stored event bodies are read with the wire format's fast reader; whatever it reads must be
/// exactly what `JSONDecoder` reads, and what it does not take falls back to the decoder.
struct StoredEventReadingTests {
    static func variety() -> [Event] {
        let ids = UUIDv7Generator()
        let type = ids.next()
        let t0 = Date(timeIntervalSince1970: 1_790_000_000.123)
        return [
            Event(id: ids.next(), eventTypeId: type, timestamp: t0),
            Event(
                id: ids.next(), eventTypeId: type, timestamp: t0 + 1, endDate: t0.addingTimeInterval(90.5),
                notes: "line\nbreak \"quoted\" \\ ☕️ \t\r", isAllDay: true, sourceType: .imported,
                externalId: "ext-1", geofenceId: ids.next(), location: Coordinate(latitude: -33.86, longitude: 151.2),
                locationName: "Café \"Zoë\""),
            Event(
                id: ids.next(), eventTypeId: type, timestamp: t0, notes: "", sourceType: .geofence,
                geofenceId: ids.next()),
            Event(
                id: ids.next(), eventTypeId: type, timestamp: t0 + 2,
                properties: ["mood": .text("good"), "km": .number(5.2), "done": .boolean(true)]),
        ]
    }

    @Test func theFastReaderReadsWhatTheDecoderReads() throws {
        for event in Self.variety() {
            let body = try SQLiteLocalStore.encode(event)
            let decoded = try SQLiteLocalStore.decode(Event.self, body)
            #expect(decoded == event)
            if event.properties.isEmpty {
                #expect(SQLiteLocalStore.scanEvent(body) == decoded)
            } else {
                #expect(SQLiteLocalStore.scanEvent(body) == nil)
            }
        }
        #expect(SQLiteLocalStore.scanEvent("{\"id\": 1}") == nil)
        #expect(SQLiteLocalStore.scanEvent("") == nil)
    }

    @Test func eventsWrittenHereReadBackTheSame() async throws {
        let store = try MemoryLocalStore.make()
        let events = Self.variety()
        try await store.createEventType(EventType(id: events[0].eventTypeId, name: "T"))
        for event in events { try await store.createEvent(event) }
        let read = try await store.events(limit: 10, since: nil).map(\.value)
        #expect(Set(read) == Set(events))
        for event in events { #expect(try await store.event(id: event.id)?.value == event) }
    }
}
