import AsyncHTTPClient
import Foundation
import GRDB
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyLogging
import TrendyModels
import TrendyServer
import TrendySync
import TrendySyncLive

/// Fifty clients syncing against one server at the same time (the bounded version of
/// `trendy-bench load`): every pass succeeds and every account ends up with exactly its events.
@Suite(.timeLimit(.minutes(3)))
struct LoadTests {
    @Test func fiftyClientsSyncingAtOnceAllConvergeWithoutErrors() async throws {
        var c = ServerConfiguration()
        c.port = 0
        c.databasePath = nil
        c.bcryptCost = 4
        c.jwtSecret = String(repeating: "z", count: 40)
        c.authRateLimit = RateLimit(capacity: 10_000, refillPerSecond: 1_000)
        let server = try await TrendyServer(configuration: c, logs: LogSystem.disabled())
        let running = try await server.start()
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            try await converge(running, http)
        } catch {
            try? await http.shutdown()
            await running.stop()
            throw error
        }
        try await http.shutdown()
        await running.stop()
    }

    func converge(_ running: RunningServer, _ http: HTTPClient) async throws {
        let perClient = 30
        var clients: [(LiveTrendyAPIClient, OutboxSyncEngine, Set<String>)] = []
        for _ in 0..<50 {
            let session = try await SyncHarness.signUp(http, running.baseURL)
            let api = LiveTrendyAPIClient(
                configuration: .init(baseURL: running.baseURL, timeout: .seconds(60)), http: http,
                tokens: StaticTokenProvider(session.accessToken), logger: LogSystem.disabled().logger(.api))
            let queue = try DatabaseQueue()
            var migrator = DatabaseMigrator()
            SyncSchema.register(in: &migrator)
            try migrator.migrate(queue)
            let store = SQLiteLocalStore(database: queue, logger: LogSystem.disabled().logger(.data))
            _ = try await store.claim(for: session.user.id)
            let ids = UUIDv7Generator()
            let type = EventType(id: ids.next(), name: "Load")
            try await store.createEventType(type)
            let events = (0..<perClient).map {
                Event(id: ids.next(), eventTypeId: type.id, timestamp: Date().addingTimeInterval(Double(-$0)))
            }
            _ = try await store.insertEvents(events)
            let user = session.user.id
            let engine = OutboxSyncEngine(
                store: store, api: api, identity: { user }, logger: LogSystem.disabled().logger(.sync))
            clients.append((api, engine, Set(events.map(\.id.description))))
        }
        let outcomes = await withTaskGroup(of: String.self) { group in
            for (_, engine, _) in clients { group.addTask { await engine.sync(full: false).outcome } }
            return await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(outcomes.allSatisfy { $0 == "ok" }, "\(outcomes.filter { $0 != "ok" })")
        for (api, _, ids) in clients {
            let page = try await api.listEvents(limit: 500, offset: 0)
            #expect(Set(page.items.map(\.value.id.description)) == ids)
        }
    }
}
