import Crypto
import Foundation
import NIOHTTP1
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyModels
import TrendyServerTestSupport
import TrendyTestSupport

@testable import TrendyServer

@Suite(.timeLimit(.minutes(5)))
struct IdempotencyTests {
    @Test func replayReturnsTheStoredAnswer() async throws {
        try await ServerHarness.with { h in
            let (api, session) = try await h.newUserClient()
            let body = #"{"name":"Tea"}"#
            let headers = [("Authorization", "Bearer \(session.accessToken)"), ("Idempotency-Key", "k-1")]
            let first = try await h.raw(.POST, "/api/v1/event-types", body: body, headers: headers)
            let second = try await h.raw(.POST, "/api/v1/event-types", body: body, headers: headers)
            #expect(first.status == 201)
            #expect(second.status == 201)
            #expect(second.body == first.body)
            #expect(second.headers.first(name: "Idempotent-Replayed") == "true")
            #expect(first.headers.first(name: "Idempotent-Replayed") == nil)
            #expect(try await api.listEventTypes().count == 1)
            // The same JSON with other whitespace (a client re-encoding its retry) is the same body.
            let respaced = try await h.raw(
                .POST, "/api/v1/event-types", body: "{ \"name\" :\n \"Tea\" }", headers: headers)
            #expect(respaced.status == 201)
            #expect(respaced.headers.first(name: "Idempotent-Replayed") == "true")
            let different = try await h.raw(.POST, "/api/v1/event-types", body: #"{"name":"Coffee"}"#, headers: headers)
            #expect(different.status == 422)
            #expect(different.json["code"] as? String == "idempotency_key_reused")
            // The same key on another path is another key.
            let elsewhere = try await h.raw(
                .PATCH, "/api/v1/users/onboarding", body: #"{"current_step":"auth"}"#, headers: headers)
            #expect(elsewhere.status == 200)
        }
    }

    @Test func keysAreScopedPerUser() async throws {
        try await ServerHarness.with { h in
            let a = try await h.signUp()
            let b = try await h.signUp()
            let body = #"{"name":"Tea"}"#
            let ra = try await h.raw(
                .POST, "/api/v1/event-types", body: body,
                headers: [("Authorization", "Bearer \(a.accessToken)"), ("Idempotency-Key", "shared")])
            let rb = try await h.raw(
                .POST, "/api/v1/event-types", body: body,
                headers: [("Authorization", "Bearer \(b.accessToken)"), ("Idempotency-Key", "shared")])
            #expect(ra.status == 201)
            #expect(rb.status == 201)
            #expect(ra.json["id"] as? String != rb.json["id"] as? String)
        }
    }

    @Test func concurrentFirstRequestsRunOnce() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let before = try await api.latestCursor().cursor
            let batch = (0..<20).map { h.event(type, at: h.clock.now.addingTimeInterval(Double(-1_000 - $0))) }
            let results = try await withThrowingTaskGroup(of: EventBatchResponse.self) { group in
                for _ in 0..<8 { group.addTask { try await api.createEvents(batch, idempotencyKey: "same-key") } }
                var all: [EventBatchResponse] = []
                for try await r in group { all.append(r) }
                return all
            }
            #expect(results.count == 8)
            #expect(results.allSatisfy { $0 == results[0] })
            #expect(results[0].created == 20)
            #expect(try await api.latestCursor().cursor - before == 20)
        }
    }

    /// A key held by a request that is still running (here: a claim made straight in the store,
    /// as another instance's would be) makes a second request wait, then answer 409 — it never
    /// runs the operation too; once the holder answers, the key replays that answer.
    @Test func aKeyHeldByARunningRequestIs409ThenReplays() async throws {
        let configuration = ServerConfiguration.testing { $0.idempotencyPatience = .milliseconds(300) }
        try await ServerHarness.with(configuration) { h in
            let (api, session) = try await h.newUserClient()
            let body = #"{"name":"Held"}"#
            let hash = SHA256.hash(data: Idempotency.canonical(Data(body.utf8))).map { String(format: "%02x", $0) }
                .joined()
            let claim = try await h.server.store.claimIdempotencyKey(
                userId: session.user.id, method: "POST", path: "/api/v1/event-types", key: "held", bodyHash: hash,
                token: "elsewhere", now: h.clock.now, maxAge: 86_400, lease: 60)
            #expect(claim == .claimed)
            let headers = [("Authorization", "Bearer \(session.accessToken)"), ("Idempotency-Key", "held")]
            let waiting = try await h.raw(.POST, "/api/v1/event-types", body: body, headers: headers)
            #expect(waiting.status == 409)
            #expect(waiting.json["code"] as? String == ProblemCode.conflict)
            #expect(try await api.listEventTypes().isEmpty, "the operation did not run")
            let answer = Data(#"{"answered":"elsewhere"}"#.utf8)
            try await h.server.store.storeIdempotentResponse(
                userId: session.user.id, method: "POST", path: "/api/v1/event-types", key: "held", token: "elsewhere",
                response: StoredResponse(bodyHash: hash, status: 201, body: answer), now: h.clock.now)
            let replayed = try await h.raw(.POST, "/api/v1/event-types", body: body, headers: headers)
            #expect(replayed.status == 201 && replayed.body == answer)
            #expect(replayed.headers.first(name: "Idempotent-Replayed") == "true")
        }
    }

    @Test func keysExpireAfterADay() async throws {
        try await ServerHarness.with { h in
            let (_, session) = try await h.newUserClient()
            let headers = [("Authorization", "Bearer \(session.accessToken)"), ("Idempotency-Key", "old")]
            _ = try await h.raw(.PATCH, "/api/v1/users/onboarding", body: #"{"current_step":"auth"}"#, headers: headers)
            h.clock.advance(86_401)
            // The token has expired by now too; sign in again for a fresh one.
            let fresh = try await h.raw(
                .POST, "/auth/v1/token?grant_type=refresh_token", body: #"{"refresh_token":"\#(session.refreshToken)"}"#
            )
            let token = fresh.json["access_token"] as? String ?? ""
            let again = try await h.raw(
                .PATCH, "/api/v1/users/onboarding", body: #"{"current_step":"permissions"}"#,
                headers: [("Authorization", "Bearer \(token)"), ("Idempotency-Key", "old")])
            #expect(again.status == 200)
            #expect(again.headers.first(name: "Idempotent-Replayed") == nil)
        }
    }
}
