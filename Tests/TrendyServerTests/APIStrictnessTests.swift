import Foundation
import Testing
import TrendyServer

/// Issue 20, API: `null` for a field that cannot be null is refused (it was ignored with a 200
/// and a new `updated_at`), and an event may only name one of its user's geofences (another
/// user's id was stored).
@Suite(.timeLimit(.minutes(1)))
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
