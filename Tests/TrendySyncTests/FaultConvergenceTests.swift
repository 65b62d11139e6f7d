import Foundation
import Testing
import TrendyAPI
import TrendyModels
import TrendyServer
import TrendySync

/// The real engine against the real server with faults on: 5xx, latency with jitter, 429 bursts
/// dropped connections, and answers cut off after the server did the work. Every event created
/// locally must end up on the server exactly once.
@Suite(.timeLimit(.minutes(2)))
struct FaultConvergenceTests {
    @Test func everyLocalEventReachesTheServerExactlyOnce() async throws {
        var faults = FaultConfiguration()
        faults.errorRate = 0.2
        faults.latencyMilliseconds = 2
        faults.jitterMilliseconds = 10
        faults.dropRate = 0.05
        faults.cutRate = 0.05  // carried out, then the connection closes before the answer
        faults.forced429Count = 3
        faults.retryAfterSeconds = 1
        try await SyncHarness.with(faults: faults) { h in
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
                if run.outcome == "ok", counts.pending == 0, counts.failed == 0, passes > 5 { break }
                h.clock.advance(65)  // past any backoff or breaker wait
            }
            #expect(passes < 300, "did not converge")
            // The forced 429s alone guarantee failed passes; the history keeps the last 10.
            let history = try await h.engine.history()
            #expect(passes > 10 || history.contains { $0.outcome != "ok" }, "the faults never fired")
            h.server.faults.update(FaultConfiguration())  // verify without faults
            let server = try await h.serverEventIds()
            #expect(server == Set(created.map(\.id.description)))
            #expect(try await h.direct.syncSummary().eventCount == 400)
            #expect(try await h.localEventIds() == server)
            // Bounded work: no retry storm (400 events in batches of 50 is 8 requests without faults).
            #expect(requests < 400, "too many requests: \(requests)")
        }
    }
}
