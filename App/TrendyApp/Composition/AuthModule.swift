import TrendyAPI
import TrendyAuth

/// Auth's contribution to the lifecycle: validate the session on foreground. At launch the
/// route coordinator verifies it (after the route is decided), so launch adds nothing here.
struct AuthModule: AppModule {
    let auth: any AuthService

    var name: String { "auth" }

    func willEnterForeground() async { await auth.restore() }

    func health() async -> ModuleHealth {
        let session = auth.currentSession
        return ModuleHealth(
            module: name, ok: true,
            details: ["signed_in": String(session != nil), "user_id": session?.user.id ?? "-"])
    }
}

/// Gives the API client its tokens from Auth (refreshing ahead of expiry, and after a 401).
struct AuthTokenProvider: AccessTokenProvider {
    let auth: any AuthService

    func accessToken() async throws -> String? { try await auth.validAccessToken() }

    func accessTokenRejected(_ token: String) async { await auth.accessTokenRejected(token) }
}
