import Foundation
import NIOHTTP1
import Testing
import TrendyAPI
import TrendyServer
import TrendyServerTestSupport
import TrendyTestSupport

/// `PUT /auth/v1/user` beyond the password: user metadata as GoTrue merges it, and GoTrue's
/// reauthentication (a code by mail) for password changes in old sessions.
@Suite(.timeLimit(.minutes(5)))
struct UserUpdateTests {
    static let modern = [("X-Supabase-Api-Version", "2024-01-01")]

    func put(_ h: ServerHarness, _ token: String, _ body: String) async throws -> ServerHarness.Raw {
        try await h.raw(
            .PUT, "/auth/v1/user", body: body, headers: [("Authorization", "Bearer \(token)")] + Self.modern)
    }

    func metadata(_ raw: ServerHarness.Raw) -> NSDictionary? { raw.json["user_metadata"] as? NSDictionary }

    @Test func metadataIsSetAtSignupMergedByUpdatesAndRemovedByNull() async throws {
        try await ServerHarness.with { h in
            let signup = try await h.raw(
                .POST, "/auth/v1/signup",
                body: #"{"email":"meta@example.com","password":"password-123","data":{"name":"Ana","theme":"dark"}}"#)
            #expect(signup.status == 200)
            let user = signup.json["user"] as? [String: Any]
            #expect((user?["user_metadata"] as? NSDictionary) == ["name": "Ana", "theme": "dark"])
            let token = try #require(signup.json["access_token"] as? String)

            let merged = try await put(h, token, #"{"data":{"theme":null,"age":31,"tags":["a"]}}"#)
            #expect(merged.status == 200)
            #expect(metadata(merged) == ["name": "Ana", "age": 31, "tags": ["a"]])
            let read = try await h.raw(.GET, "/auth/v1/user", headers: [("Authorization", "Bearer \(token)")])
            #expect(metadata(read) == ["name": "Ana", "age": 31, "tags": ["a"]])
            // A later sign-in carries it too.
            let again = try await h.raw(
                .POST, "/auth/v1/token?grant_type=password",
                body: #"{"email":"meta@example.com","password":"password-123"}"#)
            #expect(
                ((again.json["user"] as? [String: Any])?["user_metadata"] as? NSDictionary)?["name"] as? String == "Ana"
            )
        }
    }

    @Test func badMetadataIsRefusedInGoTruesWords() async throws {
        try await ServerHarness.with { h in
            let session = try await h.signUp()
            for body in [#"{"data":"text"}"#, #"{"data":[1]}"#, #"{"password":5}"#] {
                let answer = try await put(h, session.accessToken, body)
                #expect(answer.status == 400, "\(body)")
                #expect(answer.json["code"] as? String == "bad_json", "\(body)")
            }
            let large = try await put(
                h, session.accessToken, #"{"data":{"blob":"\#(String(repeating: "x", count: 20_000))"}}"#)
            #expect(large.status == 422)
            #expect(large.json["code"] as? String == "validation_failed")
            // Each part small, the whole too large: the merged metadata is what is limited.
            let half = String(repeating: "y", count: 9_000)
            #expect(try await put(h, session.accessToken, #"{"data":{"a":"\#(half)"}}"#).status == 200)
            let second = try await put(h, session.accessToken, #"{"data":{"b":"\#(half)"}}"#)
            #expect(second.status == 422)
            #expect(try await put(h, session.accessToken, #"{"data":{"a":null}}"#).status == 200)
            let admin = try await put(h, session.accessToken, #"{"app_metadata":{"role":"admin"}}"#)
            #expect(admin.status == 403)
            #expect(admin.json["code"] as? String == "not_admin")
            let read = try await h.raw(
                .GET, "/auth/v1/user", headers: [("Authorization", "Bearer \(session.accessToken)")])
            #expect(metadata(read) == [:])
        }
    }

    /// The codes the server "mailed", newest last; every mail owner-only and carrying a code.
    func codes(in directory: URL) throws -> [String] {
        try DevMail.messages(in: directory).map { message in
            #expect(message.mode == 0o600)
            return try #require(message.code)
        }
    }

    func refreshed(_ h: ServerHarness, _ refreshToken: String) async throws -> (access: String, refresh: String) {
        let answer = try await h.raw(
            .POST, "/auth/v1/token?grant_type=refresh_token", body: #"{"refresh_token":"\#(refreshToken)"}"#)
        #expect(answer.status == 200)
        return (
            try #require(answer.json["access_token"] as? String), try #require(answer.json["refresh_token"] as? String)
        )
    }

    @Test func aPasswordChangeInAnOldSessionNeedsTheMailedCode() async throws {
        let mail = FileManager.default.temporaryDirectory.appendingPathComponent("mail-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: mail) }
        let configuration = ServerConfiguration.testing {
            $0.mailDirectory = mail.path
            $0.passwordChangeRequiresReauthentication = true
        }
        try await ServerHarness.with(configuration) { h in
            let session = try await h.signUp("reauth@example.com")
            // A fresh session changes its password without a code.
            #expect(try await put(h, session.accessToken, #"{"password":"second-password"}"#).status == 200)

            h.clock.advance(25 * 3_600)
            let (token, refresh) = try await refreshed(h, session.refreshToken)
            let needed = try await put(h, token, #"{"password":"third-password"}"#)
            #expect(needed.status == 400)
            #expect(needed.json["code"] as? String == "reauthentication_needed")
            #expect(needed.headers.first(name: "X-Supabase-Api-Version") == "2024-01-01")
            // No code asked for yet: any nonce is invalid.
            let early = try await put(h, token, #"{"password":"third-password","nonce":"123456"}"#)
            #expect(early.json["code"] as? String == "reauthentication_not_valid")

            let asked = try await h.raw(
                .GET, "/auth/v1/reauthenticate", headers: [("Authorization", "Bearer \(token)")])
            #expect(asked.status == 200)
            #expect(asked.body == Data("{}".utf8))
            let tooSoon = try await h.raw(
                .GET, "/auth/v1/reauthenticate", headers: [("Authorization", "Bearer \(token)")] + Self.modern)
            #expect(tooSoon.status == 429)
            #expect(tooSoon.json["code"] as? String == "over_email_send_rate_limit")
            let code = try #require(try codes(in: mail).last)
            #expect(code.count == 6 && code.allSatisfy(\.isNumber))

            let wrongCode = code == "000000" ? "111111" : "000000"
            let wrong = try await put(h, token, #"{"password":"third-password","nonce":"\#(wrongCode)"}"#)
            #expect(wrong.status == 422)
            #expect(wrong.json["code"] as? String == "reauthentication_not_valid")
            let right = try await put(h, token, #"{"password":"third-password","nonce":"\#(code)"}"#)
            #expect(right.status == 200)
            // Used up.
            let reused = try await put(h, token, #"{"password":"fourth-password","nonce":"\#(code)"}"#)
            #expect(reused.json["code"] as? String == "reauthentication_not_valid")
            let signIn = try await h.raw(
                .POST, "/auth/v1/token?grant_type=password",
                body: #"{"email":"reauth@example.com","password":"third-password"}"#)
            #expect(signIn.status == 200)

            // Five wrong codes burn the right one; an hour-old code has expired.
            h.clock.advance(61)
            _ = try await h.raw(.GET, "/auth/v1/reauthenticate", headers: [("Authorization", "Bearer \(token)")])
            let second = try #require(try codes(in: mail).last)
            let other = second == "000000" ? "111111" : "000000"
            for _ in 0..<5 { _ = try await put(h, token, #"{"password":"fifth-password","nonce":"\#(other)"}"#) }
            let burned = try await put(h, token, #"{"password":"fifth-password","nonce":"\#(second)"}"#)
            #expect(burned.json["code"] as? String == "reauthentication_not_valid")
            h.clock.advance(61)
            _ = try await h.raw(.GET, "/auth/v1/reauthenticate", headers: [("Authorization", "Bearer \(token)")])
            let third = try #require(try codes(in: mail).last)
            h.clock.advance(3_601)
            let (fresh, _) = try await refreshed(h, refresh)  // the same old session, a new access token
            let expired = try await put(h, fresh, #"{"password":"fifth-password","nonce":"\#(third)"}"#)
            #expect(expired.json["code"] as? String == "reauthentication_not_valid")
        }
    }

    /// A mail that cannot be written is a 500 and leaves no code behind: asking again at once
    /// works, instead of waiting out the minute for a code nobody received.
    @Test func aMailThatCannotBeWrittenCanBeAskedForAgainAtOnce() async throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("mail-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: base) }
        let mail = base.appendingPathComponent("box")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: mail.path, contents: Data("a file, not a folder".utf8)))
        try await ServerHarness.with(.testing { $0.mailDirectory = mail.path }) { h in
            let session = try await h.signUp()
            let auth = [("Authorization", "Bearer \(session.accessToken)")] + Self.modern
            let failed = try await h.raw(.GET, "/auth/v1/reauthenticate", headers: auth)
            #expect(failed.status == 500)
            #expect(failed.json["code"] as? String == "unexpected_failure")
            try FileManager.default.removeItem(at: mail)
            let again = try await h.raw(.GET, "/auth/v1/reauthenticate", headers: auth)
            #expect(again.status == 200)
            #expect(try codes(in: mail).count == 1)
        }
    }

    @Test func withoutAMailDirectoryThereAreNoCodes() async throws {
        try await ServerHarness.with { h in
            let session = try await h.signUp()
            let answer = try await h.raw(
                .GET, "/auth/v1/reauthenticate", headers: [("Authorization", "Bearer \(session.accessToken)")])
            #expect(answer.status == 422)
            #expect(answer.json["error_code"] as? String == "validation_failed")
        }
        let configuration = ServerConfiguration.testing { $0.passwordChangeRequiresReauthentication = true }
        await #expect(throws: ConfigurationError.self) {
            try await ServerHarness.with(configuration) { _ in }
        }
    }
}
