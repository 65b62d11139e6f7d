import Foundation
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyAPITesting
import TrendyModels
import TrendySync
import TrendySyncLive

/// Echo suppression (D57, issue 35): a pass does not pull back what it pushed, and a change of
/// another device that the server placed before this device's own edit never overwrites it.
@Suite(.timeLimit(.minutes(6)))
struct EchoSuppressionTests {
    /// The event changes of the feed after `since` as `device` reads it.
    func eventChanges(_ h: SyncHarness, since: Int64, omitting device: String?) async throws -> Int {
        var count = 0
        var cursor = since
        while true {
            let page = try await h.direct.changes(since: cursor, limit: 1000, omitting: device)
            count += page.changes.filter { $0.entityType == .event }.count
            cursor = page.nextCursor
            if !page.hasMore { return count }
        }
    }

    @Test func aPassDoesNotPullBackWhatItPushed() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            var events = (0..<120).map { h.event(type, offset: Double($0)) }
            for event in events { try await h.store.createEvent(event) }
            #expect(await h.engine.sync(full: false).outcome == .ok)
            let device = try await h.store.deviceId()
            #expect(try await eventChanges(h, since: 0, omitting: device) == 0)
            #expect(try await eventChanges(h, since: 0, omitting: nil) == 120)
            let before = try await h.store.cursor() ?? -1
            #expect(before == (try await h.direct.latestCursor().cursor))
            for index in events.indices.prefix(30) {
                events[index].notes = "edited \(index)"
                try await h.store.updateEvent(events[index])
            }
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await eventChanges(h, since: before, omitting: device) == 0)
            #expect(try await h.store.cursor() == (try await h.direct.latestCursor().cursor))
            for event in events.prefix(30) {
                #expect(try await h.store.event(id: event.id)?.value.notes == event.notes)
                #expect(try await h.direct.event(id: event.id).value.notes == event.notes)
            }
        }
    }

    @Test func pagesOfOnlyOwnChangesTakeThePullToTheEnd() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            for offset in 0..<45 { try await h.store.createEvent(h.event(type, offset: Double(offset))) }
            let engine = h.engine(on: h.store, pageSize: 10)
            #expect(await engine.sync(full: false).outcome == .ok)
            // Every page after the type's create is this device's own: the pull goes on to the end.
            #expect(try await h.store.cursor() == (try await h.direct.latestCursor().cursor))
        }
    }

    @Test func anOlderChangeOfAnotherDeviceNeverOverwritesAnOwnEdit() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            let original = h.event(type, note: "first")
            try await h.store.createEvent(original)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            let seen = try await h.direct.latestCursor().cursor
            // Device B changes the note and the time; this device, not having pulled, changes the note.
            var fromB = EventUpdate()
            fromB.notes = .set("from B")
            fromB.timestamp = .set(original.timestamp.addingTimeInterval(-60))
            try await ChangeBase.$current.withValue(ChangeBase(version: seen, deviceId: "device-B")) {
                _ = try await h.direct.updateEvent(id: original.id, fromB, idempotencyKey: nil)
            }
            var mine = original
            mine.notes = "from here"
            try await h.store.updateEvent(mine)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            // The server took this device's note (the later change) and B's time; so does the device.
            let server = try await h.direct.event(id: original.id).value
            #expect(server.notes == "from here")
            #expect(abs(server.timestamp.timeIntervalSince(original.timestamp) + 60) < 0.001)
            #expect(try await h.store.event(id: original.id)?.value == server)
        }
    }
}
