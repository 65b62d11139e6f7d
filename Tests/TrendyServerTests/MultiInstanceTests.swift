import Foundation
import NIOHTTP1
import Synchronization
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyModels
import TrendyServer
import TrendyServerTestSupport
import TrendyTestSupport

/// Several `trendy-server` instances on one PostgreSQL database behave as one server: a client may
/// reach any instance with any request (issue 23). Runs when `TRENDY_TEST_DATABASE_URL` names a
/// PostgreSQL server (`.ci/run` starts one).
@Suite(.enabled(if: TestDatabase.url != nil, "needs TRENDY_TEST_DATABASE_URL"), .timeLimit(.minutes(5)))
struct MultiInstanceTests {
    static func refresh(_ server: RunningTestServer, _ token: String) async throws -> RawResponse {
        try await server.raw(
            .POST, "/auth/v1/token?grant_type=refresh_token", body: #"{"refresh_token":"\#(token)"}"#)
    }

    static func session(_ response: RawResponse) throws -> GoTrueSession {
        try TrendyJSON.decoder().decode(GoTrueSession.self, from: response.body)
    }

    /// Instances started with no configured signing key agree on one (the first stored), so a
    /// token one issues the others accept.
    @Test func aSessionFromOneInstanceWorksOnTheOthers() async throws {
        var configuration = ServerConfiguration.testing()
        configuration.jwtSecret = nil
        try await RunningTestServer.instances(3, configuration) { servers in
            let session = try await servers[0].signUp()
            for server in servers {
                let user = try await server.raw(
                    .GET, "/auth/v1/user", headers: [("Authorization", "Bearer \(session.accessToken)")])
                #expect(user.status == 200)
                #expect(user.json["id"] as? String == session.user.id)
            }
            // One account per email, whichever instance a second sign-up reaches.
            let again = try await servers[2].raw(
                .POST, "/auth/v1/signup",
                body: #"{"email":"\#(session.user.email)","password":"password-1"}"#)
            #expect(again.status == 422)
        }
    }

    /// A refresh token rotated on one instance and presented to another within the reuse window
    /// gets the session's current token; after the window the session is revoked everywhere.
    @Test func refreshReuseActsAsOnOneInstance() async throws {
        let clock = ManualClock(Date())
        let now: @Sendable () -> Date = { clock.now }
        try await RunningTestServer.instances(2, now: now) { servers in
            let (a, b) = (servers[0], servers[1])
            let session = try await a.signUp()
            let rotated = try Self.session(try await Self.refresh(a, session.refreshToken))
            clock.advance(5)
            let reused = try await Self.refresh(b, session.refreshToken)
            #expect(reused.status == 200)
            #expect(try Self.session(reused).refreshToken == rotated.refreshToken)
            clock.advance(60)
            let late = try await Self.refresh(b, session.refreshToken)
            #expect(late.status == 400)
            #expect(late.json["error_code"] as? String == "refresh_token_already_used")
            let current = try await Self.refresh(a, rotated.refreshToken)
            #expect(current.json["error_code"] as? String == "refresh_token_not_found")
            let user = try await a.raw(
                .GET, "/auth/v1/user", headers: [("Authorization", "Bearer \(rotated.accessToken)")])
            #expect(user.status == 403)
        }
    }

    /// The same refresh token sent to two instances at the same moment: one rotates it, the other
    /// answers with the token that replaced it — never two sessions' worth of tokens.
    @Test func oneTokenRefreshedOnTwoInstancesAtOnceRotatesOnce() async throws {
        try await RunningTestServer.instances(2) { servers in
            for _ in 0..<10 {
                let session = try await servers[0].signUp()
                async let first = Self.refresh(servers[0], session.refreshToken)
                async let second = Self.refresh(servers[1], session.refreshToken)
                let answers = try await [first, second]
                #expect(answers.map(\.status) == [200, 200])
                let tokens = try Set(answers.map { try Self.session($0).refreshToken })
                #expect(tokens.count == 1)
                #expect(!tokens.contains(session.refreshToken))
            }
        }
    }

    /// The same `Idempotency-Key` and body sent to two instances at once runs once: the event
    /// type (its id chosen by the server) exists once, and both answers are the same.
    @Test func oneIdempotencyKeyOnTwoInstancesAtOnceCreatesOneEntity() async throws {
        try await RunningTestServer.instances(2) { servers in
            let session = try await servers[0].signUp()
            for round in 0..<15 {
                let headers = [("Authorization", "Bearer \(session.accessToken)"), ("Idempotency-Key", "key-\(round)")]
                let body = #"{"name":"Type \#(round)"}"#
                async let first = servers[0].raw(.POST, "/api/v1/event-types", body: body, headers: headers)
                async let second = servers[1].raw(.POST, "/api/v1/event-types", body: body, headers: headers)
                let answers = try await [first, second]
                #expect(answers.map(\.status) == [201, 201], "round \(round)")
                #expect(answers[0].body == answers[1].body, "round \(round)")
                let replays = answers.filter { $0.headers.first(name: "Idempotent-Replayed") == "true" }
                #expect(replays.count == 1, "round \(round)")
            }
            let types = try await servers[1].client(session.accessToken).listEventTypes()
            #expect(types.count == 15)
        }
    }
}
