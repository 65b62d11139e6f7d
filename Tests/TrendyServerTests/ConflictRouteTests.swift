import Foundation
import NIOHTTP1
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyModels
import TrendyServerTestSupport

/// The server side of field-level sync (D37): per-field versions, the later change wins and the
/// replaced value is kept in the feed, edit vs delete, and no resurrection by a retried create.
@Suite(.timeLimit(.minutes(5)))
struct ConflictRouteTests {
    func conflicts(_ api: some TrendyAPIClient) async throws -> [SyncConflict] {
        try await api.changes(since: 0, limit: 1000).changes.compactMap {
            if case .conflict(let c) = $0.data { return c }
            return nil
        }
    }

    func update(_ api: some TrendyAPIClient, _ id: UUIDv7, base: Int64, device: String, _ body: EventUpdate)
        async throws
    {
        try await ChangeBase.$current.withValue(ChangeBase(version: base, deviceId: device)) {
            _ = try await api.updateEvent(id: id, body, idempotencyKey: nil)
        }
    }

    /// A new user's event whose note devices A then B set on the same base (B's also sets an
    /// end): A's note is kept as a conflict. Answers the client, the event and the base.
    func noteSetOnTwoDevices(_ h: ServerHarness) async throws -> (any TrendyAPIClient, Event, Int64) {
        let (api, _) = try await h.newUserClient()
        let type = try await h.makeType(api)
        let event = h.event(type)
        _ = try await api.createEvent(event, idempotencyKey: nil)
        let base = try await api.latestCursor().cursor
        var a = EventUpdate()
        a.notes = .set("from A")
        try await update(api, event.id, base: base, device: "A", a)
        var b = EventUpdate()
        b.notes = .set("from B")
        b.endDate = .set(event.timestamp.addingTimeInterval(60))
        try await update(api, event.id, base: base, device: "B", b)
        return (api, event, base)
    }

    @Test func sameFieldFromAnotherDeviceAfterTheBaseIsKeptAsAConflict() async throws {
        try await ServerHarness.with { h in
            let (api, event, base) = try await noteSetOnTwoDevices(h)
            #expect(try await api.event(id: event.id).value.notes == "from B")
            let kept = try await conflicts(api)
            #expect(kept.count == 1)
            #expect(kept.first?.field == "notes")
            #expect(kept.first?.lostValue == "\"from A\"")
            #expect(kept.first?.keptValue == "\"from B\"")
            #expect(kept.first?.lostBy == "A")
            #expect(kept.first?.keptBy == "B")
            // A new device reads them without the feed (its download starts at the latest cursor).
            #expect(try await api.conflicts() == kept)
            // A device's own later change, a change based on what it saw, and an equal value are no conflicts.
            var again = EventUpdate()
            again.notes = .set("B again")
            try await update(api, event.id, base: base, device: "B", again)
            let seen = try await api.latestCursor().cursor
            var c = EventUpdate()
            c.notes = .set("C saw it")
            try await update(api, event.id, base: seen, device: "C", c)
            var same = EventUpdate()
            same.notes = .set("C saw it")
            try await update(api, event.id, base: base, device: "D", same)
            #expect(try await conflicts(api).count == 1)
            // Without a base (an older or official client): last write wins, nothing recorded.
            var plain = EventUpdate()
            plain.notes = .set("plain")
            _ = try await api.updateEvent(id: event.id, plain, idempotencyKey: nil)
            #expect(try await conflicts(api).count == 1)
        }
    }

    /// Issue 32, item 4: a device that restored or dismissed a conflict resolves it for every
    /// device: it leaves the list, the feed says so, resolving it again changes nothing, and
    /// another user's conflict (or none) is not found.
    @Test func aResolvedConflictIsClosedForEveryDevice() async throws {
        try await ServerHarness.with { h in
            let (api, _, _) = try await noteSetOnTwoDevices(h)
            let kept = try #require(try await api.conflicts().first)
            let before = try await api.latestCursor().cursor
            try await api.resolveConflict(id: kept.id)
            #expect(try await api.conflicts().isEmpty)
            let feed = try await api.changes(since: before, limit: 100).changes
            #expect(feed.map(\.operation) == [.delete] && feed.first?.entityId == kept.id)
            try await api.resolveConflict(id: kept.id.uppercased())
            #expect(try await api.changes(since: before, limit: 100).changes.count == 1, "again: nothing new")
            let (other, _) = try await h.newUserClient()
            await #expect(throws: TrendyAPIError.self) { try await other.resolveConflict(id: kept.id) }
            await #expect(throws: TrendyAPIError.self) { try await api.resolveConflict(id: UUID().uuidString) }
            await #expect(throws: TrendyAPIError.self) { try await api.resolveConflict(id: "not a uuid") }
        }
    }

    /// Found by an outsider: the same value losing again later (after a restore, say) was
    /// swallowed as a duplicate of its first loss.
    @Test func theSameValueLosingAgainIsANewConflict() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let event = h.event(type)
            _ = try await api.createEvent(event, idempotencyKey: nil)
            let base = try await api.latestCursor().cursor
            var x = EventUpdate()
            x.notes = .set("x")
            var y = EventUpdate()
            y.notes = .set("y")
            try await update(api, event.id, base: base, device: "A", x)
            try await update(api, event.id, base: base, device: "B", y)  // x lost
            try await update(api, event.id, base: base, device: "A", x)  // y lost
            try await update(api, event.id, base: base, device: "B", y)  // x lost again
            let lost = try await conflicts(api).map(\.lostValue)
            #expect(lost == ["\"x\"", "\"y\"", "\"x\""])
        }
    }

    @Test func anEditOfADeletedEntityIsGoneAndKept() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let event = h.event(type)
            _ = try await api.createEvent(event, idempotencyKey: nil)
            try await api.deleteEvent(id: event.id)
            var edit = EventUpdate()
            edit.notes = .set("late edit")
            await #expect(throws: TrendyAPIError.self) { try await update(api, event.id, base: 0, device: "B", edit) }
            do {
                try await update(api, event.id, base: 0, device: "B", edit)
            } catch let error as TrendyAPIError {
                guard case .server(let status, let problem) = error else { throw error }
                #expect(status == 410)
                #expect(problem?.code == ProblemCode.gone)
            }
            let kept = try await conflicts(api)
            #expect(kept.count == 1, "a retried edit records nothing twice")
            #expect(kept.first?.kind == .deleted)
            #expect(kept.first?.lostValue.contains("late edit") == true)
            #expect(kept.first?.entity?.contains("late edit") == true)
            // A never-existing id stays a plain 404.
            await #expect(throws: TrendyAPIError.self) {
                try await update(api, h.ids.next(), base: 0, device: "B", edit)
            }
        }
    }

    @Test func aDeleteThatHadNotSeenAnEditKeepsIt() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let event = h.event(type)
            _ = try await api.createEvent(event, idempotencyKey: nil)
            let base = try await api.latestCursor().cursor
            var edit = EventUpdate()
            edit.notes = .set("A's edit")
            try await update(api, event.id, base: base, device: "A", edit)
            try await ChangeBase.$current.withValue(ChangeBase(version: base, deviceId: "B")) {
                try await api.deleteEvent(id: event.id)
            }
            let kept = try await conflicts(api)
            #expect(kept.first?.kind == .deleted)
            #expect(kept.first?.lostBy == "A")
            #expect(kept.first?.keptBy == "B")
            #expect(kept.first?.lostValue == #"{"notes":"A's edit"}"#)
        }
    }

    /// Found by the simulation: a create retried after another device deleted the entity
    /// (its first answer lost) brought the entity back. It creates nothing and says the id was
    /// deleted (`deleted` in a batch, 410 alone): the sender tells a late resend from an archive
    /// imported again, which it sends again under a new id.
    @Test func aRetriedCreateOfADeletedEntityDoesNotBringItBack() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let event = h.event(type)
            _ = try await api.createEvents([event], idempotencyKey: nil)
            try await api.deleteEvent(id: event.id)
            let retried = try await api.createEvents([event], idempotencyKey: nil)
            #expect(retried.results.first?.status == .deleted)
            #expect(retried.results.first?.id == event.id.description)
            #expect(retried.deleted == 1 && retried.existing == 0 && retried.created == 0)
            let single = await #expect(throws: TrendyAPIError.self) {
                try await api.createEvent(event, idempotencyKey: nil)
            }
            guard case .server(status: 410, _) = single else {
                Issue.record("a single create of a deleted id: expected 410, got \(String(describing: single))")
                return
            }
            await #expect(throws: TrendyAPIError.self) { try await api.event(id: event.id) }
            #expect(try await api.syncSummary().eventCount == 0)
        }
    }

    @Test func malformedBaseHeadersAreRefused() async throws {
        try await ServerHarness.with { h in
            let (api, session) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let event = h.event(type)
            _ = try await api.createEvent(event, idempotencyKey: nil)
            let auth = ("Authorization", "Bearer \(session.accessToken)")
            for headers in [
                [auth, (APIPaths.baseVersionHeader, "-1"), (APIPaths.deviceIdHeader, "d")],
                [auth, (APIPaths.baseVersionHeader, "x"), (APIPaths.deviceIdHeader, "d")],
                [
                    auth, (APIPaths.baseVersionHeader, "3"),
                    (APIPaths.deviceIdHeader, String(repeating: "d", count: 101)),
                ],
            ] {
                let r = try await h.raw(.PATCH, "/api/v1/events/\(event.id)", body: #"{"notes":"x"}"#, headers: headers)
                #expect(r.status == 400)
            }
        }
    }

    /// A base without a device id (the description cannot make one header need the other) is
    /// compared as the device `unknown`: another device's later change is still a conflict.
    @Test func aBaseWithoutADeviceIsTheUnknownDevice() async throws {
        try await ServerHarness.with { h in
            let (api, session) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let event = h.event(type)
            _ = try await api.createEvent(event, idempotencyKey: nil)
            let base = try await api.latestCursor().cursor
            var phone = EventUpdate()
            phone.notes = .set("from the phone")
            try await update(api, event.id, base: base, device: "phone", phone)
            let r = try await h.raw(
                .PATCH, "/api/v1/events/\(event.id)", body: #"{"notes":"no device"}"#,
                headers: [("Authorization", "Bearer \(session.accessToken)"), (APIPaths.baseVersionHeader, "\(base)")])
            #expect(r.status == 200)
            let lost = try await conflicts(api).filter { $0.field == "notes" }
            #expect(lost.map(\.lostValue) == [#""from the phone""#])
            #expect(lost.first?.keptBy == "unknown")
        }
    }
}

/// An outsider found that an edit of a deleted entity skipped every check: a NUL, a 5,000
/// character name, `radius: -5` were answered 410 and kept in a conflict a client can restore.
@Suite(.timeLimit(.minutes(5)))
struct DeletedEditValidationTests {
    @Test func anInvalidEditOfADeletedEntityIsA422AndKeepsNothing() async throws {
        try await ServerHarness.with { h in
            let (api, session) = try await h.newUserClient()
            let auth = [("Authorization", "Bearer \(session.accessToken)"), ("Content-Type", "application/json")]
            let type = try await h.makeType(api)
            let doomed = try await h.makeType(api, "Doomed")
            let event = h.event(type)
            _ = try await api.createEvent(event, idempotencyKey: nil)
            let fence = Geofence(id: h.ids.next(), name: "Home", center: .init(latitude: 1, longitude: 2), radius: 100)
            _ = try await api.createGeofence(fence, idempotencyKey: nil)
            try await api.deleteEventType(id: doomed.id)
            try await api.deleteEvent(id: event.id)
            try await api.deleteGeofence(id: fence.id)
            let before = try await api.changes(since: 0, limit: 1000).changes.count
            let cases: [(String, String)] = [
                ("/api/v1/event-types/\(doomed.id)", #"{"name":"a\u0000b"}"#),
                ("/api/v1/event-types/\(doomed.id)", #"{"color":"red"}"#),
                ("/api/v1/event-types/\(doomed.id)", #"{"name":"\#(String(repeating: "n", count: 5_000))"}"#),
                ("/api/v1/events/\(event.id)", #"{"notes":"\#(String(repeating: "x", count: 20_000))"}"#),
                ("/api/v1/events/\(event.id)", #"{"location":{"latitude":500,"longitude":0}}"#),
                ("/api/v1/events/\(event.id)", #"{"geofence_id":"\#(h.ids.next())"}"#),
                ("/api/v1/geofences/\(fence.id)", #"{"radius":-5}"#),
                ("/api/v1/geofences/\(fence.id)", #"{"name":" "}"#),
            ]
            for (path, body) in cases {
                let r = try await h.raw(.PATCH, path, body: body, headers: auth)
                #expect(r.status == 422, "\(path) \(body.prefix(60))")
            }
            #expect(try await api.changes(since: 0, limit: 1000).changes.count == before)
            // A valid edit of a deleted entity is still 410 and kept.
            let valid = try await h.raw(
                .PATCH, "/api/v1/geofences/\(fence.id)", body: #"{"radius":200}"#, headers: auth)
            #expect(valid.status == 410)
            #expect(try await api.changes(since: 0, limit: 1000).changes.count == before + 1)
        }
    }
}
