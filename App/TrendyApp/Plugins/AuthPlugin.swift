import ArgumentParser
import TrendyAPI
import TrendyAuth

/// Auth: the session (sign up, in and out, tokens refreshed ahead of expiry), the account
/// commands, and a session check on foreground.
public struct AuthPlugin: TrendyPlugin {
    /// Creates the plugin.
    public init() {}

    /// The plugin's name.
    public var name: String { "auth" }
    /// What the feature does.
    public var summary: String { "Sessions against a GoTrue-compatible server." }
    /// The commands the feature owns.
    public var commands: [any ParsableCommand.Type] {
        [SignupCommand.self, LoginCommand.self, LogoutCommand.self, WhoamiCommand.self, AccountCommand.self]
    }
    /// What the feature reads.
    public var settings: [PluginSetting] {
        [
            .init(.file, "session.json", "the signed-in session, owner-only"),
            .init(.environment, "TRENDY_AUTH_URL", "the auth server (default: <api-url>/auth/v1)"),
            .init(.option, "--auth-url", "the same, for one command"),
            .init(.environment, "TRENDY_API_KEY", "the anon key sent as apikey (Supabase projects)"),
        ]
    }

    /// Builds the feature's live parts.
    public func install(into app: inout AppAssembly) {
        app.modules.append(AuthModule(auth: app.platform.auth))
    }
}

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
