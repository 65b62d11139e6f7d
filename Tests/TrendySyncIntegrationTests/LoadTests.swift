import Foundation
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyLogging
import TrendyModels
import TrendySync
import TrendySyncLive

/// Fifty clients syncing against one server at the same time (the bounded version of
/// `trendy-bench load`): every pass succeeds and every account ends up with exactly its events.
@Suite(.timeLimit(.minutes(5)))
struct LoadTests {
    @Test func fiftyClientsSyncingAtOnceAllConvergeWithoutErrors() async throws {
        try await SyncHarness.with { h in
            let perClient = 30
            var clients: [(LiveTrendyAPIClient, OutboxSyncEngine, Set<String>)] = []
            for _ in 0..<50 {
                let (api, session) = try await h.account()
                let store = try SyncHarness.memoryStore()
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
                    store: store, api: api, reachability: SyncHarness.testProbe(api), identity: { user },
                    logger: LogSystem.disabled().logger(.sync))
                clients.append((api, engine, Set(events.map(\.id.description))))
            }
            let outcomes = await withTaskGroup(of: SyncOutcome.self) { group in
                for (_, engine, _) in clients { group.addTask { await engine.sync(full: false).outcome } }
                return await group.reduce(into: [SyncOutcome]()) { $0.append($1) }
            }
            #expect(outcomes.allSatisfy { $0 == .ok }, "\(outcomes.filter { $0 != .ok })")
            for (api, _, ids) in clients {
                let page = try await api.listEvents(limit: 500, offset: 0)
                #expect(Set(page.items.map(\.value.id.description)) == ids)
            }
        }
    }
}
