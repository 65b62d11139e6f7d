import Foundation
import Testing
import TrendyAuth
import TrendyAuthTesting
import TrendyLogging
import TrendyModels
import TrendySync
import TrendySyncLive
import TrendySyncTesting

@testable import TrendyApp

/// The event use cases the CLI and the app share: each write tells the engine once; a write that
/// did not happen tells it nothing and queues nothing.
@Suite struct EventActionsTests {
    let engine = ScriptedSyncEngine()
    let store: SQLiteLocalStore
    let actions: EventActions
    let coffee = EventType(id: UUIDv7Generator().next(), name: "Coffee")

    init() async throws {
        store = try MemoryLocalStore.make()
        let auth = AuthController(
            store: InMemorySessionStore(nil), gateway: ScriptedAuthGateway(),
            logger: LogSystem.disabled().logger(.auth))
        actions = EventActions(
            env: AppEnvironment.testing(
                paths: AppPaths(dataDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("unused")),
                auth: auth, store: store, sync: engine, reachability: FixedReachability(.reachable)))
        try await store.createEventType(coffee)
    }

    @Test func logChangeAndDeleteEachTellTheEngine() async throws {
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        let event = try await actions.log(typeId: coffee.id, at: at, note: "first")
        #expect(try await store.event(id: event.id)?.value == event && event.timestamp == at)
        let changed = try await actions.change(event.id) { $0.notes = "second" }
        #expect(changed?.notes == "second" && changed?.id == event.id)
        #expect(try await store.event(id: event.id)?.value.notes == "second")
        try await actions.delete(event.id)
        #expect(try await store.event(id: event.id) == nil)
        #expect(engine.localWrites == 3)
    }

    @Test func aWriteThatDidNotHappenTellsNobodyAndQueuesNothing() async throws {
        let pending = try await store.outboxCounts().pending
        let missing = UUIDv7Generator().next()
        #expect(try await actions.change(missing) { $0.notes = "x" } == nil, "nothing to change")
        await #expect(throws: LocalStoreError.self) { try await actions.delete(missing) }
        await #expect(throws: LocalStoreError.self, "an unknown type is refused") {
            _ = try await actions.log(typeId: UUIDv7Generator().next())
        }
        #expect(engine.localWrites == 0)
        #expect(try await store.outboxCounts().pending == pending)
    }
}
