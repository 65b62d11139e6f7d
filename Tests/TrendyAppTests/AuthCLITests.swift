import Foundation
import Synchronization
import Testing
import TrendyLogging
import TrendyServer
import TrendyServerTestSupport
import TrendyTestSupport

/// The real `trendy` binary against the real dev server on loopback.
@Suite(.timeLimit(.minutes(5)))
struct AuthCLITests {
    static func withServer(
        tokenLifetime: Duration = .seconds(3_600), configure: (inout ServerConfiguration) -> Void = { _ in },
        now: @escaping @Sendable () -> Date = Date.init, _ body: (RunningServer) async throws -> Void
    ) async throws {
        let c = ServerConfiguration.testing { c in
            c.accessTokenLifetime = tokenLifetime
            c.refreshReuseInterval = .seconds(0)
            configure(&c)
        }
        try await RunningTestServer.with(c, now: now) { test in try await body(test.running) }
    }

    func trendy(_ args: [String], _ dir: TemporaryDirectory, _ server: RunningServer?, stdin: String? = nil)
        async throws -> TrendyProcess.Result
    {
        var full = args + ["--data-dir", dir.path]
        if let server { full += ["--api-url", server.baseURL.absoluteString] }
        return try await TrendyProcess.run(full, stdin: stdin)
    }

    func json(_ r: TrendyProcess.Result) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    func storedSession(_ dir: TemporaryDirectory) -> [String: Any]? {
        guard let data = FileManager.default.contents(atPath: dir.url.appendingPathComponent("session.json").path),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return object["session"] as? [String: Any]
    }

    /// Issue 32, item 3: an install belongs to the server it signed in on. Started without
    /// `--api-url` it keeps to that server (it used to go to the embedded backend, which rejected
    /// the session, and the session was deleted); a server given explicitly is used but does not
    /// become the install's while it is signed in; signed out, the next sign-in's server is.
    @Test func anInstallKeepsToTheServerItSignedInOn() async throws {
        try await Self.withServer { server in
            let dir = TemporaryDirectory("trendy-it", create: false)
            let signup = try await trendy(
                ["signup", "--email", "home@example.com", "--password-stdin"], dir, server, stdin: "password-cli-1\n")
            #expect(signup.status == 0, "\(signup.stderr)")
            let bare = try await trendy(["whoami"], dir, nil)
            #expect(bare.status == 0 && bare.stdout.contains("Signed in as home@example.com"), "\(bare.stderr)")
            #expect(storedSession(dir) != nil, "the session is kept")
            let dead = try await TrendyProcess.run([
                "sync", "--data-dir", dir.path, "--api-url", "http://127.0.0.1:9",
            ])
            #expect(dead.status == 69, "offline on the server given: \(dead.stderr)")
            let again = try await trendy(["whoami"], dir, nil)
            #expect(again.stdout.contains("Signed in as home@example.com"), "still its own server: \(again.stderr)")
            #expect(storedSession(dir) != nil)
            // Another real Trendy server, which rejects the session (outside tester: it signed the
            // install out, and server.json was then forgotten).
            try await Self.withServer { other in
                let elsewhere = try await trendy(["whoami"], dir, other)
                #expect(elsewhere.status != 0)
            }
            #expect(storedSession(dir) != nil, "the install's session survives another server's rejection")
            let home = try await trendy(["whoami"], dir, nil)
            #expect(home.stdout.contains("Signed in as home@example.com"), "\(home.stderr)")
        }
    }

    @Test func signupWhoamiLogoutAndTheSessionFile() async throws {
        try await Self.withServer { server in
            let dir = TemporaryDirectory("trendy-it", create: false)
            let signup = try await trendy(
                ["signup", "--email", "cli@example.com", "--password-stdin", "--json"], dir, server,
                stdin: "password-cli-1\n")
            #expect(signup.status == 0, "\(signup.stderr)")
            #expect(json(signup)["email"] as? String == "cli@example.com")
            let file = dir.url.appendingPathComponent("session.json").path
            #expect(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int == 0o600)
            let whoami = try await trendy(["whoami", "--json"], dir, server)
            #expect(whoami.status == 0, "\(whoami.stderr)")
            #expect(json(whoami)["verified"] as? Bool == true)
            #expect((json(whoami)["server"] as? [String: Any])?["event_count"] as? Int == 0)
            let human = try await trendy(["whoami"], dir, server)
            #expect(human.stdout.contains("Signed in as cli@example.com"))
            let logout = try await trendy(["logout", "--scope", "global"], dir, server)
            #expect(logout.status == 0)
            #expect(!FileManager.default.fileExists(atPath: file))
            let after = try await trendy(["whoami"], dir, server)
            #expect(after.status == 77)
            #expect(after.stderr.contains("not signed in"))
            let login = try await trendy(
                ["login", "--email", "CLI@example.com", "--password-stdin"], dir, server, stdin: "password-cli-1\n")
            #expect(login.status == 0, "\(login.stderr)")
        }
    }

    @Test func failuresHaveClearMessagesAndExitCodes() async throws {
        try await Self.withServer { server in
            let dir = TemporaryDirectory("trendy-it", create: false)
            _ = try await trendy(
                ["signup", "--email", "x@example.com", "--password-stdin"], dir, server, stdin: "password-x-1\n")
            let exists = try await trendy(
                ["signup", "--email", "x@example.com", "--password-stdin", "--json"], dir, server,
                stdin: "password-x-1\n")
            #expect(exists.status == 65)
            #expect((json(exists)["error"] as? [String: Any])?["code"] as? String == "user_already_exists")
            let wrong = try await trendy(
                ["login", "--email", "x@example.com", "--password-stdin"], dir, server, stdin: "nope-nope\n")
            #expect(wrong.status == 77)
            #expect(wrong.stderr.contains("Wrong email or password"))
            let weak = try await trendy(
                ["signup", "--email", "y@example.com", "--password-stdin"], dir, server, stdin: "short\n")
            #expect(weak.status == 65)
            let badEmail = try await trendy(
                ["login", "--email", "nope", "--password-stdin"], dir, server, stdin: "password-1\n")
            #expect(badEmail.status == 65)
            let noStdin = try await trendy(["login", "--email", "x@example.com"], dir, server, stdin: "")
            #expect(noStdin.status == 64)
            #expect(noStdin.stderr.contains("--password-stdin"))
            let badURL = try await TrendyProcess.run(["whoami", "--data-dir", dir.path, "--api-url", "ftp://x"])
            #expect(badURL.status == 64)
        }
        let dir = TemporaryDirectory("trendy-it", create: false)
        let offline = try await TrendyProcess.run(
            [
                "login", "--email", "x@example.com", "--password-stdin", "--data-dir", dir.path, "--api-url",
                "http://127.0.0.1:1",
            ],
            stdin: "password-x-1\n")
        #expect(offline.status == 69)
        #expect(offline.stderr.contains("The server at 127.0.0.1:1 refused the connection. Nothing was changed."))
    }

    /// A copy of a data directory whose original has since refreshed its session holds a refresh
    /// token already used: the server ends the session at the copy's first refresh. Its sync says
    /// so with 77 (signed out), not 75 "waits to retry after a temporary failure" — which it said,
    /// with the next command saying "not signed in" (found copying a device for a benchmark).
    @Test func aSessionEndedByAReusedRefreshTokenSaysSignedOutNotWaiting() async throws {
        // Three seconds, as AuthChaosTests: on a saturated machine a token of one second expired
        // between the original's refresh and its use (its sync failed in a full run).
        try await Self.withServer(tokenLifetime: .seconds(3)) { server in
            let original = TemporaryDirectory("trendy-it", create: false)
            let copy = TemporaryDirectory("trendy-it", create: false)
            let signup = try await trendy(
                ["signup", "--email", "copy@example.com", "--password-stdin"], original, server,
                stdin: "password-copy-1\n")
            #expect(signup.status == 0, "\(signup.stderr)")
            try FileManager.default.copyItem(at: original.url, to: copy.url)
            try await Task.sleep(for: .milliseconds(3_200))
            let refreshed = try await trendy(["sync"], original, server)
            #expect(refreshed.status == 0, "\(refreshed.stderr)")
            let sync = try await trendy(["sync", "--json"], copy, server)
            #expect(sync.status == 77, "\(sync.stdout) \(sync.stderr)")
            #expect(try await trendy(["whoami"], copy, server).status == 77)
        }
    }

    @Test func thePasswordChangesAndOtherDevicesAreSignedOut() async throws {
        try await Self.withServer { server in
            let phone = TemporaryDirectory("trendy-it", create: false)
            let laptop = TemporaryDirectory("trendy-it", create: false)
            let signup = try await trendy(
                ["signup", "--email", "pw@example.com", "--password-stdin"], phone, server, stdin: "password-old-1\n")
            #expect(signup.status == 0, "\(signup.stderr)")
            #expect(
                try await trendy(
                    ["login", "--email", "pw@example.com", "--password-stdin"], laptop, server,
                    stdin: "password-old-1\n"
                ).status == 0)
            let weak = try await trendy(["account", "password", "--password-stdin"], phone, server, stdin: "short\n")
            #expect(weak.status == 65)
            let same = try await trendy(
                ["account", "password", "--password-stdin"], phone, server, stdin: "password-old-1\n")
            #expect(same.status == 65)
            #expect(same.stderr.contains("must differ"))
            let changed = try await trendy(
                ["account", "password", "--password-stdin", "--json"], phone, server, stdin: "password-new-2\n")
            #expect(changed.status == 0, "\(changed.stderr)")
            #expect(json(changed)["changed"] as? Bool == true)
            // This device stays signed in; the other one's session ended.
            #expect(try await trendy(["whoami"], phone, server).status == 0)
            // The laptop learns it from its next sync: 77 (signed out), not a sync failure (1), and
            // what it logged meanwhile stays queued.
            #expect(try await trendy(["types", "add", "Tea"], laptop, server).status == 0)
            let sync = try await trendy(["sync", "--json"], laptop, server)
            #expect(sync.status == 77, "\(sync.stdout) \(sync.stderr)")
            #expect((json(sync)["error"] as? [String: Any])?["code"] as? String == "session_revoked")
            #expect(try await trendy(["whoami"], laptop, server).status == 77)
            let old = try await trendy(
                ["login", "--email", "pw@example.com", "--password-stdin"], laptop, server, stdin: "password-old-1\n")
            #expect(old.status == 77)
            let new = try await trendy(
                ["login", "--email", "pw@example.com", "--password-stdin"], laptop, server, stdin: "password-new-2\n")
            #expect(new.status == 0)
        }
        let signedOut = try await TrendyProcess.run(
            [
                "account", "password", "--password-stdin", "--data-dir",
                TemporaryDirectory("trendy-it", create: false).path,
            ], stdin: "x\n")
        #expect(signedOut.status == 77)
    }

    /// GoTrue's secure password change: a session more than a day old needs the code the server
    /// mails; without a terminal the command says to run again with `--code`.
    @Test func aPasswordChangeInAnOldSessionTakesTheMailedCode() async throws {
        let mail = TemporaryDirectory("trendy-it", create: false)
        let offset = Mutex<TimeInterval>(0)
        let serverClock: @Sendable () -> Date = { Date().addingTimeInterval(offset.withLock { $0 }) }
        let configure: (inout ServerConfiguration) -> Void = { c in
            c.mailDirectory = mail.path
            c.passwordChangeRequiresReauthentication = true
        }
        try await Self.withServer(tokenLifetime: .seconds(48 * 3_600), configure: configure, now: serverClock) {
            server in
            let dir = TemporaryDirectory("trendy-it", create: false)
            let signup = try await trendy(
                ["signup", "--email", "old@example.com", "--password-stdin"], dir, server, stdin: "password-one-1\n")
            #expect(signup.status == 0, "\(signup.stderr)")
            offset.withLock { $0 = 25 * 3_600 }
            let asked = try await trendy(
                ["account", "password", "--password-stdin", "--json"], dir, server, stdin: "password-two-2\n")
            #expect(asked.status == 77, "\(asked.stderr)")
            let error = json(asked)["error"] as? [String: Any]
            #expect(error?["code"] as? String == "reauthentication_needed")
            #expect((error?["message"] as? String)?.contains("mailed a code to old@example.com") == true)
            #expect((error?["message"] as? String)?.contains("run again with --code") == true)
            let mails = try DevMail.messages(in: mail.url)
            #expect(mails.count == 1)
            let code = try #require(mails.first?.code)
            let wrong = try await trendy(
                ["account", "password", "--password-stdin", "--code", code == "000000" ? "111111" : "000000"], dir,
                server, stdin: "password-two-2\n")
            #expect(wrong.status == 77)
            #expect(wrong.stderr.contains("wrong, used up or expired"))
            let changed = try await trendy(
                ["account", "password", "--password-stdin", "--code", String(code)], dir, server,
                stdin: "password-two-2\n")
            #expect(changed.status == 0, "\(changed.stderr)")
            // Within the minute no new code is sent: the command says so (75), never "mailed".
            let recent = try await trendy(
                ["account", "password", "--password-stdin", "--json"], dir, server, stdin: "password-three-3\n")
            #expect(recent.status == 75, "\(recent.stderr)")
            let recentError = json(recent)["error"] as? [String: Any]
            #expect(recentError?["code"] as? String == "reauthentication_code_recent")
            #expect(try DevMail.messages(in: mail.url).count == 1)
            // A code that cannot be one is refused here (64) and costs none of the server's tries.
            for bad in ["abc", "12345", "1234567", "１２３４５６"] {
                let r = try await trendy(
                    ["account", "password", "--password-stdin", "--code", bad], dir, server, stdin: "password-three-3\n"
                )
                #expect(r.status == 64, "\(bad): \(r.stderr)")
            }
            let long = try await trendy(
                ["account", "password", "--password-stdin"], dir, server,
                stdin: String(repeating: "p", count: 73) + "\n")
            #expect(long.status == 65)
            #expect(long.stderr.contains("at most 72 bytes"))
            let other = TemporaryDirectory("trendy-it", create: false)
            let login = try await trendy(
                ["login", "--email", "old@example.com", "--password-stdin"], other, server, stdin: "password-two-2\n")
            #expect(login.status == 0)
        }
    }

    @Test func expiredTokensRefreshTransparentlyAndTheRotatedOneIsSaved() async throws {
        try await Self.withServer(tokenLifetime: .seconds(2)) { server in
            let dir = TemporaryDirectory("trendy-it", create: false)
            _ = try await trendy(
                ["signup", "--email", "short@example.com", "--password-stdin"], dir, server, stdin: "password-short-1\n"
            )
            let first = try #require(storedSession(dir))
            try await Task.sleep(for: .seconds(3))
            let whoami = try await trendy(["whoami", "--json"], dir, server)
            #expect(whoami.status == 0, "\(whoami.stderr)")
            #expect(json(whoami)["verified"] as? Bool == true)
            let second = try #require(storedSession(dir))
            #expect(second["refresh_token"] as? String != first["refresh_token"] as? String)
            // Presenting the rotated token again is theft: the server ends the session, and the
            // next command notices and signs out.
            let reuse = try await RawHTTP.post(
                server.baseURL.absoluteString + "/auth/v1/token?grant_type=refresh_token",
                json: #"{"refresh_token":"\#(first["refresh_token"] as? String ?? "")"}"#)
            #expect(reuse.contains("refresh_token_already_used"))
            let revoked = try await trendy(["whoami"], dir, server)
            #expect(revoked.status == 77)
            #expect(storedSession(dir) == nil)
        }
    }

    @Test func logsOfAWholeRunHoldNoSecrets() async throws {
        try await Self.withServer { server in
            let dir = TemporaryDirectory("trendy-it", create: false)
            let signup = try await trendy(
                ["signup", "--email", "quiet@example.com", "--password-stdin", "--log-level", "trace"], dir, server,
                stdin: "password-quiet-1\n")
            let session = try #require(storedSession(dir))
            let whoami = try await trendy(["whoami", "--log-level", "trace"], dir, server)
            let export = dir.url.appendingPathComponent("bundle.txt")
            _ = try await trendy(["logs", "export", export.path], dir, server)
            let logs = try String(contentsOf: export, encoding: .utf8)
            #expect(logs.contains("Signed up"))
            for text in [signup.stderr, whoami.stderr, logs] {
                for secret in [
                    "password-quiet-1", session["access_token"] as? String ?? "-",
                    session["refresh_token"] as? String ?? "-",
                    "quiet@example.com",
                ] {
                    #expect(!text.contains(secret))
                }
            }
        }
    }

    @Test func theEmbeddedBackendPersistsBetweenRuns() async throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        let signup = try await trendy(
            ["signup", "--email", "local@example.com", "--password-stdin"], dir, nil, stdin: "password-local-1\n")
        #expect(signup.status == 0, "\(signup.stderr)")
        let whoami = try await trendy(["whoami", "--json"], dir, nil)
        #expect(whoami.status == 0, "\(whoami.stderr)")
        #expect(json(whoami)["verified"] as? Bool == true)
        #expect(FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("server.sqlite").path))
    }
}
