import AsyncHTTPClient
import Foundation
import GRDB
import NIOCore
import Synchronization
import TrendyAPI
import TrendyAPILive
import TrendyAPITesting
import TrendyLogging
import TrendyModels
import TrendyServer
import TrendyServerTestSupport
import TrendySync
import TrendySyncLive
import TrendySyncTesting
import TrendyTestSupport

/// A real server, a signed-in user, an in-memory local database, and an engine whose API calls
/// go through an ``InterceptingAPIClient``.
struct SyncHarness: Sendable {
    let test: RunningTestServer
    var server: TrendyServer { test.server }
    var running: RunningServer { test.running }
    var http: HTTPClient { test.http }
    let api: InterceptingAPIClient
    let direct: LiveTrendyAPIClient
    let store: SQLiteLocalStore
    let engine: OutboxSyncEngine
    let identity: IdentityBox
    let clock: ManualClock
    let ids: UUIDv7Generator
    let userId: String
    let token: String

    /// Every server instance (one unless the harness was made with several).
    let tests: [RunningTestServer]

    /// A harness on one server, or on `instances` servers sharing one PostgreSQL database (the
    /// engine's calls then go to each instance in turn). `batchSize`: the engine's batches, when
    /// a test needs a push of a few hundred events to take several units (D66 made them 500).
    static func with(
        faults: FaultConfiguration = FaultConfiguration(), instances: Int = 1, batchSize: Int? = nil,
        configure: (inout ServerConfiguration) -> Void = { _ in },
        _ body: (SyncHarness) async throws -> Void
    ) async throws {
        var c = ServerConfiguration.testing()
        configure(&c)
        var engine = OutboxSyncEngine.Configuration()
        if let batchSize { engine.batchSize = batchSize }
        if instances > 1 {
            try await RunningTestServer.instances(instances, c) { tests in
                try await run(tests, faults: faults, engine, body)
            }
        } else {
            try await RunningTestServer.with(c) { test in try await run([test], faults: faults, engine, body) }
        }
    }

    private static func run(
        _ tests: [RunningTestServer], faults: FaultConfiguration, _ configuration: OutboxSyncEngine.Configuration,
        _ body: (SyncHarness) async throws -> Void
    ) async throws {
        let test = tests[0]
        let (direct, session) = try await test.signedUpClient()
        let api = InterceptingAPIClient(
            rotatingAmong: tests.map { $0.client(session.accessToken) })
        let clock = ManualClock(Date())
        let store = try memoryStore(now: { clock.now })
        let box = IdentityBox(session.user.id)
        let engine = OutboxSyncEngine(
            store: store, api: api, reachability: testProbe(api), identity: { box.current },
            configuration: configuration, now: { clock.now }, logger: LogSystem.disabled().logger(.sync))
        let h = SyncHarness(
            test: test, api: api, direct: direct, store: store, engine: engine, identity: box, clock: clock,
            ids: UUIDv7Generator(), userId: session.user.id, token: session.accessToken, tests: tests)
        h.setFaults(faults)  // after sign-up: the faults are for the sync traffic
        try await body(h)
    }

    /// Sets the faults of every instance.
    func setFaults(_ faults: FaultConfiguration) {
        for test in tests { test.server.faults.update(faults) }
    }

    /// Seeds every instance's fault dice (each its own stream, from `seed`).
    func seedFaults(_ seed: UInt64) {
        for (i, test) in tests.enumerated() { test.server.faults.seed(seed &+ UInt64(i)) }
    }

    /// Clients for `session`, one per instance.
    func clients(_ session: GoTrueSession) -> [LiveTrendyAPIClient] {
        tests.map { $0.client(session.accessToken) }
    }

    /// The engine's health check with the test budget (``NetworkBudget/forTests(request:)``).
    static func testProbe(_ api: any SyncRemote) -> HealthCheckProbe {
        HealthCheckProbe(api: api, budget: NetworkBudget.forTests().respond)
    }

    /// Another engine for the signed-in user, on `store`, downloading `pageSize` items a page.
    func engine(on store: SQLiteLocalStore, pageSize: Int) -> OutboxSyncEngine {
        var c = OutboxSyncEngine.Configuration()
        c.pageSize = pageSize
        return OutboxSyncEngine(
            store: store, api: api, reachability: Self.testProbe(api), identity: { identity.current },
            configuration: c, now: { clock.now },
            logger: LogSystem.disabled().logger(.sync))
    }

    /// A device of the signed-in user: its store, its client (calls logged, failures scripted)
    /// and its engine.
    struct Device {
        let store: SQLiteLocalStore
        let api: InterceptingAPIClient
        let engine: OutboxSyncEngine
    }

    /// This harness's device.
    var device: Device { Device(store: store, api: api, engine: engine) }

    /// Another device of the signed-in user, on a new in-memory store, on the harness's clock.
    func anotherDevice() throws -> Device {
        let store = try Self.memoryStore(now: { clock.now })
        let api = InterceptingAPIClient(test.client(token))
        let engine = OutboxSyncEngine(
            store: store, api: api, reachability: Self.testProbe(api), identity: { identity.current },
            now: { clock.now }, logger: LogSystem.disabled().logger(.sync))
        return Device(store: store, api: api, engine: engine)
    }

    /// A new account on the server and a client signed in to it.
    func account() async throws -> (LiveTrendyAPIClient, GoTrueSession) {
        try await test.signedUpClient()
    }

    /// A migrated in-memory local store.
    static func memoryStore(now: @escaping @Sendable () -> Date = Date.init) throws -> SQLiteLocalStore {
        try MemoryLocalStore.make(now: now)
    }

    func type(_ name: String = "Coffee") async throws -> EventType {
        let t = EventType(id: ids.next(), name: name)
        try await store.createEventType(t)
        return t
    }

    /// The next call named `name` is refused as invalid (422), as the server refuses a change
    /// it will never take; nothing reaches the server.
    func refuseNext(_ name: String) {
        api.fail(
            name,
            with: .validation(
                issues: [], problem: APIProblem(status: 422, code: "validation_failed", title: "Refused by the test")))
    }

    func event(_ type: EventType, offset: Double = 0, note: String? = nil) -> Event {
        Event(id: ids.next(), eventTypeId: type.id, timestamp: Date().addingTimeInterval(-3_600 + offset), notes: note)
    }

    /// Server-side event ids for the user.
    func serverEventIds() async throws -> Set<String> {
        var ids: Set<String> = []
        var after: String?
        while true {
            let page = try await direct.listEvents(limit: 500, after: after)
            ids.formUnion(page.items.map(\.value.id.description))
            guard page.hasMore, let next = page.next else { return ids }
            after = next
        }
    }

    func localEventIds() async throws -> Set<String> {
        Set(try await store.events(limit: 1_000_000, since: nil).map(\.value.id.description))
    }
}

final class IdentityBox: Sendable {
    let identity: Mutex<String?>
    init(_ user: String?) { identity = Mutex(user) }
    var current: String? { identity.withLock { $0 } }
    func set(_ user: String?) { identity.withLock { $0 = user } }
}
