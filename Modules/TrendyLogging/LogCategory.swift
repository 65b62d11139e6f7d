/// A named area of the app that log lines belong to; each category can have its own level.
///
/// The built-in categories cover the modules; add more with `LogCategory("name")`.
public struct LogCategory: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The category's name as it appears in every output.
    public let name: String

    /// Creates a category with the given name.
    public init(_ name: String) { self.name = name }

    /// Creates a category from a string literal.
    public init(stringLiteral value: String) { self.name = value }

    /// The category's name.
    public var description: String { name }

    /// App lifecycle and the composition root.
    public static let app: LogCategory = "app"
    /// HTTP traffic to the Trendy API.
    public static let api: LogCategory = "api"
    /// Sessions, sign in/out and token refresh.
    public static let auth: LogCategory = "auth"
    /// The outbox and the sync engine.
    public static let sync: LogCategory = "sync"
    /// Route decisions and transitions.
    public static let routing: LogCategory = "routing"
    /// The onboarding flow.
    public static let onboarding: LogCategory = "onboarding"
    /// Region planning and enter/exit handling.
    public static let geofence: LogCategory = "geofence"
    /// Local storage and migrations.
    public static let data: LogCategory = "data"
    /// The dev backend server.
    public static let server: LogCategory = "server"

    /// Every built-in category.
    public static let builtIn: [LogCategory] = [
        .app, .api, .auth, .sync, .routing, .onboarding, .geofence, .data, .server,
    ]
}
