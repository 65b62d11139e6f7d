import Foundation
import Testing
import TrendyAuth

/// What every ``AuthGateway`` must do: GoTrue's answers for the calls the app makes. The GoTrue
/// gateway on the real dev server and ``InMemoryAuthServer`` run it (so the fake is known to
/// answer like the server). See docs/porting.md.
public enum AuthGatewayContract {
    /// The error a step expects.
    enum Expected {
        case exactly(AuthError)
        case weakPassword
        case anyRevocation

        func matches(_ error: AuthError) -> Bool {
            switch (self, error) {
            case (.exactly(let expected), let error): error == expected
            case (.weakPassword, .weakPassword), (.anyRevocation, .sessionRevoked): true
            default: false
            }
        }
    }

    /// Runs the contract on `gateway`, a server with no account for the contract's emails;
    /// `advance` moves the server's clock by that many seconds (the refresh-token reuse window).
    public static func verify(
        _ gateway: any AuthGateway, advance: (TimeInterval) -> Void, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let run = GatewayRun(
            gateway: gateway, sourceLocation: sourceLocation,
            email: "contract-\(UUID().uuidString.prefix(8).lowercased())@example.com")
        let first = try await run.accounts()
        try await run.sessions(first, advance: advance)
        let fourth = try await run.passwordChange(first)
        try await run.signOutScopes(first, fourth: fourth)
        try await run.expiry(first, advance: advance)
    }

    /// One run of the contract: its gateway, account and where to report.
    struct GatewayRun {
        let gateway: any AuthGateway
        let sourceLocation: SourceLocation
        let email: String
        let password = "password-1"

        func expectError(_ comment: Comment, _ expected: Expected, _ body: () async throws -> Void) async {
            do {
                try await body()
                Issue.record("\(comment): no error", sourceLocation: sourceLocation)
            } catch let error as AuthError {
                #expect(expected.matches(error), "\(comment): got \(error)", sourceLocation: sourceLocation)
            } catch {
                Issue.record("\(comment): not an AuthError: \(error)", sourceLocation: sourceLocation)
            }
        }

        /// Accounts: sign-up signs in; taken, weak, malformed and over-long credentials are refused.
        func accounts() async throws -> AuthSession {
            // Accounts.
            let first = try await gateway.signUp(email: email, password: password)
            #expect(first.user.email == email, "sign-up signs in", sourceLocation: sourceLocation)
            await expectError("the same email twice", .exactly(.userAlreadyExists)) {
                _ = try await gateway.signUp(email: email, password: password)
            }
            await expectError(
                "a short password",
                .weakPassword
            ) { _ = try await gateway.signUp(email: "short-\(email)", password: "abc") }
            await expectError("an address without a domain", .exactly(.invalidEmail)) {
                _ = try await gateway.signUp(email: "nobody@nowhere", password: password)
            }
            await expectError(
                "a password over 72 bytes",
                .exactly(.passwordTooLong(maximumBytes: CredentialRules.maximumPasswordBytes))
            ) { _ = try await gateway.signUp(email: "long-\(email)", password: String(repeating: "é", count: 37)) }
            let spaced = try await gateway.signIn(email: "  \(email.uppercased()) ", password: password)
            #expect(
                spaced.user.id == first.user.id, "an email is trimmed and compared without case",
                sourceLocation: sourceLocation)
            await expectError("a wrong password", .exactly(.invalidCredentials)) {
                _ = try await gateway.signIn(email: email, password: "wrong-password")
            }
            await expectError("an unknown email, told apart from nothing", .exactly(.invalidCredentials)) {
                _ = try await gateway.signIn(email: "nobody-\(email)", password: password)
            }
            return first
        }

        /// Sessions and refresh-token rotation, with the reuse window.
        func sessions(_ first: AuthSession, advance: (TimeInterval) -> Void) async throws {
            // Sessions and refresh-token rotation.
            let second = try await gateway.signIn(email: email, password: password)
            #expect(
                try await gateway.user(accessToken: second.accessToken).id == first.user.id, "the same account",
                sourceLocation: sourceLocation)
            let rotated = try await gateway.refresh(refreshToken: second.refreshToken)
            #expect(rotated.refreshToken != second.refreshToken, "a refresh rotates", sourceLocation: sourceLocation)
            #expect(rotated.user.id == first.user.id, sourceLocation: sourceLocation)
            #expect(
                rotated.expiresAt >= second.expiresAt, "a refresh extends the session", sourceLocation: sourceLocation)
            let raced = try await gateway.refresh(refreshToken: second.refreshToken)
            #expect(
                raced.user.id == first.user.id && raced.refreshToken == rotated.refreshToken,
                "the old token within the reuse window answers the session's current one, not a new branch",
                sourceLocation: sourceLocation)
            advance(60)
            await expectError(
                "the old token after the window", .exactly(.sessionRevoked(code: "refresh_token_already_used"))
            ) { _ = try await gateway.refresh(refreshToken: second.refreshToken) }
            await expectError(
                "reuse revokes the session",
                .anyRevocation
            ) { _ = try await gateway.user(accessToken: rotated.accessToken) }
        }

        /// A password change ends the other sessions; the new password signs in.
        func passwordChange(_ first: AuthSession) async throws -> AuthSession {
            // A password change ends the other sessions; the new password signs in.
            let third = try await gateway.signIn(email: email, password: password)
            let other = try await gateway.signIn(email: email, password: password)
            try await gateway.updatePassword(accessToken: third.accessToken, newPassword: "password-2", nonce: nil)
            #expect(
                try await gateway.user(accessToken: third.accessToken).id == first.user.id, "this session goes on",
                sourceLocation: sourceLocation)
            await expectError(
                "the other session ended",
                .anyRevocation
            ) { _ = try await gateway.user(accessToken: other.accessToken) }
            await expectError("the old password", .exactly(.invalidCredentials)) {
                _ = try await gateway.signIn(email: email, password: password)
            }
            let fourth = try await gateway.signIn(email: email, password: "password-2")
            return fourth
        }

        /// Signing out by scope: others, then this one, then everywhere (twice is fine).
        func signOutScopes(_ first: AuthSession, fourth: AuthSession) async throws {
            // Signing out by scope: others, then this one, then everywhere (twice is fine).
            let fifth = try await gateway.signIn(email: email, password: "password-2")
            try await gateway.signOut(accessToken: fourth.accessToken, scope: .others)
            #expect(
                try await gateway.user(accessToken: fourth.accessToken).id == first.user.id,
                "signing out the others keeps this session", sourceLocation: sourceLocation)
            await expectError("the others are signed out", .anyRevocation) {
                _ = try await gateway.user(accessToken: fifth.accessToken)
            }
            let sixth = try await gateway.signIn(email: email, password: "password-2")
            try await gateway.signOut(accessToken: fourth.accessToken, scope: .local)
            await expectError("a locally signed-out session", .anyRevocation) {
                _ = try await gateway.user(accessToken: fourth.accessToken)
            }
            #expect(
                try await gateway.user(accessToken: sixth.accessToken).id == first.user.id,
                "signing out locally keeps the other sessions", sourceLocation: sourceLocation)
            try await gateway.signOut(accessToken: sixth.accessToken, scope: .global)
            try await gateway.signOut(accessToken: sixth.accessToken, scope: .global)
            await expectError("a globally signed-out session", .anyRevocation) {
                _ = try await gateway.user(accessToken: sixth.accessToken)
            }
        }

        /// An access token expires; its refresh token still gets a new one.
        func expiry(_ first: AuthSession, advance: (TimeInterval) -> Void) async throws {
            // An access token expires; its refresh token still gets a new one.
            let seventh = try await gateway.signIn(email: email, password: "password-2")
            advance(2 * 86_400)
            await expectError("an expired access token", .anyRevocation) {
                _ = try await gateway.user(accessToken: seventh.accessToken)
            }
            let renewed = try await gateway.refresh(refreshToken: seventh.refreshToken)
            #expect(
                try await gateway.user(accessToken: renewed.accessToken).id == first.user.id,
                "the refreshed token works", sourceLocation: sourceLocation)
        }
    }
}
