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

/// Refused changes, and events whose type went or came elsewhere: kept, sent again when edited,
/// never lost.
@Suite(.timeLimit(.minutes(5)))
struct SyncRefusalTests {
    /// The way to fix a change the server refused is to edit it: the edit revives the refused
    /// entry with the latest data, rather than queueing an update of something the server never
    /// accepted (which would be refused too, for ever).
    @Test func editingARefusedEventSendsItAgainWithTheEdit() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            var event = h.event(type, note: "first")
            try await h.store.createEvent(event)
            h.refuseNext("createEvents")
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.store.failedChanges().map(\.entityId) == [event.id.description])
            #expect(try await h.store.event(id: event.id)?.syncStatus == .failed)

            event.notes = "fixed"
            try await h.store.updateEvent(event)
            #expect(try await h.store.outboxCounts() == (pending: 1, failed: 0))
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.direct.event(id: event.id).value.notes == "fixed")
            #expect(h.api.calls("editEvents").isEmpty)
            let keys = h.api.calls("createEvents").filter { $0.ids == [event.id.description] }.map(\.idempotencyKey)
            #expect(keys.count == 2)
            #expect(try await h.store.event(id: event.id)?.syncStatus == .synced)
            #expect(try await h.store.failedChanges().isEmpty)
        }
    }

    @Test func deletingARefusedEventSendsNothing() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            let event = h.event(type)
            try await h.store.createEvent(event)
            h.refuseNext("createEvents")
            _ = await h.engine.sync(full: false)
            try await h.store.deleteEvent(id: event.id)
            #expect(try await h.store.outboxCounts() == (pending: 0, failed: 0))
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(h.api.calls("editEvents").isEmpty)
            #expect(try await h.serverEventIds().isEmpty)
        }
    }

    /// A process killed while a change was on the wire leaves the entry in flight; put back at
    /// the next start, it may already be applied under its key. An edit made then must get its
    /// own entry: folded into the old one, it would reach the server under a key the server
    /// knows with another body and be refused — the edit lost.
    @Test func anEditAfterAKilledSendIsNotLost() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            var event = h.event(type, note: "first")
            try await h.store.createEvent(event)
            #expect(await h.engine.sync(full: false).outcome == .ok)

            event.notes = "second"
            try await h.store.updateEvent(event)
            // The killed process's last moments: the entry taken and sent, the answer never read.
            let work = try await h.store.nextWork(now: Date(), batchSize: 50).entries
            #expect(work.map(\.kind) == [.update])
            try await h.engine.sendOne(work[0])
            #expect(try await h.direct.event(id: event.id).value.notes == "second")
            try await h.store.resetInFlight()  // the next start

            event.notes = "third"
            try await h.store.updateEvent(event)
            #expect(try await h.store.outboxCounts().pending == 2)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.store.failedChanges().isEmpty)
            #expect(try await h.direct.event(id: event.id).value.notes == "third")
            #expect(try await h.store.event(id: event.id)?.value.notes == "third")
        }
    }

    /// Another device deletes a type while this one logs an event of it: the event is not
    /// thrown away. Its create is refused and surfaced; moving it to another type sends it.
    @Test func anEventWhoseTypeWasDeletedElsewhereIsKeptAndCanBeMoved() async throws {
        try await SyncHarness.with { h in
            let doomed = try await h.type("Doomed")
            let other = try await h.type("Other")
            #expect(await h.engine.sync(full: false).outcome == .ok)
            var event = h.event(doomed, note: "logged offline")
            try await h.store.createEvent(event)
            try await h.direct.deleteEventType(id: doomed.id)

            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.store.eventType(id: doomed.id) == nil)
            #expect(try await h.store.event(id: event.id)?.syncStatus == .failed)
            let failed = try await h.store.failedChanges()
            #expect(failed.map(\.entityId) == [event.id.description])
            #expect(failed.first?.error.contains("no such event type") == true)

            event.eventTypeId = other.id
            try await h.store.updateEvent(event)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.direct.event(id: event.id).value.eventTypeId == other.id)
            #expect(try await h.store.failedChanges().isEmpty)
            #expect(try await h.store.event(id: event.id)?.syncStatus == .synced)
        }
    }

    /// A server delete takes the entity's failed changes with it: nothing stays surfaced about
    /// an entity that no longer exists anywhere.
    @Test func aServerDeleteLeavesNoFailedChangeBehind() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            var event = h.event(type)
            try await h.store.createEvent(event)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            event.notes = "refused"
            try await h.store.updateEvent(event)
            h.refuseNext("editEvents")
            _ = await h.engine.sync(full: false)
            #expect(try await h.store.outboxCounts() == (pending: 0, failed: 1))
            try await h.direct.deleteEvent(id: event.id)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.store.event(id: event.id) == nil)
            #expect(try await h.store.outboxCounts() == (pending: 0, failed: 0))
            #expect(try await h.store.failedChanges().isEmpty)
        }
    }

    /// Deleting an entity settles its failed changes: the delete goes, they go.
    @Test func deletingAnEntityClearsItsFailedChanges() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            var event = h.event(type)
            try await h.store.createEvent(event)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            event.notes = "never answered"
            try await h.store.updateEvent(event)
            h.api.fail("editEvents", with: .transport(.timedOut), times: RetryPolicy.maxAttempts)
            for _ in 0..<RetryPolicy.maxAttempts {
                _ = await h.engine.sync(full: false)
                h.clock.advance(120)
            }
            #expect(try await h.store.outboxCounts() == (pending: 0, failed: 1))
            try await h.store.deleteEvent(id: event.id)
            #expect(try await h.store.outboxCounts() == (pending: 1, failed: 0))
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.serverEventIds().isEmpty)
            #expect(try await h.store.outboxCounts() == (pending: 0, failed: 0))
        }
    }

    /// Two devices make "Coffee" before either syncs. The server keeps the first; the second
    /// device's type becomes that one — its events and geofences move to it and go up — instead
    /// of leaving two types of one name here and every event of it refused.
    @Test func aTypeMadeOnTwoDevicesBecomesOne() async throws {
        try await SyncHarness.with { h in
            let first = try await h.direct.createEventType(
                EventTypeCreate(id: h.ids.next(), name: "Coffee", color: "#112233"), idempotencyKey: nil
            ).value
            let mine = try await h.type("coffee")
            let events = (0..<3).map { h.event(mine, offset: Double($0), note: "cup \($0)") }
            for e in events { try await h.store.createEvent(e) }
            let fence = Geofence(
                id: h.ids.next(), name: "Café", center: Coordinate(latitude: 52.5, longitude: 13.4), radius: 80,
                entryEventTypeId: mine.id)
            try await h.store.createGeofence(fence)

            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.store.failedChanges().isEmpty)
            #expect(try await h.store.eventTypes().map(\.value) == [first])
            let local = try await h.store.events(limit: 10, since: nil)
            #expect(local.count == 3)
            #expect(local.allSatisfy { $0.value.eventTypeId == first.id && $0.syncStatus == .synced })
            #expect(Set(local.map(\.value.notes)) == Set(events.map(\.notes)))
            let remote = try await h.direct.listEvents(limit: 10, after: nil).items.map(\.value)
            #expect(Set(remote.map(\.id)) == Set(events.map(\.id)))
            #expect(remote.allSatisfy { $0.eventTypeId == first.id })
            #expect(try await h.store.geofences().first?.value.entryEventTypeId == first.id)
            #expect(try await h.direct.geofence(id: fence.id).value.entryEventTypeId == first.id)
            #expect(try await h.direct.listEventTypes().count == 1)
        }
    }

    /// Events refused for want of their type ("no such event type") go again when the type is
    /// adopted.
    @Test func eventsRefusedForWantOfTheirTypeGoWhenItIsAdopted() async throws {
        try await SyncHarness.with { h in
            var mine = try await h.type("Tea")
            let event = h.event(mine)
            try await h.store.createEvent(event)
            h.refuseNext("createEventType")
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(
                Set(try await h.store.failedChanges().map(\.entityId)) == [mine.id.description, event.id.description])

            let first = try await h.direct.createEventType(
                EventTypeCreate(id: h.ids.next(), name: "TEA"), idempotencyKey: nil)
            mine.color = "#00AA00"
            try await h.store.updateEventType(mine)  // the person edits the refused type: it goes again
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.store.failedChanges().isEmpty)
            #expect(try await h.direct.event(id: event.id).value.eventTypeId == first.value.id)
            #expect(try await h.store.event(id: event.id)?.syncStatus == .synced)
            #expect(try await h.store.eventTypes().map(\.value.id) == [first.value.id])
        }
    }

    /// The adoption's own failure paths: a failure while listing the server's types is retried
    /// like any transient one (nothing refused, nothing re-pointed meanwhile); a conflict when the
    /// server has no type of that name stays a refusal, surfaced as before.
    @Test func anAdoptionThatCannotLookIsRetriedAndAConflictWithoutANameStaysRefused() async throws {
        try await SyncHarness.with { h in
            // A device that has pulled before: a first pass would download (and list the types)
            // before its push (D65).
            #expect(await h.engine.sync(full: false).outcome == .ok)
            let first = try await h.direct.createEventType(
                EventTypeCreate(id: h.ids.next(), name: "Tea"), idempotencyKey: nil
            ).value
            let mine = try await h.type("tea")
            let event = h.event(mine)
            try await h.store.createEvent(event)
            h.api.fail("listEventTypes", with: .server(status: 503, problem: nil))
            #expect(await h.engine.sync(full: false).outcome == .waiting)
            #expect(try await h.store.failedChanges().isEmpty)
            #expect(try await h.store.event(id: event.id)?.value.eventTypeId == mine.id)
            #expect(try await h.store.outboxCounts().pending == 2)
            h.clock.advance(120)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.direct.event(id: event.id).value.eventTypeId == first.id)

            let juice = try await h.type("Juice")
            h.api.fail("createEventType", with: .conflict(APIProblem(status: 409, code: "conflict", title: "in use")))
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.store.failedChanges().map(\.entityId) == [juice.id.description])
            #expect(try await h.store.eventType(id: juice.id) != nil)
        }
    }

    /// A `409` "request in progress" (the same change's first request still running after its
    /// answer was lost) is retried like a transient failure, never refused (review, issue 35).
    @Test func aRequestStillInProgressIsRetriedNotRefused() async throws {
        try await SyncHarness.with { h in
            let tea = try await h.type("Tea")
            h.api.fail(
                "createEventType",
                with: .conflict(
                    APIProblem(status: 409, code: ProblemCode.conflict, title: APIProblem.requestInProgressTitle)))
            #expect(await h.engine.sync(full: false).outcome == .waiting)
            #expect(try await h.store.failedChanges().isEmpty)
            h.clock.advance(120)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.direct.listEventTypes().map(\.value.id).contains(tea.id))
            #expect(try await h.store.outboxCounts() == (pending: 0, failed: 0))
        }
    }

    /// An outsider's attack: a server killed while it ran a request holds the request's key for
    /// the claim's minute, and every resend meanwhile is "still running"; counted as attempts,
    /// they used up the five a device has and its change was given up. Now they never count.
    @Test func aRequestStillRunningForLongNeverUsesUpTheAttempts() async throws {
        try await SyncHarness.with { h in
            let tea = try await h.type("Tea")
            let running = TrendyAPIError.conflict(
                APIProblem(status: 409, code: ProblemCode.conflict, title: APIProblem.requestInProgressTitle))
            for _ in 0..<12 {
                h.api.fail("createEventType", with: running)
                #expect(await h.engine.sync(full: false).outcome == .waiting)
                h.clock.advance(6)
            }
            #expect(try await h.store.failedChanges().isEmpty, "not given up")
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.direct.listEventTypes().map(\.value.id).contains(tea.id))
        }
    }
}
