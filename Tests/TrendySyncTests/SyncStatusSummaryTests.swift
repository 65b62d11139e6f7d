import Foundation
import Testing
import TrendyModels
import TrendySync
import TrendySyncTesting

/// The status summary folds the last pass into what a new process shows.
@Suite struct SyncStatusSummaryTests {
    func run(_ outcome: SyncOutcome, error: String? = nil) -> SyncRun {
        SyncRun(startedAt: Date(), duration: 0.1, pushed: 0, pulled: 0, outcome: outcome, error: error)
    }

    @Test func aLastPassThatFoundTheServerAwayShowsOfflineWithItsError() async throws {
        let engine = ScriptedSyncEngine(
            status: SyncStatus(pendingCount: 3), history: [run(.offline, error: "the server did not answer")])
        let summary = try await SyncStatusSummary.load(engine: engine, store: try MemoryLocalStore.make())
        #expect(summary.status.phase == .offline)
        #expect(summary.status.lastError == "the server did not answer")
        #expect(summary.status.pendingCount == 3)
        #expect(summary.failed.isEmpty)
    }

    @Test func aFailedPassKeepsThePhaseAndShowsTheError() async throws {
        let engine = ScriptedSyncEngine(history: [run(.error, error: "HTTP 500"), run(.ok)])
        let summary = try await SyncStatusSummary.load(engine: engine, store: try MemoryLocalStore.make())
        #expect(summary.status.phase == .idle)
        #expect(summary.status.lastError == "HTTP 500")
    }

    @Test func aGoodLastPassChangesNothing() async throws {
        let engine = ScriptedSyncEngine(history: [run(.ok), run(.offline, error: "old")])
        let summary = try await SyncStatusSummary.load(engine: engine, store: try MemoryLocalStore.make())
        #expect(summary.status == SyncStatus())
    }
}
