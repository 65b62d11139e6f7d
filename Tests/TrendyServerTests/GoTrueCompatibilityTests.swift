import AsyncHTTPClient
import Foundation
import NIOHTTP1
import Testing
import TrendyAPI
import TrendyServer
import TrendyServerTestSupport

/// Issue 20 (first part): the auth API answers as GoTrue does for the official clients — the
/// error shape follows `X-Supabase-Api-Version` and the version is echoed, `weak_password`
/// carries its reasons, Hummingbird's own errors under /auth/v1 are GoTrue-shaped, bcrypt's
/// 72-byte limit is enforced, and an unknown email costs what a wrong password costs.
@Suite(.timeLimit(.minutes(5)))
struct GoTrueCompatibilityTests {
    static let version = ("X-Supabase-Api-Version", "2024-01-01")

    @Test func theErrorShapeFollowsTheRequestedAPIVersionAndEchoesIt() async throws {
        try await ServerHarness.with { h in
            _ = try await h.signUp("taken@example.com")
            let body = #"{"email":"taken@example.com","password":"password-123"}"#
            let legacy = try await h.raw(.POST, "/auth/v1/signup", body: body)
            #expect(legacy.status == 422)
            #expect(legacy.json["code"] as? Int == 422)
            #expect(legacy.json["error_code"] as? String == "user_already_exists")
            #expect(legacy.json["msg"] is String)
            #expect(legacy.headers.first(name: "X-Supabase-Api-Version") == nil)
            for asked in ["2024-01-01", "2025-06-30"] {
                let modern = try await h.raw(
                    .POST, "/auth/v1/signup", body: body, headers: [("X-Supabase-Api-Version", asked)])
                #expect(modern.json["code"] as? String == "user_already_exists", "\(asked)")
                #expect(modern.json["message"] is String)
                #expect(modern.headers.first(name: "X-Supabase-Api-Version") == "2024-01-01", "\(asked)")
            }
            // An unreadable or older version is the initial one.
            for asked in ["garbage", "2023-12-31", "9999"] {
                let old = try await h.raw(
                    .POST, "/auth/v1/signup", body: body, headers: [("X-Supabase-Api-Version", asked)])
                #expect(old.json["error_code"] as? String == "user_already_exists", "\(asked)")
                #expect(old.headers.first(name: "X-Supabase-Api-Version") == nil, "\(asked)")
            }
            let wrong = try await h.raw(
                .POST, "/auth/v1/token?grant_type=password",
                body: #"{"email":"taken@example.com","password":"wrong-password"}"#, headers: [Self.version])
            #expect(wrong.json["code"] as? String == "invalid_credentials")
        }
    }

    @Test func aWeakPasswordCarriesItsReasonsInBothShapes() async throws {
        try await ServerHarness.with { h in
            let body = #"{"email":"weak@example.com","password":"a"}"#
            for headers in [[], [Self.version]] {
                let r = try await h.raw(.POST, "/auth/v1/signup", body: body, headers: headers)
                #expect(r.status == 422)
                #expect((r.json["weak_password"] as? [String: Any])?["reasons"] as? [String] == ["length"])
            }
        }
    }

    @Test func everyAuthAnswerIsGoTrueShapedHummingbirdsOwnToo() async throws {
        try await ServerHarness.with(.testing { $0.maxBodySize = 1_024 }) { h in
            let unknown = try await h.raw(.GET, "/auth/v1/nothing-here")
            #expect(unknown.status == 404)
            #expect(unknown.json["error_code"] as? String == "not_found")
            #expect(unknown.headers.first(name: "Content-Type") == "application/json")
            let method = try await h.raw(.GET, "/auth/v1/signup")
            #expect(method.status == 405)
            #expect(method.json["error_code"] as? String == "method_not_allowed")
            #expect(method.headers.first(name: "Allow") == "POST")
            let large = try await h.raw(
                .POST, "/auth/v1/signup",
                body: #"{"email":"x@example.com","password":""# + String(repeating: "p", count: 4_000) + #""}"#)
            #expect(large.status == 413)
            #expect(large.json["error_code"] as? String == "request_too_large")
            let malformed = try await h.raw(.POST, "/auth/v1/signup", body: "{not json", headers: [Self.version])
            #expect(malformed.status == 400)
            #expect(malformed.json["code"] as? String == "bad_json")
            // The API keeps its problem documents.
            let api = try await h.raw(.GET, "/api/v1/nothing-here")
            #expect(api.headers.first(name: "Content-Type") == "application/problem+json")
        }
    }

    @Test func passwordsLongerThanBcryptReadsAreRefusedNotCut() async throws {
        try await ServerHarness.with { h in
            let long = String(repeating: "a", count: 73)
            let signup = try await h.raw(
                .POST, "/auth/v1/signup", body: #"{"email":"long@example.com","password":"\#(long)"}"#)
            #expect(signup.status == 400)
            #expect(signup.json["error_code"] as? String == "validation_failed")
            // Exactly 72 bytes is fine; its first 72 bytes plus a tail is not the same password.
            let exact = String(repeating: "a", count: 72)
            _ = try await h.signUp("exact@example.com", password: exact)
            let tail = try await h.raw(
                .POST, "/auth/v1/token?grant_type=password",
                body: #"{"email":"exact@example.com","password":"\#(exact)anything"}"#)
            #expect(tail.status == 400)
            #expect(tail.json["error_code"] as? String == "invalid_credentials")
            let right = try await h.raw(
                .POST, "/auth/v1/token?grant_type=password",
                body: #"{"email":"exact@example.com","password":"\#(exact)"}"#)
            #expect(right.status == 200)
        }
    }

    @Test func thePasswordChangesThroughPutUserAndOtherSessionsEnd() async throws {
        try await ServerHarness.with { h in
            let first = try await h.signUp("change@example.com", password: "password-old-1")
            let login = try await h.raw(
                .POST, "/auth/v1/token?grant_type=password",
                body: #"{"email":"change@example.com","password":"password-old-1"}"#)
            let other = try #require(login.json["access_token"] as? String)
            let auth = [("Authorization", "Bearer \(first.accessToken)"), Self.version]
            let same = try await h.raw(.PUT, "/auth/v1/user", body: #"{"password":"password-old-1"}"#, headers: auth)
            #expect(same.status == 422)
            #expect(same.json["code"] as? String == "same_password")
            let weak = try await h.raw(.PUT, "/auth/v1/user", body: #"{"password":"x"}"#, headers: auth)
            #expect((weak.json["weak_password"] as? [String: Any])?["reasons"] as? [String] == ["length"])
            let email = try await h.raw(.PUT, "/auth/v1/user", body: #"{"email":"new@example.com"}"#, headers: auth)
            #expect(email.status == 422)
            let changed = try await h.raw(.PUT, "/auth/v1/user", body: #"{"password":"password-new-2"}"#, headers: auth)
            #expect(changed.status == 200)
            #expect(changed.json["email"] as? String == "change@example.com")
            // The new password signs in, the old one does not; this session lives, the other ended.
            let new = try await h.raw(
                .POST, "/auth/v1/token?grant_type=password",
                body: #"{"email":"change@example.com","password":"password-new-2"}"#)
            #expect(new.status == 200)
            let old = try await h.raw(
                .POST, "/auth/v1/token?grant_type=password",
                body: #"{"email":"change@example.com","password":"password-old-1"}"#)
            #expect(old.status == 400)
            #expect(try await h.raw(.GET, "/auth/v1/user", headers: auth).status == 200)
            #expect(
                try await h.raw(.GET, "/auth/v1/user", headers: [("Authorization", "Bearer \(other)")]).status == 403)
        }
    }

    @Test func settingsAndHealthAnswerAsGoTrue() async throws {
        try await ServerHarness.with { h in
            let settings = try await h.raw(.GET, "/auth/v1/settings")
            #expect(settings.status == 200)
            #expect((settings.json["external"] as? [String: Bool])?["email"] == true)
            #expect(settings.json["disable_signup"] as? Bool == false)
            let health = try await h.raw(.GET, "/auth/v1/health")
            #expect(health.status == 200)
            #expect(health.json["name"] as? String == "GoTrue")
        }
    }

    /// The time of a login with an unknown email and with a known email's wrong password, as
    /// distributions (alternating attempts, medians and quartiles), at a bcrypt cost where
    /// hashing dominates. The unknown email used to answer 20× faster.
    @Test func anUnknownEmailTakesAsLongAsAWrongPassword() async throws {
        try await ServerHarness.with(.testing { $0.bcryptCost = 8 }, realTime: true) { h in
            _ = try await h.signUp("known@example.com")
            func attempt(_ email: String) async throws -> Double {
                let started = ContinuousClock.now
                let r = try await h.raw(
                    .POST, "/auth/v1/token?grant_type=password",
                    body: #"{"email":"\#(email)","password":"not-the-password"}"#)
                #expect(r.status == 400)
                let d = ContinuousClock.now - started
                return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
            }
            _ = try await attempt("warm-up@example.com")
            func quartiles(_ v: [Double]) -> (Double, Double, Double) {
                let s = v.sorted()
                return (s[s.count / 4], s[s.count / 2], s[s.count * 3 / 4])
            }
            // The machine is shared with the rest of the suite: a round whose distributions
            // differ is measured again (at most three rounds). The old leak (20× faster) fails
            // every round; load noise does not fail three in a row.
            var rounds: [String] = []
            for round in 0..<3 {
                var known: [Double] = []
                var unknown: [Double] = []
                for i in 0..<15 {
                    // Alternating which goes first, so a burst of load hits both alike.
                    if i.isMultiple(of: 2) {
                        known.append(try await attempt("known@example.com"))
                        unknown.append(try await attempt("nobody-\(round)-\(i)@example.com"))
                    } else {
                        unknown.append(try await attempt("nobody-\(round)-\(i)@example.com"))
                        known.append(try await attempt("known@example.com"))
                    }
                }
                let (k1, k2, k3) = quartiles(known)
                let (u1, u2, u3) = quartiles(unknown)
                // The middle halves overlap and the medians are within a factor of 1.5.
                if u1 <= k3 && k1 <= u3 && u2 / k2 > 0.67 && u2 / k2 < 1.5 { return }
                rounds.append("known \(k1)…\(k2)…\(k3), unknown \(u1)…\(u2)…\(u3)")
            }
            Issue.record("an unknown email's login time differs from a wrong password's: \(rounds)")
        }
    }
}
