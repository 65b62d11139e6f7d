import Foundation
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyAPITesting
import TrendyModels
import TrendyServer
import TrendyServerTestSupport
import TrendySync
import TrendySyncLive
import TrendyTestSupport

/// The real engine against the real server with faults on: 5xx, latency with jitter, 429 bursts
/// dropped connections, and answers cut off after the server did the work. Every event created
/// locally must end up on the server exactly once.
@Suite(.timeLimit(.minutes(5)))
struct FaultConvergenceTests {
    /// 20 % 5xx, latency with jitter, 5 % dropped connections, `cutRate` of requests carried out
    /// and then cut before the answer, and a burst of three 429s.
    static func hostile(cutRate: Double) -> FaultConfiguration {
        var faults = FaultConfiguration()
        faults.errorRate = 0.2
        faults.latencyMilliseconds = 2
        faults.jitterMilliseconds = 10
        faults.dropRate = 0.05
        faults.cutRate = cutRate
        faults.forced429Count = 3
        faults.retryAfterSeconds = 1
        return faults
    }

    /// One server; with PostgreSQL, also two instances that the engine's calls alternate between.
    static var instanceCounts: [Int] { TestDatabase.url == nil ? [1] : [1, 2] }

    @Test(arguments: instanceCounts)
    func everyLocalEventReachesTheServerExactlyOnce(instances: Int) async throws {
        // Batches of 50: several units in flight, pipelined, under the faults (D66 made them 500).
        try await SyncHarness.with(faults: Self.hostile(cutRate: 0.05), instances: instances, batchSize: 50) { h in
            let types = [try await h.type("Run"), try await h.type("Tea")]
            var created: [Event] = []
            for i in 0..<400 {
                created.append(h.event(types[i % 2], offset: Double(i)))
            }
            _ = try await h.store.insertEvents(Array(created[0..<300]))
            var passes = 0
            var requests = 0
            while passes < 300 {
                passes += 1
                if passes == 5 {
                    // Writes keep arriving while syncing.
                    _ = try await h.store.insertEvents(Array(created[300...]))
                }
                let run = await h.engine.sync(full: false)
                requests = h.api.calls.count
                let counts = try await h.store.outboxCounts()
                if counts.failed > 0 { _ = try await h.store.retryFailed() }
                if run.outcome == .ok, counts.pending == 0, counts.failed == 0, passes > 5 { break }
                h.clock.advance(65)  // past any backoff or breaker wait
            }
            #expect(passes < 300, "did not converge")
            // The forced 429s alone guarantee failed passes; the history keeps the last 10.
            let history = try await h.engine.history()
            #expect(passes > 10 || history.contains { $0.outcome != .ok }, "the faults never fired")
            h.setFaults(FaultConfiguration())  // verify without faults
            let server = try await h.serverEventIds()
            #expect(server == Set(created.map(\.id.description)))
            #expect(try await h.direct.syncSummary().eventCount == 400)
            #expect(try await h.localEventIds() == server)
            // Bounded work: no retry storm (400 events in batches of 50 is 8 requests without faults).
            #expect(requests < 400, "too many requests: \(requests)")
        }
    }

    /// Edits and deletes made between passes under the same faults: the server and the device
    /// end with the same events holding the same notes — the last edit of each, none lost, none
    /// re-applied over a later one, nothing deleted coming back.
    @Test(arguments: instanceCounts)
    func editsAndDeletesUnderFaultsConverge(instances: Int) async throws {
        try await SyncHarness.with(faults: Self.hostile(cutRate: 0.1), instances: instances, batchSize: 50) { h in
            let type = try await h.type("Run")
            var events = (0..<120).map { h.event(type, offset: Double($0), note: "v0") }
            _ = try await h.store.insertEvents(events)
            var deleted: Set<String> = []
            var passes = 0
            while passes < 300 {
                passes += 1
                if passes <= 12, passes % 3 == 0 {
                    // Every third pass, the person edits a third of what is left and deletes a few.
                    for i in stride(from: passes % 4, to: events.count, by: 3) {
                        events[i].notes = "v\(passes)"
                        try await h.store.updateEvent(events[i])
                    }
                    for _ in 0..<5 {
                        let gone = events.removeLast()
                        try await h.store.deleteEvent(id: gone.id)
                        deleted.insert(gone.id.description)
                    }
                }
                let run = await h.engine.sync(full: false)
                let counts = try await h.store.outboxCounts()
                if counts.failed > 0 { _ = try await h.store.retryFailed() }
                if run.outcome == .ok, counts.pending == 0, counts.failed == 0, passes > 12 { break }
                h.clock.advance(65)
            }
            #expect(passes < 300, "did not converge")
            h.setFaults(FaultConfiguration())
            #expect(await h.engine.sync(full: false).outcome == .ok)
            var onServer: [String: String] = [:]
            var after: String?
            repeat {
                let page = try await h.direct.listEvents(limit: 500, after: after)
                for item in page.items { onServer[item.value.id.description] = item.value.notes ?? "" }
                after = page.hasMore ? page.next : nil
            } while after != nil
            let expected = Dictionary(uniqueKeysWithValues: events.map { ($0.id.description, $0.notes ?? "") })
            #expect(onServer == expected)
            #expect(onServer.keys.allSatisfy { !deleted.contains($0) })
            let local = try await h.store.events(limit: 1_000, since: nil)
            #expect(
                Dictionary(uniqueKeysWithValues: local.map { ($0.value.id.description, $0.value.notes ?? "") })
                    == expected)
            #expect(local.allSatisfy { $0.syncStatus == .synced })
        }
    }
}
