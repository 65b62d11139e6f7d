import Foundation
import GRDB
import Synchronization
import Testing
import TrendyAPI
import TrendyLogging
import TrendyModels
import TrendySync
import TrendySyncLive

/// A download into a store with no events takes the event indexes down and builds them once at
/// the end, whatever happens; a store that has events keeps them.
@Suite struct BulkLoadTests {
    /// The index statements a freshly migrated store has.
    static func indexSQL(_ db: some DatabaseReader) throws -> [String] {
        try db.read { db in
            try String.fetchAll(
                db,
                sql:
                    "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'local_events' AND sql IS NOT NULL ORDER BY name"
            )
        }
    }

    /// An engine on `store` with small pages, talking to the harness's server.
    func engine(_ h: SyncHarness, _ store: SQLiteLocalStore) -> OutboxSyncEngine {
        var c = OutboxSyncEngine.Configuration()
        c.pageSize = 50
        return OutboxSyncEngine(
            store: store, api: h.api, identity: { h.identity.current }, configuration: c, now: { h.clock.now },
            logger: LogSystem.disabled().logger(.sync))
    }

    /// `n` events another device wrote.
    func remoteEvents(_ h: SyncHarness, _ n: Int) async throws -> [Event] {
        let type = try await h.direct.createEventType(
            EventTypeCreate(id: h.ids.next(), name: "Remote \(h.ids.next())"), idempotencyKey: nil)
        let events = (0..<n).map {
            // Out of time order, as an imported history arrives.
            Event(
                id: h.ids.next(), eventTypeId: type.value.id,
                timestamp: Date().addingTimeInterval(-Double(($0 * 7_919) % n) * 60))
        }
        _ = try await h.direct.createEvents(events, idempotencyKey: nil)
        return events
    }

    /// Records, before each call named `name`, whether the store had its event indexes down.
    func watch(_ h: SyncHarness, _ name: String, _ store: SQLiteLocalStore) -> Seen {
        let seen = Seen()
        h.api.observe(name) { _ in
            let down = (try? await store.bulkLoading()) ?? false
            seen.values.withLock { $0.append(down) }
            return nil
        }
        return seen
    }

    final class Seen: Sendable {
        let values = Mutex<[Bool]>([])
        var all: [Bool] { values.withLock { $0 } }
    }

    @Test func aFreshDeviceBootstrapsWithTheIndexesDownAndBuildsThemAtTheEnd() async throws {
        try await SyncHarness.with { h in
            let remote = try await remoteEvents(h, 130)
            let (store, database) = try SyncHarness.memoryDatabaseStore()
            let expected = try Self.indexSQL(database)
            #expect(expected.count == 2)
            let seen = watch(h, "listEvents", store)
            let remembered = Seen()
            h.api.observe("listEvents") { _ in
                let down = (try? await store.bulkLoading()) ?? false
                seen.values.withLock { $0.append(down) }
                // Began on a store without events: nothing to remember for the end's clean-up.
                let events = try? await database.read { db in
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM bootstrap_seen WHERE entity = 'event'")
                }
                remembered.values.withLock { $0.append(events == 0) }
                return nil
            }
            #expect(await engine(h, store).sync(full: false).outcome == "ok")
            // The first page decides (more than a page is coming); the rest arrive with the indexes down.
            #expect(seen.all == [false, true, true])
            #expect(remembered.all == [true, true, true])
            #expect(try await store.bulkLoading() == false)
            #expect(try Self.indexSQL(database) == expected)
            let local = try await store.events(limit: 1_000, since: nil)
            #expect(Set(local.map(\.value.id)) == Set(remote.map(\.id)))
            // Newest first, as the time index orders them, and the first screen uses it.
            #expect(local.map(\.value.timestamp) == local.map(\.value.timestamp).sorted(by: >))
            let plan = try await database.read { db in
                try Row.fetchAll(
                    db,
                    sql: "EXPLAIN QUERY PLAN SELECT id FROM local_events ORDER BY timestamp_ms DESC, id DESC LIMIT 50"
                ).map { $0["detail"] as String? ?? "" }
            }
            #expect(plan.contains { $0.contains("local_events_time") })
        }
    }

    @Test func aFreshDeviceReadingTheFeedAlsoLoadsInBulk() async throws {
        try await SyncHarness.with { h in
            let remote = try await remoteEvents(h, 120)
            let (store, database) = try SyncHarness.memoryDatabaseStore()
            let expected = try Self.indexSQL(database)
            try await store.setCursor(0, force: true)
            let seen = watch(h, "changes", store)
            #expect(await engine(h, store).sync(full: false).outcome == "ok")
            let calls = seen.all
            #expect(calls.first == false)
            #expect(calls.count >= 3)
            #expect(calls.dropFirst().allSatisfy { $0 })
            #expect(try Self.indexSQL(database) == expected)
            let local = try await store.events(limit: 1_000, since: nil)
            #expect(Set(local.map(\.value.id)) == Set(remote.map(\.id)))
        }
    }

    @Test func aStoreWithEventsKeepsItsIndexes() async throws {
        try await SyncHarness.with { h in
            let (store, database) = try SyncHarness.memoryDatabaseStore()
            let engine = engine(h, store)
            let type = EventType(id: h.ids.next(), name: "Own")
            try await store.createEventType(type)
            try await store.createEvent(Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Date()))
            #expect(await engine.sync(full: false).outcome == "ok")
            _ = try await remoteEvents(h, 120)
            let seen = watch(h, "changes", store)
            #expect(await engine.sync(full: false).outcome == "ok")
            #expect(!seen.all.contains(true))
            let listed = watch(h, "listEvents", store)
            #expect(await engine.sync(full: true).outcome == "ok")
            let listCalls = listed.all
            #expect(!listCalls.isEmpty)
            #expect(!listCalls.contains(true))
            #expect(try Self.indexSQL(database).count == 2)
            #expect(try await store.events(limit: 1_000, since: nil).count == 121)
        }
    }

    @Test func aDownloadFailingMidwayBuildsTheIndexesAndKeepsWhatItApplied() async throws {
        try await SyncHarness.with { h in
            let remote = try await remoteEvents(h, 160)
            let (store, database) = try SyncHarness.memoryDatabaseStore()
            let expected = try Self.indexSQL(database)
            try await store.setCursor(0, force: true)
            h.api.observe("changes") { number in number == 3 ? .transport(.timedOut) : nil }
            let engine = engine(h, store)
            #expect(await engine.sync(full: false).outcome == "error")
            #expect(try await store.bulkLoading() == false)
            #expect(try Self.indexSQL(database) == expected)
            // Two pages of 50 applied (the event type's change is in the first), cursor after them.
            let kept = try await store.events(limit: 1_000, since: nil).count
            #expect(kept == 99)
            let cursor = try #require(try await store.cursor())
            #expect(cursor > 0)
            h.api.observe("changes") { _ in nil }
            h.clock.advance(60)
            #expect(await engine.sync(full: false).outcome == "ok")
            #expect(Set(try await store.events(limit: 1_000, since: nil).map(\.value.id)) == Set(remote.map(\.id)))
            #expect(try Self.indexSQL(database) == expected)
        }
    }

    @Test func aBootstrapFailingMidwayBuildsTheIndexesAndTheNextPassFinishesIt() async throws {
        try await SyncHarness.with { h in
            let remote = try await remoteEvents(h, 140)
            let (store, database) = try SyncHarness.memoryDatabaseStore()
            let expected = try Self.indexSQL(database)
            // The second page fails while the first is being stored (it was requested ahead).
            h.api.observe("listEvents") { number in number == 2 ? .transport(.timedOut) : nil }
            let engine = engine(h, store)
            #expect(await engine.sync(full: false).outcome == "error")
            #expect(try await store.bulkLoading() == false)
            #expect(try Self.indexSQL(database) == expected)
            #expect(try await store.cursor() == nil)
            h.api.observe("listEvents") { _ in nil }
            h.clock.advance(60)
            #expect(await engine.sync(full: false).outcome == "ok")
            #expect(Set(try await store.events(limit: 1_000, since: nil).map(\.value.id)) == Set(remote.map(\.id)))
            #expect(try await store.cursor() != nil)
            #expect(try Self.indexSQL(database) == expected)
        }
    }

    @Test func indexesACrashLeftDownAreBuiltByTheNextPull() async throws {
        try await SyncHarness.with { h in
            let (store, database) = try SyncHarness.memoryDatabaseStore()
            let expected = try Self.indexSQL(database)
            let type = EventType(id: h.ids.next(), name: "Own")
            try await store.createEventType(type)
            try await store.createEvent(Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Date()))
            // A store with events does not start a bulk load...
            #expect(try await store.beginBulkLoad() == .notStarted)
            // ...but one a crash interrupted (indexes gone, rows there) is continued and ended.
            try await database.write { db in
                try db.execute(sql: "DROP INDEX local_events_time; DROP INDEX local_events_type_time")
            }
            #expect(try await store.bulkLoading())
            #expect(try await store.beginBulkLoad() == .continued)
            #expect(await engine(h, store).sync(full: false).outcome == "ok")
            #expect(try await store.bulkLoading() == false)
            #expect(try Self.indexSQL(database) == expected)
            #expect(try await h.serverEventIds().count == 1)
        }
    }
}
