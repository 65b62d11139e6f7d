import Foundation
import NIOHTTP1
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyModels
import TrendyServer
import TrendyServerTestSupport
import TrendyTestSupport

/// Issue 20, API: `null` for a field that cannot be null is refused (it was ignored with a 200
/// and a new `updated_at`), and an event may only name one of its user's geofences (another
/// user's id was stored).
@Suite(.timeLimit(.minutes(5)))
struct APIStrictnessTests {
    @Test func nullForAFieldThatCannotBeNullIsA422() async throws {
        try await ServerHarness.with { h in
            let (_, session) = try await h.newUserClient()
            let auth = [("Authorization", "Bearer \(session.accessToken)"), ("Content-Type", "application/json")]
            let typeId = h.ids.next()
            _ = try await h.raw(.POST, "/api/v1/event-types", body: #"{"id":"\#(typeId)","name":"Tea"}"#, headers: auth)
            for field in ["name", "color", "icon"] {
                let r = try await h.raw(
                    .PATCH, "/api/v1/event-types/\(typeId)", body: #"{"\#(field)":null}"#, headers: auth)
                #expect(r.status == 422, "\(field)")
                #expect(((r.json["errors"] as? [[String: Any]])?.first?["field"] as? String) == field)
            }
            for field in ["completed", "current_step", "notifications_status"] {
                let r = try await h.raw(.PATCH, "/api/v1/users/onboarding", body: #"{"\#(field)":null}"#, headers: auth)
                #expect(r.status == 422, "\(field)")
            }
            // Absent fields are still "unchanged".
            let ok = try await h.raw(.PATCH, "/api/v1/event-types/\(typeId)", body: #"{"icon":"cup"}"#, headers: auth)
            #expect(ok.status == 200)
        }
    }

    @Test func aMethodARouteDoesNotHaveIs405WithAllow() async throws {
        try await ServerHarness.with { h in
            let (_, session) = try await h.newUserClient()
            let auth = [("Authorization", "Bearer \(session.accessToken)")]
            let one = try await h.raw(.POST, "/api/v1/events/\(h.ids.next())", body: "{}", headers: auth)
            #expect(one.status == 405)
            #expect(one.headers.first(name: "Allow") == "DELETE, GET, PATCH")
            #expect(one.json["code"] as? String == "method_not_allowed")
            let list = try await h.raw(.PUT, "/api/v1/event-types", body: "{}", headers: auth)
            #expect(list.status == 405)
            #expect(list.headers.first(name: "Allow") == "GET, POST")
            // No such path at all is still 404.
            #expect(try await h.raw(.GET, "/api/v1/no-such-thing", headers: auth).status == 404)
        }
    }

    @Test func anEventNamesOnlyItsOwnUsersGeofences() async throws {
        try await ServerHarness.with { h in
            func user() async throws -> (auth: [(String, String)], type: String, fence: String) {
                let (_, session) = try await h.newUserClient()
                let auth = [("Authorization", "Bearer \(session.accessToken)"), ("Content-Type", "application/json")]
                let type = h.ids.next().description
                _ = try await h.raw(
                    .POST, "/api/v1/event-types", body: #"{"id":"\#(type)","name":"Walk"}"#, headers: auth)
                let fence = h.ids.next().description
                let made = try await h.raw(
                    .POST, "/api/v1/geofences",
                    body:
                        #"{"id":"\#(fence)","name":"Home","latitude":52.5,"longitude":13.4,"radius":100,"event_type_entry_id":"\#(type)"}"#,
                    headers: auth)
                #expect(made.status == 201)
                return (auth, type, fence)
            }
            let alice = try await user()
            let bob = try await user()
            func event(_ u: (auth: [(String, String)], type: String, fence: String), geofence: String) async throws
                -> Int
            {
                let body =
                    #"{"id":"\#(h.ids.next())","event_type_id":"\#(u.type)","timestamp":"2026-01-0\#(Int.random(in: 1...9))T1\#(Int.random(in: 0...9)):00:00Z","source_type":"geofence","geofence_id":"\#(geofence)"}"#
                return try await h.raw(.POST, "/api/v1/events", body: body, headers: u.auth).status
            }
            #expect(try await event(bob, geofence: alice.fence) == 422)
            #expect(try await event(bob, geofence: h.ids.next().description) == 422)
            #expect(try await event(bob, geofence: bob.fence) == 201)
            // A geofence deleted since (an event logged there before the delete synced) is fine.
            #expect(try await h.raw(.DELETE, "/api/v1/geofences/\(bob.fence)", headers: bob.auth).status == 204)
            #expect(try await event(bob, geofence: bob.fence) == 201)
        }
    }
}

/// What the whole-spec pass (schemathesis, issue 20) found, each pinned down.
@Suite(.timeLimit(.minutes(5)))
struct SpecTruthTests {
    func auth(_ session: GoTrueSession) -> [(String, String)] {
        [("Authorization", "Bearer \(session.accessToken)"), ("Content-Type", "application/json")]
    }

    /// Creates took `null` for fields with a default (`"icon": null` made a circle, `"is_all_day":
    /// null` a false) while the description says they cannot be null; a `null` for a required
    /// field was a 400 while every PATCH says 422.
    @Test func nullOnCreateIsA422ForTheField() async throws {
        try await ServerHarness.with { h in
            let (api, session) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let cases: [(String, String, String)] = [
                ("/api/v1/event-types", #"{"name":"Tea","icon":null}"#, "icon"),
                ("/api/v1/event-types", #"{"name":"Tea","color":null}"#, "color"),
                (
                    "/api/v1/events",
                    #"{"id":"\#(h.ids.next())","event_type_id":"\#(type.id)","timestamp":"2026-01-01T00:00:00Z","is_all_day":null}"#,
                    "is_all_day"
                ),
                (
                    "/api/v1/events",
                    #"{"id":"\#(h.ids.next())","event_type_id":"\#(type.id)","timestamp":"2026-01-01T00:00:00Z","properties":null}"#,
                    "properties"
                ),
                (
                    "/api/v1/events", #"{"id":null,"event_type_id":"\#(type.id)","timestamp":"2026-01-01T00:00:00Z"}"#,
                    "id"
                ),
                (
                    "/api/v1/geofences",
                    #"{"id":"\#(h.ids.next())","name":"Home","latitude":1,"longitude":2,"radius":100,"is_active":null}"#,
                    "is_active"
                ),
            ]
            for (path, body, field) in cases {
                let r = try await h.raw(.POST, path, body: body, headers: auth(session))
                #expect(r.status == 422, "\(path) \(body)")
                #expect(((r.json["errors"] as? [[String: Any]])?.first?["field"] as? String) == field, "\(body)")
            }
            let batch = try await h.raw(
                .POST, "/api/v1/events/batch",
                body:
                    #"{"events":[{"id":"\#(h.ids.next())","event_type_id":"\#(type.id)","timestamp":"2026-01-01T00:00:00Z","source_type":null}]}"#,
                headers: auth(session))
            let item = (batch.json["results"] as? [[String: Any]])?.first?["error"] as? [String: Any]
            #expect(item?["status"] as? Int == 422)
            #expect(((item?["errors"] as? [[String: Any]])?.first?["field"] as? String) == "events[0].source_type")
            #expect(try await api.listEventTypes().count == 1)
            #expect(try await api.listGeofences(active: nil).isEmpty)
        }
    }

    /// A name the description allows is stored: a zero-width space is text (it was trimmed as
    /// white space, so "\u{200B}" was "empty" and "\u{200B}x" became "x"); real white space
    /// around a new type's name is trimmed, as documented.
    @Test func eventTypeNamesAreTrimmedOfWhiteSpaceOnly() async throws {
        try await ServerHarness.with { h in
            let (_, session) = try await h.newUserClient()
            for (sent, stored) in [(#"\u200b"#, "\u{200B}"), (#"\u200bx"#, "\u{200B}x"), (#"  Tea\t"#, "Tea")] {
                let r = try await h.raw(
                    .POST, "/api/v1/event-types", body: #"{"name":"\#(sent)"}"#, headers: auth(session))
                #expect(r.status == 201, "\(sent)")
                #expect(r.json["name"] as? String == stored, "\(sent)")
            }
            let blank = try await h.raw(.POST, "/api/v1/event-types", body: #"{"name":" \t "}"#, headers: auth(session))
            #expect(blank.status == 422)
        }
    }

    /// `/events/batch` is its own route (POST only): the 405 named the methods of `/events/{id}`.
    @Test func aLiteralRouteAllowsOnlyItsOwnMethods() async throws {
        try await ServerHarness.with { h in
            let (_, session) = try await h.newUserClient()
            for method in [HTTPMethod.GET, .PATCH, .DELETE, .OPTIONS] {
                let r = try await h.raw(method, "/api/v1/events/batch", headers: auth(session))
                #expect(r.status == 405)
                #expect(r.headers.first(name: "Allow") == "POST", "\(method)")
            }
        }
    }

    /// `after` and `offset` together skip `offset` events after the key (it was a 422 the
    /// description did not mention); an `after` outside the documented pattern is refused.
    @Test func afterAndOffsetCombineAndAfterFollowsItsPattern() async throws {
        try await ServerHarness.with { h in
            let (api, session) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let events = (0..<6).map { h.event(type, at: h.clock.now.addingTimeInterval(Double(-600 + $0))) }
            _ = try await api.createEvents(events, idempotencyKey: nil)
            let first = try await h.raw(.GET, "/api/v1/events?limit=2", headers: auth(session))
            let next = try #require(first.json["next"] as? String)
            let skipped = try await h.raw(.GET, "/api/v1/events?limit=2&after=\(next)&offset=1", headers: auth(session))
            #expect(skipped.status == 200)
            let ids = (skipped.json["items"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
            #expect(ids == [events[2].id.description, events[1].id.description])
            for bad in ["", "1234567890123456789_a", "+5_a", "5_A"] {
                let r = try await h.raw(.GET, "/api/v1/events?after=\(bad)", headers: auth(session))
                #expect(r.status == 422, "\(bad)")
            }
        }
    }

    /// A device id is checked whenever it is sent (a 101-character one passed without a base).
    @Test func aDeviceIdIsCheckedEvenWithoutABase() async throws {
        try await ServerHarness.with { h in
            let (api, session) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let r = try await h.raw(
                .PATCH, "/api/v1/event-types/\(type.id)", body: #"{"icon":"cup"}"#,
                headers: auth(session) + [(APIPaths.deviceIdHeader, String(repeating: "d", count: 101))])
            #expect(r.status == 400)
            #expect(try await api.eventType(id: type.id).value.icon == type.icon)
        }
    }
}
