import Foundation
import Logging
import Testing
import TrendyAuth
import TrendyAuthTesting
import TrendyLogging
import TrendyTestSupport

@Suite(.timeLimit(.minutes(5)))
struct AuthControllerTests {
    @Test func launchSnapshotIsSynchronousAndFirstInEveryStream() async {
        let expired = Fixtures.session(n: 1, expiresAt: Date(timeIntervalSince1970: 0))
        let rig = AuthRig(stored: expired)
        #expect(rig.auth.currentUserId == "user-a")
        #expect(rig.auth.currentSession == expired)
        var iterator = rig.auth.events().makeAsyncIterator()
        #expect(await iterator.next() == .initialSession(expired))
        #expect(rig.gateway.calls("refresh") == 0)
    }

    /// Another process of the install signs out, refreshes or signs in as someone else: reading
    /// the stored session again takes the change and announces it; nothing changed, nothing said.
    @Test func aSessionChangedByAnotherProcessIsAdopted() async throws {
        let rig = AuthRig(stored: Fixtures.session(n: 1, expiresAt: Date(timeIntervalSince1970: 4_000_000_000)))
        var events = rig.auth.events().makeAsyncIterator()
        _ = await events.next()
        rig.auth.adoptStoredSession()
        let other = rig.controller()
        _ = await other.signOut(scope: .local)
        rig.auth.adoptStoredSession()
        #expect(rig.auth.currentSession == nil)
        #expect(await events.next() == .signedOut(.userInitiated), "nothing before: an unchanged store says nothing")
        let bob = rig.session(Fixtures.bob, n: 2, in: 600)
        try rig.store.save(bob)
        rig.auth.adoptStoredSession()
        #expect(rig.auth.currentUserId == "user-b")
        #expect(await events.next() == .signedIn(bob))
        let refreshed = rig.session(Fixtures.bob, n: 3, in: 600)
        try rig.store.save(refreshed)
        rig.auth.adoptStoredSession()
        #expect(await events.next() == .tokenRefreshed(refreshed))
    }

    @Test func freshTokensAreUsedAsTheyAre() async throws {
        let rig = AuthRig(stored: nil)
        let s = rig.session(n: 1, in: 600)
        try rig.store.save(s)
        let auth = rig.controller()
        #expect(try await auth.validAccessToken() == s.accessToken)
        #expect(rig.gateway.calls("refresh") == 0)
    }

    @Test func refreshesAheadOfExpiryAndSavesTheRotatedToken() async throws {
        let rig = AuthRig(stored: nil)
        let old = rig.session(n: 1, in: 30)
        try rig.store.save(old)
        let auth = rig.controller()
        let new = rig.session(n: 2, in: 3_600)
        rig.gateway.onRefresh(.session(new))
        #expect(try await auth.validAccessToken() == new.accessToken)
        #expect(rig.gateway.refreshTokensSeen == [old.refreshToken])
        #expect(rig.store.load() == new)
        #expect(auth.currentSession == new)
        // The next refresh presents the rotated token.
        rig.clock.advance(3_560)
        rig.gateway.onRefresh(.session(rig.session(n: 3, in: 3_600)))
        _ = try await auth.validAccessToken()
        #expect(rig.gateway.refreshTokensSeen == [old.refreshToken, new.refreshToken])
    }

    @Test func fiftyConcurrentCallersShareOneRefresh() async throws {
        let rig = AuthRig(stored: nil)
        try rig.store.save(rig.session(n: 1, in: 10))
        let auth = rig.controller()
        let new = rig.session(n: 2, in: 3_600)
        rig.gateway.onRefresh(.session(new), .session(rig.session(n: 3, in: 3_600)))
        rig.gateway.closeRefreshGate()
        let saveCountBefore = rig.store.saveCount
        async let tokens = withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<50 { group.addTask { try await auth.validAccessToken() } }
            var all: [String?] = []
            for try await t in group { all.append(t) }
            return all
        }
        await rig.until { rig.gateway.heldRefreshes == 1 }
        rig.gateway.openRefreshGate()
        let all = try await tokens
        #expect(all.count == 50)
        #expect(Set(all) == [new.accessToken])
        #expect(rig.gateway.calls("refresh") == 1)
        #expect(rig.store.saveCount - saveCountBefore == 1)
    }

    @Test func signOutDuringRefreshDropsTheResult() async throws {
        let rig = AuthRig(stored: nil)
        try rig.store.save(rig.session(n: 1, in: 10))
        let auth = rig.controller()
        rig.gateway.onRefresh(.session(rig.session(n: 2, in: 3_600)))
        rig.gateway.closeRefreshGate()
        let pending = Task { try await auth.validAccessToken() }
        await rig.until { rig.gateway.heldRefreshes == 1 }
        await auth.signOut(scope: .local)
        rig.gateway.openRefreshGate()
        let result = await pending.result
        #expect(throws: AuthError.notSignedIn) { try result.get() }
        #expect(auth.currentSession == nil)
        #expect(rig.store.load() == nil)
    }

    /// A sign-in that finishes after a sign-out started later is dropped with its own error
    /// (it was `.server(409, "superseded")`, as if the server had said it).
    @Test func aSignInOvertakenBySignOutIsSuperseded() async throws {
        let rig = AuthRig(stored: nil)
        try rig.store.save(rig.session(n: 1, in: 3_600))
        let auth = rig.controller()
        rig.gateway.onSignIn(.session(rig.session(Fixtures.bob, n: 1, in: 3_600)))
        rig.gateway.closeSignInGate()
        let pending = Task { try await auth.signIn(email: "bob@example.com", password: "password-1") }
        await rig.until { rig.gateway.heldSignIns == 1 }
        await auth.signOut(scope: .local)
        rig.gateway.openSignInGate()
        let result = await pending.result
        #expect(throws: AuthError.superseded) { try result.get() }
        #expect(auth.currentSession == nil)
        #expect(rig.store.load() == nil)
    }

    @Test func userSwitchDuringRefreshKeepsTheNewUser() async throws {
        let rig = AuthRig(stored: nil)
        try rig.store.save(rig.session(n: 1, in: 10))
        let auth = rig.controller()
        rig.gateway.onRefresh(.session(rig.session(n: 2, in: 3_600)))
        let bob = rig.session(Fixtures.bob, n: 1, in: 3_600)
        rig.gateway.onSignIn(.session(bob))
        rig.gateway.closeRefreshGate()
        let pending = Task { try await auth.validAccessToken() }
        await rig.until { rig.gateway.heldRefreshes == 1 }
        _ = try await auth.signIn(email: "bob@example.com", password: "password-1")
        rig.gateway.openRefreshGate()
        _ = await pending.result
        #expect(auth.currentUserId == "user-b")
        #expect(rig.store.load() == bob)
        #expect(try await auth.validAccessToken() == bob.accessToken)
    }

    @Test(arguments: Array(AuthError.sessionGoneCodes).sorted())
    func everySessionGoneAnswerSignsOut(code: String) async throws {
        let rig = AuthRig(stored: nil)
        try rig.store.save(rig.session(n: 1, in: 10))
        let auth = rig.controller()
        let recorder = EventRecorder(auth.events())
        rig.gateway.onRefresh(.failure(.sessionRevoked(code: code)))
        await #expect(throws: AuthError.sessionRevoked(code: code)) { try await auth.validAccessToken() }
        #expect(auth.currentSession == nil)
        #expect(rig.store.load() == nil)
        await rig.until { recorder.all.count == 2 }
        #expect(recorder.all.last == .signedOut(.sessionRevoked))
        recorder.cancel()
    }

    @Test(arguments: [
        AuthError.network("timed out"), .rateLimited(retryAfter: 3), .server(status: 503, code: nil, message: "down"),
    ])
    func failuresThatAreNotAboutTheSessionKeepIt(error: AuthError) async throws {
        let rig = AuthRig(stored: nil)
        let s = rig.session(n: 1, in: 10)
        try rig.store.save(s)
        let auth = rig.controller()
        rig.gateway.onRefresh(.failure(error))
        await #expect(throws: error) { try await auth.validAccessToken() }
        #expect(auth.currentSession == s)
        #expect(rig.store.load() == s)
        // And the next call tries again.
        rig.gateway.onRefresh(.session(rig.session(n: 2, in: 3_600)))
        #expect(try await auth.validAccessToken() == "access-user-a-2")
    }

    @Test func restoreValidatesRefreshesOrSignsOut() async throws {
        let valid = AuthRig(stored: nil)
        try valid.store.save(valid.session(n: 1, in: 600))
        let a1 = valid.controller()
        valid.gateway.onUser(.success(Fixtures.alice))
        await a1.restore()
        #expect(valid.gateway.calls("user") == 1)
        #expect(a1.currentSession != nil)

        let revoked = AuthRig(stored: nil)
        try revoked.store.save(revoked.session(n: 1, in: 600))
        let a2 = revoked.controller()
        revoked.gateway.onUser(.failure(.sessionRevoked(code: "session_not_found")))
        await a2.restore()
        #expect(a2.currentSession == nil)

        let offline = AuthRig(stored: nil)
        try offline.store.save(offline.session(n: 1, in: -600))
        let a3 = offline.controller()
        offline.gateway.onRefresh(.failure(.network("offline")))
        await a3.restore()
        #expect(a3.currentSession != nil)
        #expect(offline.gateway.calls("refresh") == 1)
    }

    @Test func everyListenerGetsEveryEventAndLateOnesStartWithTheState() async throws {
        let rig = AuthRig(stored: nil)
        let first = EventRecorder(rig.auth.events())
        let second = EventRecorder(rig.auth.events())
        let s = rig.session(n: 1, in: 3_600)
        rig.gateway.onSignIn(.session(s))
        _ = try await rig.auth.signIn(email: "alice@example.com", password: "password-1")
        await rig.until { first.all.count == 2 && second.all.count == 2 }
        #expect(first.all == [.initialSession(nil), .signedIn(s)])
        #expect(second.all == first.all)
        var late = rig.auth.events().makeAsyncIterator()
        #expect(await late.next() == .initialSession(s))
        await rig.auth.signOut(scope: .global)
        await rig.until { first.all.count == 3 && second.all.count == 3 }
        #expect(first.all.last == .signedOut(.userInitiated))
        #expect(await late.next() == .signedOut(.userInitiated))
        first.cancel()
        second.cancel()
    }

    @Test func signOutIsLocalFirstEvenWhenTheServerFails() async throws {
        let rig = AuthRig(stored: nil)
        try rig.store.save(rig.session(n: 1, in: 3_600))
        let auth = rig.controller()
        rig.gateway.onSignOut(.network("offline"))
        let error = await auth.signOut(scope: .global)
        #expect(error == .network("offline"))
        #expect(auth.currentSession == nil)
        #expect(rig.store.load() == nil)
        #expect(await auth.signOut(scope: .global) == nil)
        #expect(rig.gateway.calls("signOut") == 1)
    }

    @Test func inputsAreCheckedBeforeAnyRequest() async throws {
        let rig = AuthRig(stored: nil)
        await #expect(throws: AuthError.invalidEmail) {
            try await rig.auth.signIn(email: "nope", password: "password-1")
        }
        await #expect(throws: AuthError.invalidEmail) {
            try await rig.auth.signUp(email: "a@b", password: "password-1")
        }
        await #expect(throws: AuthError.weakPassword(minimumLength: 8)) {
            try await rig.auth.signUp(email: "a@example.com", password: "short")
        }
        #expect(rig.gateway.calls("signIn") + rig.gateway.calls("signUp") == 0)
        await #expect(throws: AuthError.notSignedIn) { try await rig.auth.fetchUser() }
        let token = try await rig.auth.validAccessToken()
        #expect(token == nil)
    }

    @Test func aStoreThatCannotWriteDoesNotBreakSignIn() async throws {
        let rig = AuthRig(stored: nil)
        rig.store.failWrites(true)
        let s = rig.session(n: 1, in: 3_600)
        rig.gateway.onSignIn(.session(s))
        _ = try await rig.auth.signIn(email: "alice@example.com", password: "password-1")
        #expect(rig.auth.currentSession == s)
        #expect(rig.logs.records.contains { $0.level == .error })
    }

    @Test func tokensAndPasswordsNeverReachTheLogs() async throws {
        let rig = AuthRig(stored: nil)
        let s = rig.session(n: 1, in: 10)
        rig.gateway.onSignIn(.session(s))
        rig.gateway.onRefresh(.session(rig.session(n: 2, in: 3_600)))
        _ = try await rig.auth.signIn(email: "alice@example.com", password: "password-secret-1")
        _ = try await rig.auth.validAccessToken()
        await rig.auth.signOut(scope: .local)
        let text = rig.logs.rendered(.json)
        #expect(!text.isEmpty)
        for secret in ["password-secret-1", s.accessToken, s.refreshToken, "access-user-a-2", "alice@example.com"] {
            #expect(!text.contains(secret))
        }
    }
}

@Suite(.timeLimit(.minutes(5)))
struct SignUpTests {
    @Test func signUpSavesTheSessionAndTellsEveryListener() async throws {
        let rig = AuthRig(stored: nil)
        let recorder = EventRecorder(rig.auth.events())
        let s = rig.session(n: 1, in: 3_600)
        rig.gateway.onSignUp(.session(s))
        #expect(try await rig.auth.signUp(email: " Alice@Example.com ", password: "password-1") == s)
        #expect(rig.store.load() == s)
        #expect(rig.auth.currentUserId == "user-a")
        await rig.until { recorder.all.count == 2 }
        #expect(recorder.all == [.initialSession(nil), .signedIn(s)])
        recorder.cancel()
    }

    @Test func aRefusedSignUpChangesNothing() async throws {
        let rig = AuthRig(stored: nil)
        rig.gateway.onSignUp(.failure(.userAlreadyExists))
        await #expect(throws: AuthError.userAlreadyExists) {
            try await rig.auth.signUp(email: "alice@example.com", password: "password-1")
        }
        #expect(rig.store.load() == nil)
        #expect(rig.auth.currentSession == nil)
    }

    /// A password change carries the reauthentication code when there is one; a password the
    /// server could never take is refused here; a session the server ended is ended here too.
    @Test func aPasswordChangeSendsItsCodeAndARevokedSessionEnds() async throws {
        let rig = AuthRig(stored: nil)
        try rig.store.save(rig.session(n: 1, in: 3_600))
        let auth = rig.controller()
        try await auth.changePassword(to: "password-new-1", nonce: nil)
        try await auth.requestReauthentication()
        try await auth.changePassword(to: "password-new-2", nonce: "123456")
        #expect(rig.gateway.nonces == [nil, "123456"])
        #expect(rig.gateway.calls("requestReauthentication") == 1)
        await #expect(throws: AuthError.passwordTooLong(maximumBytes: 72)) {
            try await auth.changePassword(to: String(repeating: "é", count: 40), nonce: nil)
        }
        await #expect(throws: AuthError.weakPassword(minimumLength: 8)) {
            try await auth.changePassword(to: "short", nonce: nil)
        }
        #expect(rig.gateway.calls("updatePassword") == 2)
        rig.gateway.onUpdatePassword(.reauthenticationNeeded, .sessionRevoked(code: "session_not_found"))
        await #expect(throws: AuthError.reauthenticationNeeded) {
            try await auth.changePassword(to: "password-new-3", nonce: nil)
        }
        #expect(auth.currentSession != nil)
        await #expect(throws: AuthError.sessionRevoked(code: "session_not_found")) {
            try await auth.changePassword(to: "password-new-3", nonce: nil)
        }
        #expect(auth.currentSession == nil)
        #expect(rig.store.load() == nil)
    }
}
