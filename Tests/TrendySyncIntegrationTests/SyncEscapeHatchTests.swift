import Foundation
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyAPITesting
import TrendyModels
import TrendyServer
import TrendySync
import TrendyTestSupport

@testable import TrendySyncLive

@Suite(.timeLimit(.minutes(5)))
struct SyncEscapeHatchTests {
    @Test func skipToLatestStillPushesEverythingPending() async throws {
        try await SyncHarness.with { h in
            let remoteType = try await h.direct.createEventType(
                EventTypeCreate(id: h.ids.next(), name: "Remote"), idempotencyKey: nil)
            _ = try await h.direct.createEvent(
                Event(id: h.ids.next(), eventTypeId: remoteType.value.id, timestamp: Date()), idempotencyKey: nil)
            let type = try await h.type("Local")
            let local = h.event(type)
            try await h.store.createEvent(local)
            let run = await h.engine.skipToLatest()
            #expect(run.outcome == .ok)
            #expect(run.pushed == 2)
            // Nothing pulled, not even the echo of its own pushes (the jump comes after them).
            #expect(run.pulled == 0)
            let latest = try await h.direct.latestCursor().cursor
            #expect(try await h.store.cursor() == latest)
            #expect(try await h.serverEventIds().contains(local.id.description))
            // The next pass pulls only what comes after the jump.
            #expect(await h.engine.sync(full: false).pulled == 0)
            // The remote history before the jump was skipped, as asked.
            #expect(try await h.store.eventType(named: "Remote") == nil)
        }
    }

    /// A transient failure of the jump itself is a transient failure like any other (outside
    /// tester: `sync --skip-to-latest` exited 1 on a 503, a dropped connection or a 429).
    @Test func aSkipWhoseJumpMeetsATransientFailureWaits() async throws {
        try await SyncHarness.with { h in
            let before = try await h.store.cursor()
            h.api.fail("latestCursor", with: .server(status: 503, problem: nil))
            #expect(await h.engine.skipToLatest().outcome == .waiting)
            h.api.fail("latestCursor", with: .transport(.timedOut))
            #expect(await h.engine.skipToLatest().outcome == .waiting)
            #expect(try await h.store.cursor() == before)
            #expect(await h.engine.skipToLatest().outcome == .ok)
        }
    }

    @Test func aStatusStreamStartsWithTheCurrentStatusAndFollowsAPass() async throws {
        try await SyncHarness.with { h in
            _ = try await h.type()
            let updates = h.engine.statusUpdates()
            let collector = Task {
                var phases: [String] = []
                for await s in updates {
                    phases.append(s.phase.name)
                    if phases.count > 2, s.phase == .idle { break }
                }
                return phases
            }
            _ = await h.engine.sync(full: false)
            let phases = await collector.value
            #expect(phases.first == "idle")
            #expect(phases.contains("checking"))
            #expect(phases.contains("pushing"))
            #expect(phases.contains("pulling"))
            #expect(phases.last == "idle")
        }
    }
}

@Suite(.timeLimit(.minutes(5)))
struct InFlightEditTests {
    @Test func anEditMadeWhileItsCreateIsInFlightIsNotLost() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            var event = h.event(type, note: "before")
            try await h.store.createEvent(event)
            try await h.store.createEvent(h.event(type, offset: 1))
            h.api.hold("createEvents")
            async let pass = h.engine.sync(full: false)
            // The batch is marked in flight before it is sent, so once it is held it is in flight.
            #expect(await until { h.api.heldCount > 0 })
            #expect(h.api.heldCount == 1)
            event.notes = "after"
            try await h.store.updateEvent(event)
            await h.engine.localWriteHappened()
            h.api.releaseHeld()
            #expect(await pass.outcome == .ok)
            #expect(try await h.store.outboxCounts().pending == 0)
            #expect(try await h.direct.event(id: event.id).value.notes == "after")
            #expect(try await h.store.event(id: event.id)?.value.notes == "after")
            #expect(try await h.store.event(id: event.id)?.syncStatus == .synced)
            // The edit went out as its own update, after the create it could not join.
            #expect(h.api.calls("editEvents").count == 1)
        }
    }
}
