import Foundation
import NIOHTTP1
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyModels
import TrendyServerTestSupport
import TrendyTestSupport

/// Echo suppression (D57, issue 35): `GET /changes?omit_device=` leaves out the changes that
/// device made and holds already — and sends back every own change something else reached the
/// entity before, so the device's pull never leaves an older value standing. On both stores.
@Suite(.timeLimit(.minutes(5)))
struct EchoSuppressionFeedTests {
    func note(_ text: String) -> EventUpdate {
        var update = EventUpdate()
        update.notes = .set(text)
        return update
    }

    /// The changes of the feed after `since` as `device` reads them: (entity id, operation).
    func feed(_ api: LiveTrendyAPIClient, since: Int64, omitting device: String?) async throws -> [String] {
        try await api.changes(since: since, limit: 1000, omitting: device).changes
            .filter { $0.entityType == .event }.map { "\($0.operation.rawValue) \($0.entityId)" }
    }

    /// Creates `events` in one batch sent by `device`.
    func create(_ api: LiveTrendyAPIClient, _ events: [Event], device: String) async throws {
        try await ChangeBase.$current.withValue(ChangeBase(version: 0, deviceId: device)) {
            _ = try await api.createEvents(events, idempotencyKey: nil)
        }
    }

    func edit(_ api: LiveTrendyAPIClient, _ id: UUIDv7, _ text: String, device: String, base: Int64) async throws {
        try await ChangeBase.$current.withValue(ChangeBase(version: base, deviceId: device)) {
            _ = try await api.updateEvent(id: id, note(text), idempotencyKey: nil)
        }
    }

    @Test func ownCreatesAndEditsAreLeftOutForTheirDeviceOnly() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let events = (0..<3).map { h.event(type, at: h.clock.now.addingTimeInterval(Double(-10 - $0))) }
            let start = try await api.latestCursor().cursor
            try await create(api, events, device: "A")
            try await edit(api, events[0].id, "from A", device: "A", base: try await api.latestCursor().cursor)
            try await api.deleteEvent(id: events[2].id)  // no device: everyone's
            let all = try await feed(api, since: start, omitting: nil)
            #expect(all.count == 5)
            #expect(try await feed(api, since: start, omitting: "B") == all)
            #expect(try await feed(api, since: start, omitting: "unknown") == all)
            #expect(try await feed(api, since: start, omitting: "A") == ["delete \(events[2].id)"])
            // The page still ends at the newest change: the device is caught up.
            let page = try await api.changes(since: start, limit: 1000, omitting: "A")
            #expect(page.nextCursor == (try await api.latestCursor().cursor))
            #expect(!page.hasMore)
        }
    }

    @Test func anOwnChangeAfterAnotherDevicesComesBack() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let event = h.event(type)
            try await create(api, [event], device: "A")
            let seen = try await api.latestCursor().cursor
            // B changes the note; A, which has not pulled it, changes it twice from the older base.
            try await edit(api, event.id, "from B", device: "B", base: seen)
            try await edit(api, event.id, "A once", device: "A", base: seen)
            try await edit(api, event.id, "A twice", device: "A", base: seen)
            // A's pull applies B's change, so both of A's follow it to put A's note back.
            #expect(try await feed(api, since: seen, omitting: "A").count == 3)
            // B's change came after A's create, which B had not been sent back: B gets it too.
            #expect(try await feed(api, since: seen, omitting: "B").count == 3)
            // Once A has seen everything, its next change is left out again.
            let caughtUp = try await api.latestCursor().cursor
            try await edit(api, event.id, "A again", device: "A", base: caughtUp)
            #expect(try await feed(api, since: caughtUp, omitting: "A").isEmpty)
            // B's next change reaches A; it follows A's left-out one, so B gets it back as well.
            try await edit(api, event.id, "B again", device: "B", base: caughtUp)
            #expect(try await feed(api, since: caughtUp, omitting: "A").count == 1)
            #expect(try await feed(api, since: caughtUp, omitting: "B").count == 2)
            // A change of A's after B's, from a base before B's, comes back to A.
            try await edit(api, event.id, "A last", device: "A", base: caughtUp)
            #expect(try await feed(api, since: caughtUp, omitting: "A").count == 2)
        }
    }

    @Test func anOwnChangeArrivingAfterANewerOwnOneComesBack() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let event = h.event(type)
            try await create(api, [event], device: "A")
            let created = try await api.latestCursor().cursor
            // An edit made before A pulled past its own create comes back (A's pull never passed it).
            try await edit(api, event.id, "early", device: "A", base: created - 1)
            #expect(try await feed(api, since: created, omitting: "A").count == 1)
            let seen = try await api.latestCursor().cursor
            try await edit(api, event.id, "newer", device: "A", base: seen)
            #expect(try await feed(api, since: seen, omitting: "A").isEmpty)
            // A retry of an older edit of A's (made on the same base, sent again after the newer one
            // landed) is not what A shows: it comes back, and A ends where the server is.
            try await edit(api, event.id, "older, retried", device: "A", base: seen)
            #expect(try await feed(api, since: seen, omitting: "A").count == 1)
            #expect(try await api.event(id: event.id).value.notes == "older, retried")
        }
    }

    @Test func aCreateFromAnUnknownDeviceReachesEveryone() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let start = try await api.latestCursor().cursor
            try await create(api, [h.event(type)], device: "unknown")
            #expect(try await feed(api, since: start, omitting: "unknown").count == 1)
        }
    }

    @Test func aTypesCascadeReachesTheDeviceThatDeletedIt() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let events = (0..<2).map { h.event(type, at: h.clock.now.addingTimeInterval(Double(-10 - $0))) }
            try await create(api, events, device: "A")
            let seen = try await api.latestCursor().cursor
            try await ChangeBase.$current.withValue(ChangeBase(version: seen, deviceId: "A")) {
                try await api.deleteEventType(id: type.id)
            }
            #expect(Set(try await feed(api, since: seen, omitting: "A")) == Set(events.map { "delete \($0.id)" }))
        }
    }

    @Test func pagesOfOnlyOwnChangesMoveTheCursorOn() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let start = try await api.latestCursor().cursor
            let own = (0..<5).map { h.event(type, at: h.clock.now.addingTimeInterval(Double(-10 - $0))) }
            try await create(api, own, device: "A")
            let other = h.event(type, at: h.clock.now.addingTimeInterval(-100))
            _ = try await api.createEvents([other], idempotencyKey: nil)
            var cursor = start
            var pages: [[String]] = []
            while true {
                let page = try await api.changes(since: cursor, limit: 2, omitting: "A")
                pages.append(page.changes.map(\.entityId))
                #expect(page.nextCursor > cursor)
                cursor = page.nextCursor
                if !page.hasMore { break }
            }
            #expect(pages == [[], [], [other.id.description]])
            #expect(cursor == (try await api.latestCursor().cursor))
        }
    }

    @Test func aBadDeviceNameIsRefused() async throws {
        try await ServerHarness.with { h in
            let (_, session) = try await h.newUserClient()
            let auth = [("Authorization", "Bearer \(session.accessToken)")]
            for device in ["", String(repeating: "d", count: 101)] {
                let r = try await h.raw(.GET, "/api/v1/changes?omit_device=\(device)", headers: auth)
                #expect(r.status == 422)
            }
        }
    }
}
