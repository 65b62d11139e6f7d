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
struct SyncEngineTests {
    @Test func pushesCreatesInBatchesAndConverges() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            let full = APIPaths.maxBatchSize
            let events = (0..<(2 * full + 20)).map { h.event(type, offset: Double($0)) }
            _ = try await h.store.insertEvents(events)
            let run = await h.engine.sync(full: false)
            #expect(run.outcome == .ok)
            #expect(run.pushed == events.count + 1)
            #expect(h.api.calls("createEvents").map(\.ids.count) == [full, full, 20])
            #expect(h.api.calls("createEventType").count == 1)
            #expect(try await h.serverEventIds() == Set(events.map(\.id.description)))
            #expect(try await h.store.outboxCounts().pending == 0)
            #expect(try await h.store.events(limit: 500, since: nil).allSatisfy { $0.syncStatus == .synced })
            #expect(h.engine.status.phase == .idle)
            #expect(h.engine.status.lastSuccessfulSync != nil)
            // Nothing left: the next pass sends nothing.
            let before = h.api.calls("createEvents").count
            _ = await h.engine.sync(full: false)
            #expect(h.api.calls("createEvents").count == before)
        }
    }

    /// A pass a failure stops still says what it did (an outsider's attack: a push cut off after
    /// 851 of 3,000 events reached the server reported "pushed 0"): the push and the download
    /// are counted as each batch is settled and each page stored.
    @Test func aPassCutOffSaysWhatItPushedAndPulledBeforeTheCut() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            let full = APIPaths.maxBatchSize
            let events = (0..<(2 * full + 20)).map { h.event(type, offset: Double($0)) }
            _ = try await h.store.insertEvents(events)
            h.api.observe("createEvents") { call in call == 3 ? .transport(.timedOut) : nil }
            let cut = await h.engine.sync(full: false)
            #expect(cut.outcome == .waiting, "\(cut)")
            #expect(cut.pushed == 2 * full + 1, "the type and two full batches reached the server: \(cut)")
            #expect(try await h.serverEventIds().count == 2 * full)

            // A new device's download cut after its first page of events.
            let store = try SyncHarness.memoryStore()
            let device = h.engine(on: store, pageSize: 50)
            h.api.observe("createEvents") { _ in nil }
            let listed = h.api.calls("listEvents").count
            h.api.observe("listEvents") { call in call == listed + 2 ? .transport(.timedOut) : nil }
            let download = await device.sync(full: false)
            #expect(download.outcome == .waiting, "\(download)")
            #expect(download.pulled == 51, "the type and one page of 50 were stored: \(download)")
            #expect(try await store.events(limit: 500, since: nil).count == 50)
        }
    }

    /// A device's first pass downloads the account before it pushes (D65): pushed first, all it
    /// held came back in the download — an import before the first sync was pulled back whole.
    @Test func aFirstSyncDoesNotDownloadWhatTheDeviceItselfHolds() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            _ = try await h.store.insertEvents((0..<5).map { h.event(type, offset: Double($0)) })
            #expect(await h.engine.sync(full: false).outcome == .ok)
            let second = try h.anotherDevice()
            let local = EventType(id: h.ids.next(), name: "Walk")
            try await second.store.createEventType(local)
            let mine = (0..<120).map { h.event(local, offset: 100 + Double($0), note: "offline \($0)") }
            _ = try await second.store.insertEvents(mine)
            let first = await second.engine.sync(full: false)
            #expect(first.outcome == .ok, "\(first)")
            #expect(first.pushed == 121, "\(first)")
            // The account's type and five events, and this device's type create (type creates
            // always come back, D57) — not its 120 events.
            #expect(first.pulled == 7, "\(first)")
            let held = try await second.store.events(limit: 500, since: nil)
            #expect(held.count == 125 && held.allSatisfy { $0.syncStatus == .synced })
            #expect(try await h.serverEventIds().count == 125)
            // The first device gets the second's events, and the second nothing more.
            #expect(await h.engine.sync(full: false).pulled == 121)
            #expect(await second.engine.sync(full: false).pulled == 0)

            // A download that fails does not hold the push back: what a third device holds
            // reaches the server, and the pass ends as the download's failure says.
            let third = try h.anotherDevice()
            let place = EventType(id: h.ids.next(), name: "Gym")
            try await third.store.createEventType(place)
            _ = try await third.store.insertEvents((0..<10).map { h.event(place, offset: 500 + Double($0)) })
            third.api.fail("listEvents", with: .transport(.timedOut), times: 2)
            let cut = await third.engine.sync(full: false)
            #expect(cut.outcome == .waiting && cut.pushed == 11, "\(cut)")
            #expect(try await h.serverEventIds().count == 135)
            #expect(await third.engine.sync(full: false).outcome == .ok)
            #expect(try await third.store.events(limit: 500, since: nil).count == 135)
        }
    }

    /// An upload goes in batches of up to the server's most (D66), and no batch's body goes over
    /// what the server takes: fifty events with long notes and text properties made a body of
    /// more than 4 MiB, and after the server's 413 the batch went one event a request (a batch of
    /// 500 holding them: 500 requests).
    @Test func uploadsGoInLargeBatchesThatStayUnderTheServersBodyLimit() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            let long = String(repeating: "🙂", count: 10_000)
            let heavy = (0..<50).map { i in
                var e = h.event(type, offset: Double(i), note: long)
                e.properties = ["a": .text(long), "b": .text(long)]
                return e
            }
            let light = (0..<1_200).map { h.event(type, offset: 1_000 + Double($0)) }
            _ = try await h.store.insertEvents(heavy + light)
            let run = await h.engine.sync(full: false)
            #expect(run.outcome == .ok, "\(run)")
            #expect(try await h.store.outboxCounts().failed == 0)
            #expect(try await h.serverEventIds().count == 1_250)
            let batches = h.api.calls.filter { $0.name.hasPrefix("createEvent") }.map(\.ids.count)
            #expect(batches.allSatisfy { $0 <= APIPaths.maxBatchSize }, "\(batches)")
            #expect(batches.count(where: { $0 == APIPaths.maxBatchSize }) == 2, "\(batches)")
            #expect(batches.count < 35, "\(batches)")
        }
    }

    /// A first pass's download can leave this device's unsent `coffee` beside the account's
    /// `Coffee` until the push adopts it (D65): a name finds the one spelled exactly so (an
    /// outsider's attack: `trendy log Coffee` logged to `coffee`, `types rm Coffee` offered
    /// `coffee`), any case still finds one.
    @Test func aNameMatchingTwoTypesFindsTheOneSpelledSo() async throws {
        try await SyncHarness.with { h in
            let server = try await h.direct.createEventType(
                EventTypeCreate(id: h.ids.next(), name: "Coffee"), idempotencyKey: nil
            ).value
            let mine = try await h.type("coffee")
            h.api.fail("createEventType", with: .transport(.timedOut))
            _ = await h.engine.sync(full: false)
            #expect(try await h.store.eventTypes().count == 2, "both until the push is answered")
            #expect(try await h.store.eventType(named: "Coffee")?.value.id == server.id)
            #expect(try await h.store.eventType(named: "coffee")?.value.id == mine.id)
            #expect(try await h.store.eventType(named: "COFFEE") != nil)
        }
    }

    @Test func aRefusedItemIsSurfacedAndDoesNotBlockTheQueue() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            let future = UUIDv7Generator(now: { Date().addingTimeInterval(7_200) })
            let bad = Event(id: future.next(), eventTypeId: type.id, timestamp: Date())
            let good = [h.event(type, offset: 1), h.event(type, offset: 2)]
            try await h.store.createEvent(good[0])
            try await h.store.createEvent(bad)
            try await h.store.createEvent(good[1])
            let run = await h.engine.sync(full: false)
            #expect(run.outcome == .ok)
            #expect(try await h.serverEventIds() == Set(good.map(\.id.description)))
            let failed = try await h.store.failedChanges()
            #expect(failed.map(\.entityId) == [bad.id.description])
            #expect(failed.first?.error.contains("future") == true)
            #expect(h.engine.status.failedCount == 1)
            #expect(try await h.store.event(id: bad.id)?.syncStatus == .failed)
        }
    }

    @Test func transientFailuresBackOffKeepTheirKeyAndEventuallyFail() async throws {
        try await SyncHarness.with { h in
            _ = try await h.type("Tea")
            h.api.fail("createEventType", with: .transport(.timedOut), times: 2)
            // A transient failure is `waiting` whatever the pass was doing (`trendy sync` exits 75).
            #expect(await h.engine.sync(full: false).outcome == .waiting)
            // Backing off: the next pass right away sends nothing, and says when it will retry.
            #expect(await h.engine.sync(full: false).outcome == .waiting)
            #expect(h.api.calls("createEventType").count == 1)
            guard case .waitingToRetry(let until) = h.engine.status.phase else {
                Issue.record("expected waitingToRetry, got \(h.engine.status.phase)")
                return
            }
            #expect(
                h.engine.status.bannerText == "Retrying at \(SyncStatus.time(until)) after a server error — 1 pending")
            h.clock.advance(1.1)
            #expect(await h.engine.sync(full: false).outcome == .waiting)
            h.clock.advance(2.1)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            let keys = h.api.calls("createEventType").map(\.idempotencyKey)
            #expect(keys.count == 3)
            #expect(Set(keys).count == 1)
            #expect(keys[0] != nil)
            #expect(try await h.direct.listEventTypes().map(\.value.name) == ["Tea"])

            _ = try await h.type("Juice")
            h.api.fail("createEventType", with: .server(status: 503, problem: nil), times: 10)
            for _ in 0..<RetryPolicy.maxAttempts {
                _ = await h.engine.sync(full: false)
                h.clock.advance(120)
            }
            let failed = try await h.store.failedChanges()
            #expect(failed.count == 1)
            #expect(failed.first?.attempts == RetryPolicy.maxAttempts)
            #expect(failed.first?.error.contains("gave up") == true)
            h.api.clearScript()
            #expect(try await h.store.retryFailed() == 1)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.direct.listEventTypes().count == 2)
        }
    }

    /// An update the server applied but whose answers were all lost ends up failed; when the
    /// person retries it after another device changed the event, the retry must not undo that
    /// change: it carries its original key, so the server replays its stored answer.
    @Test func aRetriedChangeKeepsItsKeySoAnAppliedUpdateIsNotReapplied() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            var event = h.event(type, note: "first")
            try await h.store.createEvent(event)
            #expect(await h.engine.sync(full: false).outcome == .ok)

            event.notes = "mine"
            try await h.store.updateEvent(event)
            h.api.loseAnswer("editEvents", with: .transport(.connectionLost("test")), times: RetryPolicy.maxAttempts)
            for _ in 0..<RetryPolicy.maxAttempts {
                _ = await h.engine.sync(full: false)
                h.clock.advance(120)
            }
            #expect(try await h.store.failedChanges().map(\.entityId) == [event.id.description])
            #expect(try await h.direct.event(id: event.id).value.notes == "mine")

            var theirs = EventUpdate()
            theirs.notes = .set("theirs")
            _ = try await h.direct.updateEvent(id: event.id, theirs, idempotencyKey: nil)

            #expect(try await h.store.retryFailed() == 1)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            let keys = h.api.calls("editEvents").map(\.idempotencyKey)
            #expect(keys.count == RetryPolicy.maxAttempts + 1)
            #expect(keys[0] != nil)
            #expect(Set(keys).count == 1)
            #expect(try await h.direct.event(id: event.id).value.notes == "theirs")
            #expect(try await h.store.event(id: event.id)?.value.notes == "theirs")
            #expect(try await h.store.failedChanges().isEmpty)
        }
    }

    @Test func rateLimitsTripTheBreakerAndNeverCountAsAttempts() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            try await h.store.createEvent(h.event(type))
            _ = await h.engine.sync(full: false)  // the type and event go out
            try await h.store.createEvent(h.event(type, offset: 5))
            h.api.fail(
                "createEvents",
                with: .rateLimited(retryAfter: 30, problem: APIProblem(status: 429, code: "rate_limited", title: "t")),
                times: 3)
            for _ in 0..<3 { #expect(await h.engine.sync(full: false).outcome == .rateLimited) }
            guard case .rateLimited(let until) = h.engine.status.phase else {
                Issue.record("expected rate limited, got \(h.engine.status.phase)")
                return
            }
            #expect(until >= h.clock.now.addingTimeInterval(29))
            // While open, nothing at all is sent.
            let sent = h.api.calls.count
            #expect(await h.engine.sync(full: false).outcome == .rateLimited)
            #expect(h.api.calls.count == sent)
            #expect(try await h.store.failedChanges().isEmpty)
            h.clock.advance(31)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.store.outboxCounts().pending == 0)
        }
    }

    @Test func coalescedChangesSendLatestDataOnly() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            var edited = h.event(type, note: "first")
            try await h.store.createEvent(edited)
            edited.notes = "second"
            try await h.store.updateEvent(edited)
            let doomed = h.event(type, offset: 10)
            try await h.store.createEvent(doomed)
            try await h.store.deleteEvent(id: doomed.id)
            #expect(try await h.store.outboxCounts().pending == 2)
            _ = await h.engine.sync(full: false)
            #expect(h.api.calls("createEvents").flatMap(\.ids) == [edited.id.description])
            #expect(h.api.calls("editEvents").isEmpty)
            #expect(try await h.direct.event(id: edited.id).value.notes == "second")
            // update + delete of a synced event → only the delete goes out.
            edited.notes = "third"
            try await h.store.updateEvent(edited)
            try await h.store.deleteEvent(id: edited.id)
            _ = await h.engine.sync(full: false)
            #expect(h.api.calls("editEvents").flatMap(\.ids) == [edited.id.description])
            #expect(try await h.serverEventIds().isEmpty)
        }
    }

    @Test func aPullNeverResurrectsALocallyDeletedEntity() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            let e = h.event(type)
            try await h.store.createEvent(e)
            _ = await h.engine.sync(full: false)
            try await h.store.deleteEvent(id: e.id)
            // The push of the delete fails; a full re-download still must not bring it back.
            h.api.fail("editEvents", with: .transport(.timedOut))
            _ = await h.engine.sync(full: false)
            _ = try await h.engine.bootstrap(user: h.userId)
            #expect(try await h.store.event(id: e.id) == nil)
            h.clock.advance(5)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.serverEventIds().isEmpty)
            #expect(try await h.store.event(id: e.id) == nil)
        }
    }

    @Test func theCursorOnlyMovesForward() async throws {
        try await SyncHarness.with { h in
            _ = try await h.type()
            _ = await h.engine.sync(full: false)
            let cursor = try #require(try await h.store.cursor())
            #expect(cursor > 0)
            _ = try await h.store.apply(ChangesPage(changes: [], nextCursor: cursor - 1, hasMore: false))
            #expect(try await h.store.cursor() == cursor)
        }
    }

    @Test func bootstrapDownloadsWhatOtherDevicesWrote() async throws {
        try await SyncHarness.with { h in
            let type = try await h.direct.createEventType(
                EventTypeCreate(id: h.ids.next(), name: "Remote"), idempotencyKey: nil)
            let remote = (0..<30).map {
                Event(
                    id: h.ids.next(), eventTypeId: type.value.id,
                    timestamp: Date().addingTimeInterval(Double(-100 - $0)))
            }
            _ = try await h.direct.createEvents(remote, idempotencyKey: nil)
            let latest = try await h.direct.latestCursor().cursor
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.store.cursor() == latest)
            #expect(try await h.localEventIds() == Set(remote.map(\.id.description)))
            #expect(try await h.store.eventType(named: "remote")?.syncStatus == .synced)
            #expect(h.api.calls("listEvents").count >= 1)
            // Then incremental: another remote change arrives through the feed.
            let more = Event(id: h.ids.next(), eventTypeId: type.value.id, timestamp: Date())
            _ = try await h.direct.createEvent(more, idempotencyKey: nil)
            #expect(await h.engine.sync(full: false).pulled == 1)
            #expect(try await h.store.event(id: more.id) != nil)
            // A full resync keeps pending local work and drops what the server deleted.
            try await h.direct.deleteEvent(id: remote[0].id)
            let local = Event(id: h.ids.next(), eventTypeId: type.value.id, timestamp: Date().addingTimeInterval(-5))
            try await h.store.createEvent(local)
            #expect(await h.engine.sync(full: true).outcome == .ok)
            let ids = try await h.localEventIds()
            #expect(!ids.contains(remote[0].id.description))
            #expect(ids.contains(local.id.description))
        }
    }

    @Test func eventsRemovedOnTheServerDuringABootstrapHideNoOtherEvent() async throws {
        try await SyncHarness.with { h in
            let type = try await h.direct.createEventType(
                EventTypeCreate(id: h.ids.next(), name: "Remote"), idempotencyKey: nil)
            let newestFirst = (0..<25).map {
                Event(
                    id: h.ids.next(), eventTypeId: type.value.id, timestamp: Date().addingTimeInterval(Double(-60 * $0))
                )
            }
            _ = try await h.direct.createEvents(newestFirst, idempotencyKey: nil)
            // Another device deletes the two newest events once the first page of ten has been
            // listed (before the second is): with offset paging the second page would start two
            // events late and the bootstrap would never list the 11th and 12th newest.
            h.api.observe("listEvents") { number in
                if number == 2 {
                    for event in newestFirst.prefix(2) { try? await h.direct.deleteEvent(id: event.id) }
                }
                return nil
            }
            #expect(await h.engine(on: h.store, pageSize: 10).sync(full: false).outcome == .ok)
            #expect(h.api.calls("listEvents").count == 3)
            #expect(try await h.localEventIds() == Set(newestFirst.dropFirst(2).map(\.id.description)))
        }
    }

    @Test func aWriteDuringAPassGetsAFollowUp() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            try await h.store.createEvent(h.event(type))
            h.api.hold("createEvents")
            async let first = h.engine.sync(full: false)
            #expect(await until { h.api.heldCount > 0 })
            let late = h.event(type, offset: 50)
            try await h.store.createEvent(late)
            await h.engine.localWriteHappened()
            h.api.releaseHeld()
            let run = await first
            #expect(run.outcome == .ok)
            #expect(try await h.store.outboxCounts().pending == 0)
            #expect(try await h.serverEventIds().contains(late.id.description))
        }
    }

    @Test func aUserSwitchStopsApplyingResults() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            try await h.store.createEvent(h.event(type))
            h.api.hold("createEvents")
            async let run = h.engine.sync(full: false)
            #expect(await until { h.api.heldCount > 0 })
            // A first pass downloaded the account before its push (D65): nothing after the switch.
            let downloaded = try await h.store.cursor()
            h.identity.set("someone-else")
            h.api.releaseHeld()
            let result = await run
            #expect(result.outcome == .superseded)
            let counts = try await h.store.outboxCounts()
            #expect(counts.failed == 0)
            #expect(counts.pending == 1)
            #expect(try await h.store.cursor() == downloaded)
        }
    }

    @Test func offlineAttemptsNothingElse() async throws {
        try await SyncHarness.with { h in
            _ = try await h.type()
            h.api.fail("health", with: .transport(.cannotConnect("refused")))
            let run = await h.engine.sync(full: false)
            #expect(run.outcome == .offline)
            #expect(h.engine.status.phase == .offline)
            #expect(h.api.calls.map(\.name) == ["health"])
            #expect(h.engine.status.pendingCount == 1)
            let history = try await h.engine.history()
            #expect(history.first?.outcome == .offline)
        }
    }

    @Test func notSignedInDoesNothing() async throws {
        try await SyncHarness.with { h in
            h.identity.set(nil)
            #expect(await h.engine.sync(full: false).outcome == .signedOut)
            #expect(h.api.calls.isEmpty)
        }
    }
}
