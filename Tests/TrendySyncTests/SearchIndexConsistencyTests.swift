import Foundation
import GRDB
import Testing
import TrendyAPI
import TrendyLogging
import TrendyModels
import TrendySync
import TrendySyncTesting

@testable import TrendySyncLive

/// Issue 35: pulled pages, downloads and bulk inserts index their events for search in one
/// set-wise pass at the end of the transaction; single writes index row by row. Seeded sequences
/// of both, on events sharing milliseconds, always leave the index exactly what the events say.
@Suite struct SearchIndexConsistencyTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func page(_ events: [Event], deletes: [UUIDv7], cursor: inout Int64) throws -> ChangesPage {
        let page = try #require(serverFeedPage(events, deletes: deletes, from: cursor, operation: "update", at: t0))
        cursor = page.nextCursor
        return page
    }

    /// Every event with text has one key in its millisecond, and the index holds its text under
    /// that key; nothing else is indexed.
    func check(_ queue: DatabaseQueue, seed: UInt64, step: Int) throws {
        try queue.read { db in
            let expected = try Row.fetchAll(
                db, sql: "SELECT id, timestamp_ms, \(SearchIndex.text("new")) AS t FROM local_events AS new")
            var withText = 0
            for row in expected {
                let id: String = row["id"]
                let text: String = row["t"]
                let ms: Int64 = row["timestamp_ms"]
                let keys = try Int64.fetchAll(
                    db, sql: "SELECT key FROM local_event_search WHERE event_id = ?", arguments: [id])
                guard !text.isEmpty else {
                    #expect(keys.isEmpty, "seed \(seed) step \(step): \(id) has no text but is indexed")
                    continue
                }
                withText += 1
                #expect(keys.count == 1, "seed \(seed) step \(step): \(id) has \(keys.count) keys")
                guard let key = keys.first else { continue }
                #expect(key >= ms * 65_536 && key < (ms + 1) * 65_536, "seed \(seed) step \(step): key outside its ms")
                let indexed = try String.fetchOne(
                    db, sql: "SELECT text FROM local_events_fts WHERE rowid = ?", arguments: [key])
                #expect(indexed == text, "seed \(seed) step \(step): \(id) indexed as \(indexed ?? "nothing")")
            }
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM local_event_search") == withText)
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM local_events_fts") == withText)
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM local_search_dirty") == 0)
        }
    }

    /// An install whose merges (before `sync.v12-search-follows-ids`) left entries under ids no
    /// event has, and events no entry finds: the migration mends both.
    @Test func theMigrationMendsWhatEarlierMergesLeft() async throws {
        let queue = try DatabaseQueue()
        var migrator = DatabaseMigrator()
        SyncSchema.register(in: &migrator)
        try migrator.migrate(queue, upTo: "sync.v11-search-deferral")
        let store = SQLiteLocalStore(database: queue, logger: LogSystem.disabled().logger(.data))
        let ids = UUIDv7Generator()
        let type = EventType(id: ids.next(), name: "Coffee")
        try await store.createEventType(type)
        let events = (0..<3).map {
            Event(
                id: ids.next(), eventTypeId: type.id, timestamp: t0 + Double($0),
                notes: ["apple", "banana", "cherry"][$0])
        }
        for event in events { try await store.createEvent(event) }
        let renamed = (new: ids.next().description, old: events[1].id.description)
        try await queue.write { db in
            try db.execute(
                sql: "UPDATE local_events SET id = ?1, body = json_set(body, '$.id', ?1) WHERE id = ?2",
                arguments: [renamed.new, renamed.old])
        }
        try migrator.migrate(queue)
        try check(queue, seed: 0, step: 0)
        let found = try await store.eventPage(offset: 0, limit: 10, filter: EventFilter(text: "banana")).map(\.value.id)
        #expect(found.map(\.description) == [renamed.new])
    }

    @Test(arguments: 1...12 as ClosedRange<UInt64>)
    func seededWritesKeepTheIndexExact(seed: UInt64) async throws {
        var rng = SplitMix64(seed: seed)
        let (store, queue) = try MemoryLocalStore.makeWithDatabase()
        let ids = UUIDv7Generator()
        let type = EventType(id: ids.next(), name: "Coffee")
        try await store.createEventType(type)
        var known: [Event] = []
        var cursor: Int64 = 0
        let words = ["café with Sam", "tired", "", "intervals", "same words", "café with Sam"]
        func draw() -> Event {
            // Four milliseconds only: events share them, so keys take slots in each.
            var event = Event(
                id: ids.next(), eventTypeId: type.id,
                timestamp: t0.addingTimeInterval(Double(Int.random(in: 0..<4, using: &rng)) / 1000),
                notes: words.randomElement(using: &rng).flatMap { $0.isEmpty ? nil : $0 })
            if Bool.random(using: &rng) { event.locationName = "Park \(Int.random(in: 0..<3, using: &rng))" }
            return event
        }
        func changed(_ event: Event) -> Event {
            var e = event
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: e.notes = words.randomElement(using: &rng).flatMap { $0.isEmpty ? nil : $0 }
            case 1: e.timestamp = t0.addingTimeInterval(Double(Int.random(in: 0..<4, using: &rng)) / 1000)
            case 2: e.locationName = nil
            default: break  // the same event again: an echo
            }
            return e
        }
        for step in 0..<25 {
            switch Int.random(in: 0..<6, using: &rng) {
            case 5:
                // A merge: this device's copy takes the server's id (an outsider found search lost
                // the event until a pull came), alone or inside a pulled page's transaction.
                guard let event = known.randomElement(using: &rng) else { continue }
                var merged = event
                merged.id = ids.next()
                let deferred = Bool.random(using: &rng)
                let ids = (new: merged.id.description, old: event.id.description)
                try await queue.write { db in
                    let rename = {
                        try db.execute(
                            sql: "UPDATE local_events SET id = ?1, body = json_set(body, '$.id', ?1) WHERE id = ?2",
                            arguments: [ids.new, ids.old])
                    }
                    if deferred { try SearchIndex.deferring(db, rename) } else { try rename() }
                }
                known.removeAll { $0.id == event.id }
                known.append(merged)
            case 0, 1:
                // A pulled page: new events, changed and unchanged known ones, deletes.
                var events = (0..<Int.random(in: 1..<12, using: &rng)).map { _ in draw() }
                for _ in 0..<min(known.count, Int.random(in: 0..<8, using: &rng)) {
                    events.append(changed(known.randomElement(using: &rng)!))
                }
                let deletes = known.isEmpty ? [] : [known.randomElement(using: &rng)!.id]
                _ = try await store.apply(try page(events, deletes: deletes, cursor: &cursor))
                for event in events {
                    known.removeAll { $0.id == event.id }
                    known.append(event)
                }
                known.removeAll { deletes.contains($0.id) }
            case 2:
                let events = (0..<Int.random(in: 1..<20, using: &rng)).map { _ in draw() }
                _ = try await store.insertEvents(events)
                known += try await events.asyncFilter { try await store.event(id: $0.id) != nil }
            case 3:
                // A log here; one at a taken time is refused and changes nothing.
                let event = draw()
                if (try? await store.createEvent(event)) != nil { known.append(event) }
            default:
                guard let event = known.randomElement(using: &rng) else { continue }
                if Bool.random(using: &rng) {
                    let edited = changed(event)
                    if (try? await store.updateEvent(edited)) != nil {
                        known.removeAll { $0.id == event.id }
                        known.append(edited)
                    }
                } else {
                    try await store.deleteEvent(id: event.id)
                    known.removeAll { $0.id == event.id }
                }
            }
            try check(queue, seed: seed, step: step)
        }
        let found = try await store.eventPage(offset: 0, limit: 1_000, filter: EventFilter(text: "café")).map(
            \.value.id)
        // Against what the store holds (a waiting local change wins over a pulled one).
        let expected = try await store.events(limit: 1_000, since: nil).map(\.value)
            .filter { $0.notes?.contains("café") == true }
        #expect(!expected.isEmpty)
        #expect(Set(found) == Set(expected.map(\.id)), "seed \(seed): search finds exactly the café events")
    }
}

extension Array {
    fileprivate func asyncFilter(_ keep: (Element) async throws -> Bool) async rethrows -> [Element] {
        var kept: [Element] = []
        for element in self where try await keep(element) { kept.append(element) }
        return kept
    }
}
