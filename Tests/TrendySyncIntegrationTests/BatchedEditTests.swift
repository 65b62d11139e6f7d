import Foundation
import GRDB
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyAPITesting
import TrendyModels
import TrendyServer
import TrendySync
import TrendySyncLive
import TrendySyncTesting
import TrendyTestSupport

/// Issue 35: queued edits and deletes of events go in batches (`POST /events/edits`), in outbox
/// order, and each item's answer is booked on its own entry.
@Suite(.timeLimit(.minutes(6)))
struct BatchedEditTests {
    /// `count` events logged here and synced (of a type "Coffee").
    static func synced(_ count: Int, _ h: SyncHarness) async throws -> (EventType, [Event]) {
        let type = try await h.type()
        let events = (0..<count).map { h.event(type, offset: Double($0)) }
        for event in events { try await h.store.createEvent(event) }
        #expect(await h.engine.sync(full: false).outcome == .ok)
        return (type, events)
    }

    @Test func aBulkEditGoesInBatchesInOutboxOrder() async throws {
        try await SyncHarness.with { h in
            let full = APIPaths.maxBatchSize
            var (type, events) = try await Self.synced(2 * full + 20, h)
            for index in events.indices {
                events[index].notes = "bulk \(index)"
                try await h.store.updateEvent(events[index])
            }
            for event in events.suffix(10) { try await h.store.deleteEvent(id: event.id) }
            // A create between the edits: sent between their batches, never ahead of them.
            let late = h.event(type, offset: 500)
            try await h.store.createEvent(late)
            var last = events[0]
            last.notes = "after the create"
            try await h.store.updateEvent(last)

            #expect(await h.engine.sync(full: false).outcome == .ok)
            let sent = h.api.calls.filter { $0.name == "editEvents" || $0.name == "createEvents" }.suffix(4)
            #expect(sent.map(\.name) == ["editEvents", "editEvents", "editEvents", "createEvents"])
            #expect(sent.prefix(3).map(\.ids.count) == [full, full, 20])
            // Outbox order: the update coalesced with the first entry stays in its place.
            #expect(Array(sent.first?.ids.prefix(2) ?? []) == events.prefix(2).map(\.id.description))
            #expect(try await h.store.outboxCounts() == (pending: 0, failed: 0))
            for event in events.dropLast(10) {
                let expected = event.id == last.id ? "after the create" : event.notes
                #expect(try await h.direct.event(id: event.id).value.notes == expected)
            }
            let server = try await h.serverEventIds()
            #expect(server.isDisjoint(with: events.suffix(10).map(\.id.description)))
            #expect(server.contains(late.id.description))
        }
    }

    @Test func eachItemIsBookedOnItsOwnEntry() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            let other = try await h.type("Tea")
            let events = (0..<3).map { h.event(type, offset: Double($0)) }
            for event in events { try await h.store.createEvent(event) }
            #expect(await h.engine.sync(full: false).outcome == .ok)
            // Another device deletes the first event, and the type the second is moved to.
            try await h.direct.deleteEvent(id: events[0].id)
            try await h.direct.deleteEventType(id: other.id)
            var gone = events[0]
            gone.notes = "edited after its delete"
            try await h.store.updateEvent(gone)
            var refused = events[1]
            refused.eventTypeId = other.id
            try await h.store.updateEvent(refused)
            var fine = events[2]
            fine.notes = "applied"
            try await h.store.updateEvent(fine)

            _ = await h.engine.sync(full: false)
            #expect(h.api.calls("editEvents").last?.ids == events.map(\.id.description))
            // Gone: the delete wins here too and the edit is kept as a conflict on the server.
            #expect(try await h.store.event(id: events[0].id) == nil)
            #expect(try await h.direct.conflicts().contains { $0.entityId == events[0].id.description })
            // Refused: a failed change of its own, nothing else held back.
            #expect(try await h.store.failedChanges().map(\.entityId) == [events[1].id.description])
            #expect(try await h.direct.event(id: events[2].id).value.notes == "applied")
            #expect(try await h.store.outboxCounts().pending == 0)
        }
    }

    /// A batch the server cannot read as a whole (a server without the route, or an item it
    /// refuses to parse) is sent again one by one, so one bad item holds back no other.
    @Test func aWholeRequestRefusalFallsBackToOneByOne() async throws {
        try await SyncHarness.with { h in
            var (_, events) = try await Self.synced(3, h)
            for index in events.indices {
                events[index].notes = "one by one \(index)"
                try await h.store.updateEvent(events[index])
            }
            h.refuseNext("editEvents")
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(h.api.calls("updateEvent").map(\.ids) == events.map { [$0.id.description] })
            // Each single request carries its entry's key, as before batches.
            #expect(h.api.calls("updateEvent").allSatisfy { $0.idempotencyKey != nil })
            for event in events {
                #expect(try await h.direct.event(id: event.id).value.notes == event.notes)
            }
            #expect(try await h.store.outboxCounts() == (pending: 0, failed: 0))
        }
    }

    /// An outsider's attack: a batch whose answer was lost, resent from a copy of the database (a
    /// new device id in every item) went under the same key with another body — 422 for ever, read
    /// as "still being applied", and nothing pulled. The key names the device now.
    @Test func aBatchResentUnderANewDeviceIdIsDeliveredNotRetriedForEver() async throws {
        try await SyncHarness.with { h in
            let (store, database) = try MemoryLocalStore.makeWithDatabase(now: { h.clock.now })
            let engine = h.engine(on: store, pageSize: 500)
            let type = EventType(id: h.ids.next(), name: "Coffee")
            try await store.createEventType(type)
            var events = (0..<3).map { h.event(type, offset: Double($0)) }
            for event in events { try await store.createEvent(event) }
            #expect(await engine.sync(full: false).outcome == .ok)
            for index in events.indices {
                events[index].notes = "copied \(index)"
                try await store.updateEvent(events[index])
            }
            h.api.loseAnswer("editEvents", with: .transport(.timedOut))
            #expect(await engine.sync(full: false).outcome != .ok)
            try await database.write {
                try $0.execute(sql: "UPDATE sync_state SET value = 'a-copy-of-the-device' WHERE key = 'device_id'")
            }
            h.clock.advance(65)  // past the backoff
            let resent = await engine.sync(full: false)
            #expect(resent.outcome == .ok, "\(resent)")
            #expect(try await store.outboxCounts() == (pending: 0, failed: 0))
            for event in events {
                #expect(try await h.direct.event(id: event.id).value.notes == event.notes)
            }
            // The same values again: nothing to keep as a conflict.
            #expect(try await h.direct.conflicts().isEmpty)
        }
    }

    /// An outsider's attack: a batch of edits whose answer was lost went again joined by edits
    /// made since — another set of entries, hence another key — and the server applied its items
    /// a second time, over another device's newer note (kept only as a conflict). A batch sent
    /// before goes again exactly as it went, and the new edits follow in their own batch.
    @Test func aBatchWhoseAnswerWasLostGoesAgainAsItWentNotJoinedByNewEdits() async throws {
        try await SyncHarness.with { h in
            var (_, events) = try await Self.synced(8, h)
            for index in 0..<4 {
                events[index].notes = "first \(index)"
                try await h.store.updateEvent(events[index])
            }
            h.api.loseAnswer("editEvents", with: .transport(.timedOut))
            #expect(await h.engine.sync(full: false).outcome != .ok)
            #expect(try await h.direct.event(id: events[0].id).value.notes == "first 0", "applied, answer lost")
            for index in 4..<8 {
                events[index].notes = "later \(index)"
                try await h.store.updateEvent(events[index])
            }
            var newer = EventUpdate()
            newer.notes = .set("another device, newer")
            _ = try await h.direct.updateEvent(id: events[0].id, newer, idempotencyKey: nil)
            h.clock.advance(65)  // past the backoff
            let resent = await h.engine.sync(full: false)
            #expect(resent.outcome == .ok, "\(resent)")
            let batches = h.api.calls("editEvents").suffix(2).map(\.ids)
            #expect(batches == [events[0..<4].map(\.id.description), events[4..<8].map(\.id.description)])
            #expect(try await h.direct.event(id: events[0].id).value.notes == "another device, newer")
            #expect(try await h.direct.conflicts().isEmpty, "a replay, not a second write")
            for event in events.dropFirst() {
                #expect(try await h.direct.event(id: event.id).value.notes == event.notes)
            }
            #expect(try await h.store.outboxCounts() == (pending: 0, failed: 0))
            #expect(try await h.store.event(id: events[0].id)?.value.notes == "another device, newer")
        }
    }

    /// An outsider's attack: one create too large for a request (a note of 9,000 characters, each
    /// with 250 combining marks: 4.5 MB against the server's 4 MB) made the server refuse its whole
    /// batch (413) on every pass, even after `--retry-failed`; its neighbours never reached the
    /// server. Now the batch goes again one create per request, and that create alone is refused.
    /// (Here the server takes 64 KB a request, and the note is 130 KB: the same refusal, without
    /// indexing megabytes beside the rest of the suite.)
    @Test func aCreateTooLargeForARequestIsRefusedAloneNotWithItsBatch() async throws {
        let small: (inout ServerConfiguration) -> Void = { $0.maxBodySize = 64 * 1024 }
        try await SyncHarness.with(configure: small) { h in
            let type = try await h.type()
            var events = (0..<5).map { h.event(type, offset: Double($0)) }
            events[2].notes = String(repeating: "a" + String(repeating: "\u{301}", count: 7), count: 9_000)
            for event in events { try await h.store.createEvent(event) }
            _ = await h.engine.sync(full: false)
            var others = Set(events.map(\.id.description))
            others.remove(events[2].id.description)
            #expect(try await h.serverEventIds() == others)
            #expect(try await h.store.outboxCounts() == (pending: 0, failed: 1))
        }
    }

    /// A batch key the server already holds with another body (`422 idempotency_key_reused`) is
    /// not "still being applied": the batch goes one by one, each item under its entry's key,
    /// instead of being retried under the same key for ever.
    @Test func aReusedBatchKeyGoesOneByOneNotRetriedForEver() async throws {
        try await SyncHarness.with { h in
            var (_, events) = try await Self.synced(3, h)
            for index in events.indices {
                events[index].notes = "reused \(index)"
                try await h.store.updateEvent(events[index])
            }
            h.api.fail(
                "editEvents",
                with: .conflict(
                    APIProblem(status: 422, code: ProblemCode.idempotencyKeyReused, title: "Idempotency key reused")))
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(h.api.calls("updateEvent").map(\.ids) == events.map { [$0.id.description] })
            #expect(try await h.store.outboxCounts() == (pending: 0, failed: 0))
            for event in events {
                #expect(try await h.direct.event(id: event.id).value.notes == event.notes)
            }
        }
    }
}
