import Foundation
import NIOHTTP1
import Testing
import TrendyAPI
import TrendyLogging
import TrendyModels
import TrendyServer
import TrendyServerTestSupport
import TrendyTestSupport

@Suite(.timeLimit(.minutes(5)))
struct AuthServerTests {
    @Test func signupReturnsASessionWithSignedClaims() async throws {
        try await ServerHarness.with { h in
            let session = try await h.signUp("New.User@Example.com")
            #expect(session.tokenType == "bearer")
            #expect(session.user.email == "new.user@example.com")
            #expect(session.expiresIn == 3600)
            #expect(session.expiresAt == Int(h.clock.now.timeIntervalSince1970) + 3600)
            let payload = session.accessToken.split(separator: ".")[1]
            var b64 = payload.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while b64.count % 4 != 0 { b64 += "=" }
            let claims = try JSONSerialization.jsonObject(with: Data(base64Encoded: b64)!) as? [String: Any]
            #expect(claims?["sub"] as? String == session.user.id)
            #expect(claims?["role"] as? String == "authenticated")
            #expect(claims?["aud"] as? String == "authenticated")
            #expect(claims?["email"] as? String == "new.user@example.com")
            #expect(claims?["session_id"] is String)
            #expect(claims?["iss"] is String)
            #expect(claims?["iat"] is Double || claims?["iat"] is Int)
        }
    }

    @Test func existingUserWeakPasswordAndBadEmailAreRefused() async throws {
        try await ServerHarness.with { h in
            _ = try await h.signUp("taken@example.com")
            let again = try await h.raw(
                .POST, "/auth/v1/signup", body: #"{"email":"TAKEN@example.com","password":"password-1"}"#)
            #expect(again.status == 422)
            #expect(again.json["error_code"] as? String == "user_already_exists")
            #expect(again.json["code"] as? Int == 422)
            #expect(again.json["msg"] is String)
            let weak = try await h.raw(.POST, "/auth/v1/signup", body: #"{"email":"w@example.com","password":"123"}"#)
            #expect(weak.status == 422)
            #expect(weak.json["error_code"] as? String == "weak_password")
            let bad = try await h.raw(
                .POST, "/auth/v1/signup", body: #"{"email":"not-an-email","password":"password-1"}"#)
            #expect(bad.status == 400)
            #expect(bad.json["error_code"] as? String == "validation_failed")
            let malformed = try await h.raw(.POST, "/auth/v1/signup", body: "{oops")
            #expect(malformed.status == 400)
        }
    }

    @Test func modernErrorShapeWhenTheClientAsksForIt() async throws {
        try await ServerHarness.with { h in
            let r = try await h.raw(
                .POST, "/auth/v1/token?grant_type=password", body: #"{"email":"x@example.com","password":"nope-nope"}"#,
                headers: [("X-Supabase-Api-Version", "2024-01-01")])
            #expect(r.status == 400)
            #expect(r.json["code"] as? String == "invalid_credentials")
            #expect(r.json["message"] as? String == "Invalid login credentials")
            #expect(r.json["msg"] == nil)
        }
    }

    @Test func unknownUserAndWrongPasswordLookTheSame() async throws {
        try await ServerHarness.with { h in
            _ = try await h.signUp("real@example.com", password: "right-password")
            let wrong = try await h.raw(
                .POST, "/auth/v1/token?grant_type=password",
                body: #"{"email":"real@example.com","password":"wrong-pass"}"#)
            let unknown = try await h.raw(
                .POST, "/auth/v1/token?grant_type=password",
                body: #"{"email":"ghost@example.com","password":"wrong-pass"}"#)
            #expect(wrong.status == 400)
            #expect(wrong.body == unknown.body)
            #expect(wrong.json["error_code"] as? String == "invalid_credentials")
            let ok = try await h.raw(
                .POST, "/auth/v1/token?grant_type=password",
                body: #"{"email":"REAL@example.com","password":"right-password"}"#)
            #expect(ok.status == 200)
            let other = try await h.raw(.POST, "/auth/v1/token?grant_type=magic", body: "{}")
            #expect(other.json["error_code"] as? String == "unsupported_grant_type")
        }
    }

    func refresh(_ h: ServerHarness, _ token: String) async throws -> ServerHarness.Raw {
        try await h.raw(.POST, "/auth/v1/token?grant_type=refresh_token", body: #"{"refresh_token":"\#(token)"}"#)
    }

    @Test func refreshRotatesAndToleratesReuseInsideTheWindow() async throws {
        try await ServerHarness.with { h in
            let session = try await h.signUp()
            let first = try await refresh(h, session.refreshToken)
            #expect(first.status == 200)
            let rotated = try TrendyJSON.decoder().decode(GoTrueSession.self, from: first.body)
            #expect(rotated.refreshToken != session.refreshToken)
            h.clock.advance(5)
            let reused = try await refresh(h, session.refreshToken)
            #expect(reused.status == 200)
            #expect(
                try TrendyJSON.decoder().decode(GoTrueSession.self, from: reused.body).refreshToken
                    == rotated.refreshToken)
            let next = try await refresh(h, rotated.refreshToken)
            #expect(next.status == 200)
        }
    }

    @Test func reuseOutsideTheWindowRevokesTheSession() async throws {
        try await ServerHarness.with { h in
            let session = try await h.signUp()
            let first = try await refresh(h, session.refreshToken)
            let rotated = try TrendyJSON.decoder().decode(GoTrueSession.self, from: first.body)
            h.clock.advance(60)
            let late = try await refresh(h, session.refreshToken)
            #expect(late.status == 400)
            #expect(late.json["error_code"] as? String == "refresh_token_already_used")
            // The whole session is gone: its current refresh token and its access token too.
            let current = try await refresh(h, rotated.refreshToken)
            #expect(current.json["error_code"] as? String == "refresh_token_not_found")
            let user = try await h.raw(
                .GET, "/auth/v1/user", headers: [("Authorization", "Bearer \(rotated.accessToken)")])
            #expect(user.status == 403)
            #expect(user.json["error_code"] as? String == "session_not_found")
            let unknown = try await refresh(h, "never-issued")
            #expect(unknown.json["error_code"] as? String == "refresh_token_not_found")
        }
    }

    @Test func userEndpointChecksTheToken() async throws {
        try await ServerHarness.with { h in
            let session = try await h.signUp("me@example.com")
            let ok = try await h.raw(
                .GET, "/auth/v1/user", headers: [("Authorization", "Bearer \(session.accessToken)")])
            #expect(ok.status == 200)
            #expect(ok.json["email"] as? String == "me@example.com")
            let none = try await h.raw(.GET, "/auth/v1/user")
            #expect(none.status == 401)
            #expect(none.json["error_code"] as? String == "no_authorization")
            // A different first character of the signature: it carries six whole bits of it. (The
            // last character carries four bits and two unused ones, so replacing the last two with
            // "xx" left the signature as it was when they were "x" and one of "w"…"z": the token
            // was accepted once in about a thousand runs.)
            var parts = session.accessToken.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            let first = try #require(parts.last?.first)
            parts[parts.count - 1] = (first == "A" ? "B" : "A") + parts[parts.count - 1].dropFirst()
            let tampered = parts.joined(separator: ".")
            let bad = try await h.raw(.GET, "/auth/v1/user", headers: [("Authorization", "Bearer \(tampered)")])
            #expect(bad.status == 403)
            #expect(bad.json["error_code"] as? String == "bad_jwt")
            h.clock.advance(3_601)
            let expired = try await h.raw(
                .GET, "/auth/v1/user", headers: [("Authorization", "Bearer \(session.accessToken)")])
            #expect(expired.status == 403)
            #expect(expired.json["error_code"] as? String == "bad_jwt")
        }
    }

    @Test func logoutScopes() async throws {
        try await ServerHarness.with { h in
            _ = try await h.signUp("multi@example.com", password: "password-123")
            func signIn() async throws -> GoTrueSession {
                let r = try await h.raw(
                    .POST, "/auth/v1/token?grant_type=password",
                    body: #"{"email":"multi@example.com","password":"password-123"}"#)
                return try TrendyJSON.decoder().decode(GoTrueSession.self, from: r.body)
            }
            func active(_ s: GoTrueSession) async throws -> Bool {
                try await h.raw(.GET, "/auth/v1/user", headers: [("Authorization", "Bearer \(s.accessToken)")]).status
                    == 200
            }
            let a = try await signIn()
            let b = try await signIn()
            let c = try await signIn()
            let others = try await h.raw(
                .POST, "/auth/v1/logout?scope=others", headers: [("Authorization", "Bearer \(a.accessToken)")])
            #expect(others.status == 204)
            #expect(try await active(a))
            #expect(try await !active(b))
            #expect(try await !active(c))
            let local = try await h.raw(
                .POST, "/auth/v1/logout?scope=local", headers: [("Authorization", "Bearer \(a.accessToken)")])
            #expect(local.status == 204)
            #expect(try await !active(a))
            let d = try await signIn()
            let e = try await signIn()
            _ = try await h.raw(.POST, "/auth/v1/logout", headers: [("Authorization", "Bearer \(d.accessToken)")])
            #expect(try await !active(e))
            let bad = try await h.raw(
                .POST, "/auth/v1/logout?scope=everything", headers: [("Authorization", "Bearer \(e.accessToken)")])
            #expect(bad.status == 400)
            let anonymous = try await h.raw(.POST, "/auth/v1/logout")
            #expect(anonymous.status == 401)
        }
    }

    @Test func authIsRateLimitedPerAddressAndRecovers() async throws {
        try await ServerHarness.with(.testing { $0.authRateLimit = .init(capacity: 2, refillPerSecond: 1) }) { h in
            for _ in 0..<2 {
                let r = try await h.raw(
                    .POST, "/auth/v1/token?grant_type=password", body: #"{"email":"a@b.co","password":"x"}"#)
                #expect(r.status == 400)
            }
            let limited = try await h.raw(
                .POST, "/auth/v1/token?grant_type=password", body: #"{"email":"a@b.co","password":"x"}"#)
            #expect(limited.status == 429)
            #expect(limited.headers.first(name: "Retry-After") == "1")
            #expect(limited.json["error_code"] as? String == "over_request_rate_limit")
            h.clock.advance(1.5)
            let again = try await h.raw(
                .POST, "/auth/v1/token?grant_type=password", body: #"{"email":"a@b.co","password":"x"}"#)
            #expect(again.status == 400)
        }
    }

    @Test func passwordsAndTokensNeverReachTheLogs() async throws {
        try await ServerHarness.with { h in
            let session = try await h.signUp("secretive@example.com", password: "hunter2-hunter2")
            _ = try await h.raw(.GET, "/auth/v1/user", headers: [("Authorization", "Bearer \(session.accessToken)")])
            let text = h.logs.rendered(.json)
            #expect(!text.isEmpty)
            #expect(!text.contains("hunter2"))
            #expect(!text.contains(session.accessToken))
            #expect(!text.contains(session.refreshToken))
            #expect(!text.contains("secretive@example.com"))
        }
    }
}
