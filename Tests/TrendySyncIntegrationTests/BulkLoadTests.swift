import Foundation
import GRDB
import Synchronization
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyAPITesting
import TrendyLogging
import TrendyModels
import TrendySync
import TrendySyncLive
import TrendySyncTesting
import TrendyTestSupport

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

    /// Records, before each call named `name`, whether the store had its event indexes down and
    /// how many event ids the bootstrap had remembered for its clean-up; `fail` may fail a call.
    func watch(
        _ h: SyncHarness, _ name: String, _ store: SQLiteLocalStore, _ database: some DatabaseReader,
        fail: @escaping @Sendable (Int) async -> TrendyAPIError? = { _ in nil }
    ) -> Seen {
        let seen = Seen()
        h.api.observe(name) { number in
            let down = (try? await store.bulkLoading()) ?? false
            let counts = try? await database.read { db in
                (
                    try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM bootstrap_seen WHERE entity = 'event'") ?? 0,
                    try Int.fetchOne(
                        db,
                        sql: "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'local_events_time'")
                        ?? 0
                )
            }
            seen.values.withLock { $0.append((down, counts?.0 ?? 0, counts?.1 == 1)) }
            return await fail(number)
        }
        return seen
    }

    /// Stops interfering with `call`; the next pass (a minute later) ends well, with every remote
    /// event stored, no load under way and the event indexes as the migration made them.
    func nextPassFinishes(
        _ h: SyncHarness, _ call: String, _ engine: OutboxSyncEngine, _ store: SQLiteLocalStore,
        _ database: some DatabaseReader, _ remote: [Event], _ expected: [String]
    ) async throws {
        h.api.observe(call) { _ in nil }
        h.clock.advance(60)
        #expect(await engine.sync(full: false).outcome == .ok)
        #expect(Set(try await store.events(limit: 1_000, since: nil).map(\.value.id)) == Set(remote.map(\.id)))
        #expect(try await store.bulkLoading() == false)
        #expect(try Self.indexSQL(database) == expected)
    }

    final class Seen: Sendable {
        let values = Mutex<[(down: Bool, remembered: Int, timeIndex: Bool)]>([])
        /// Whether a bulk load had indexes down, call by call.
        var down: [Bool] { values.withLock { $0.map(\.down) } }
        /// Event ids remembered for the bootstrap's clean-up, call by call.
        var remembered: [Int] { values.withLock { $0.map(\.remembered) } }
        /// Whether the first screen's index was up, call by call.
        var timeIndex: [Bool] { values.withLock { $0.map(\.timeIndex) } }
    }

    @Test func aFreshDeviceBootstrapsWithTheIndexesDownAndBuildsThemAtTheEnd() async throws {
        try await SyncHarness.with { h in
            let remote = try await remoteEvents(h, 130)
            let (store, database) = try MemoryLocalStore.makeWithDatabase()
            let expected = try Self.indexSQL(database)
            #expect(expected.count == 2)
            let seen = watch(h, "listEvents", store, database)
            #expect(await h.engine(on: store, pageSize: 50).sync(full: false).outcome == .ok)
            // The first page decides (more than a page is coming); the rest arrive with the type/time
            // index down. The listing comes newest first, the time index's own order: it stays up,
            // so the first screen is indexed all through a new device's download.
            #expect(seen.down == [false, true, true])
            #expect(seen.timeIndex == [true, true, true])
            // Began on a store without events: no event id remembered for the end's clean-up.
            #expect(seen.remembered == [0, 0, 0])
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
            // Each event's row holds its JSON as the server listed it (not encoded again).
            let listed = try await h.direct.listEvents(limit: 500, after: nil)
            let bodies = try await database.read { db in try String.fetchAll(db, sql: "SELECT body FROM local_events") }
            #expect(Set(bodies) == Set(try #require(listed.itemsJSON)))
        }
    }

    @Test func aFreshDeviceReadingTheFeedAlsoLoadsInBulk() async throws {
        try await SyncHarness.with { h in
            let remote = try await remoteEvents(h, 120)
            let (store, database) = try MemoryLocalStore.makeWithDatabase()
            let expected = try Self.indexSQL(database)
            try await store.setCursor(0, force: true)
            let seen = watch(h, "changes", store, database)
            #expect(await h.engine(on: store, pageSize: 50).sync(full: false).outcome == .ok)
            let calls = seen.down
            #expect(calls.first == false)
            #expect(calls.count >= 3)
            #expect(calls.dropFirst().allSatisfy { $0 })
            // The feed arrives in change order, not time order: the time index comes down too.
            #expect(seen.timeIndex.dropFirst().allSatisfy { !$0 })
            #expect(try Self.indexSQL(database) == expected)
            let local = try await store.events(limit: 1_000, since: nil)
            #expect(Set(local.map(\.value.id)) == Set(remote.map(\.id)))
        }
    }

    @Test func aStoreWithEventsKeepsItsIndexes() async throws {
        try await SyncHarness.with { h in
            let (store, database) = try MemoryLocalStore.makeWithDatabase()
            let engine = h.engine(on: store, pageSize: 50)
            let type = EventType(id: h.ids.next(), name: "Own")
            try await store.createEventType(type)
            try await store.createEvent(Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Date()))
            #expect(await engine.sync(full: false).outcome == .ok)
            _ = try await remoteEvents(h, 120)
            let seen = watch(h, "changes", store, database)
            #expect(await engine.sync(full: false).outcome == .ok)
            #expect(!seen.down.contains(true))
            let listed = watch(h, "listEvents", store, database)
            #expect(await engine.sync(full: true).outcome == .ok)
            #expect(!listed.down.isEmpty)
            #expect(!listed.down.contains(true))
            // A full resync of a store with events remembers them all, for the clean-up.
            #expect((listed.remembered.last ?? 0) >= 50)
            #expect(try Self.indexSQL(database).count == 2)
            #expect(try await store.events(limit: 1_000, since: nil).count == 121)
        }
    }

    /// Derived tables that cannot be built at a load's end (D63) do not fail the load: the
    /// indexes come back and pulls go on; the derived tables wait for an open to mend them.
    @Test func derivedTablesThatCannotBeBuiltDoNotFailTheLoad() async throws {
        try await SyncHarness.with { h in
            let database = try DatabaseQueue()
            var migrator = DatabaseMigrator()
            SyncSchema.register(in: &migrator)
            try migrator.migrate(database)
            let broken = DerivedFromEvents(
                begin: "CREATE TABLE derived_down (x)",
                end: "DROP TABLE derived_down; INSERT INTO no_such_table VALUES (1)",
                present: "SELECT NOT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'derived_down')")
            let store = SQLiteLocalStore(
                database: database, derived: [broken], logger: LogSystem.disabled().logger(.data))
            _ = try await store.claim(for: h.userId)
            _ = try await remoteEvents(h, 120)
            let engine = h.engine(on: store, pageSize: 50)
            #expect(await engine.sync(full: false).outcome == .ok)
            #expect(try await store.bulkLoading() == false, "the indexes are back")
            #expect(try Self.indexSQL(database).count == 2)
            #expect(try await store.events(limit: 1_000, since: nil).count == 120)
            #expect(
                try await database.read { try Bool.fetchOne($0, sql: broken.present) } == false,
                "the failed build was rolled back: still down, for an open to mend")
        }
    }

    @Test func aDownloadFailingMidwayBuildsTheIndexesAndKeepsWhatItApplied() async throws {
        try await SyncHarness.with { h in
            let remote = try await remoteEvents(h, 160)
            let (store, database) = try MemoryLocalStore.makeWithDatabase()
            let expected = try Self.indexSQL(database)
            try await store.setCursor(0, force: true)
            h.api.observe("changes") { number in number == 3 ? .transport(.timedOut) : nil }
            let engine = h.engine(on: store, pageSize: 50)
            #expect(await engine.sync(full: false).outcome == .waiting)
            #expect(h.api.calls("changes").map(\.failed) == [false, false, true])
            #expect(try await store.bulkLoading() == false)
            #expect(try Self.indexSQL(database) == expected)
            // Two pages of 50 applied (the event type's change is in the first), cursor after them.
            let kept = try await store.events(limit: 1_000, since: nil).count
            #expect(kept == 99)
            let cursor = try #require(try await store.cursor())
            #expect(cursor > 0)
            try await nextPassFinishes(h, "changes", engine, store, database, remote, expected)
        }
    }

    @Test func aBootstrapFailingMidwayBuildsTheIndexesAndTheNextPassFinishesIt() async throws {
        try await SyncHarness.with { h in
            let remote = try await remoteEvents(h, 140)
            let (store, database) = try MemoryLocalStore.makeWithDatabase()
            let expected = try Self.indexSQL(database)
            // The second page fails while the first is being stored (it was requested ahead).
            h.api.observe("listEvents") { number in number == 2 ? .transport(.timedOut) : nil }
            let engine = h.engine(on: store, pageSize: 50)
            #expect(await engine.sync(full: false).outcome == .waiting)
            #expect(try await store.bulkLoading() == false)
            #expect(try Self.indexSQL(database) == expected)
            #expect(try await store.cursor() == nil)
            try await nextPassFinishes(h, "listEvents", engine, store, database, remote, expected)
            #expect(try await store.cursor() != nil)
        }
    }

    @Test func anIndexBuildThatFailsLeavesTheLoadToTheNextPull() async throws {
        try await SyncHarness.with { h in
            let remote = try await remoteEvents(h, 120)
            let (store, database) = try MemoryLocalStore.makeWithDatabase()
            let expected = try Self.indexSQL(database)
            try await store.setCursor(0, force: true)
            // While the indexes are down, a view takes the time index's name: building it fails.
            _ = watch(h, "changes", store, database) { number in
                guard number == 2 else { return nil }
                try? await database.write { db in try db.execute(sql: "CREATE VIEW local_events_time AS SELECT 1") }
                return nil
            }
            let engine = h.engine(on: store, pageSize: 50)
            let failed = await engine.sync(full: false)
            #expect(failed.outcome == .error)
            #expect(failed.error?.contains("local_events_time") == true)
            // Everything downloaded is kept; the indexes stay down, and reads still work.
            #expect(try await store.bulkLoading())
            #expect(Set(try await store.events(limit: 1_000, since: nil).map(\.value.id)) == Set(remote.map(\.id)))
            try await database.write { db in try db.execute(sql: "DROP VIEW local_events_time") }
            try await nextPassFinishes(h, "changes", engine, store, database, remote, expected)
        }
    }

    /// A feed's load takes both indexes down, a bootstrap's only the type/time one.
    @Test(arguments: [["local_events_time", "local_events_type_time"], ["local_events_type_time"]])
    func indexesACrashLeftDownAreBuiltByTheNextPull(down: [String]) async throws {
        try await SyncHarness.with { h in
            let (store, database) = try MemoryLocalStore.makeWithDatabase()
            let expected = try Self.indexSQL(database)
            let type = EventType(id: h.ids.next(), name: "Own")
            try await store.createEventType(type)
            try await store.createEvent(Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Date()))
            // A store with events does not start a bulk load...
            #expect(try await store.beginBulkLoad() == .notStarted)
            // ...but one a crash interrupted (indexes gone, rows there) is continued and ended.
            try await database.write { db in
                for index in down { try db.execute(sql: "DROP INDEX \(index)") }
            }
            #expect(try await store.bulkLoading())
            #expect(try await store.beginBulkLoad() == .continued)
            #expect(await h.engine(on: store, pageSize: 50).sync(full: false).outcome == .ok)
            #expect(try await store.bulkLoading() == false)
            #expect(try Self.indexSQL(database) == expected)
            #expect(try await h.serverEventIds().count == 1)
        }
    }
}
