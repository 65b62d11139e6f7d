import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import TrendyAPI
import TrendyLogging
import TrendyModels

/// One route the server registers, in OpenAPI's path syntax (`/api/v1/events/{id}`).
public struct RouteDescription: Hashable, Sendable, CustomStringConvertible {
    /// `GET`, `POST`, ...
    public var method: String
    /// The path template.
    public var path: String
    /// `GET /api/v1/events/{id}`.
    public var description: String { "\(method) \(path)" }
}

/// The dev backend: the GoTrue-compatible auth API and the Trendy API v1 over SQLite.
///
/// ```swift
/// let server = try await TrendyServer(configuration: .testing(), logs: logs)
/// let running = try await server.start()          // binds, returns the port
/// ... talk to http://127.0.0.1:\(running.port) ...
/// await running.stop()
/// ```
public final class TrendyServer: Sendable {
    /// The server's version.
    public static let version = "0.2.0"

    /// The configuration it was started with.
    public let configuration: ServerConfiguration
    /// The live fault switches.
    public let faults: FaultInjector
    /// The storage.
    public let store: any ServerStore
    /// Requests, batches, the feed, rate limits and the pool, for `GET /metrics`.
    public let metrics = ServerMetrics()
    let apiLimiter: RateLimiter
    let authLimiter: RateLimiter
    let logger: Logger
    let tokens: TokenIssuer
    let now: @Sendable () -> Date

    /// Opens the store and prepares the signing key.
    public init(
        configuration: ServerConfiguration, logs: LogSystem, now: @escaping @Sendable () -> Date = Date.init
    ) async throws {
        if configuration.passwordChangeRequiresReauthentication && configuration.mailDirectory == nil {
            throw ConfigurationError("reauthentication for password changes sends codes by mail: set a mail directory")
        }
        self.configuration = configuration
        self.now = now
        logger = logs.logger(.server)
        store = try await Self.openStore(configuration, logger: logger)
        faults = FaultInjector(configuration.faults)
        let metrics = self.metrics
        apiLimiter = RateLimiter(
            configuration.apiRateLimit, now: { now().timeIntervalSince1970 }, rejected: { metrics.rateLimited("api") })
        authLimiter = RateLimiter(
            configuration.authRateLimit, now: { now().timeIntervalSince1970 },
            rejected: { metrics.rateLimited("auth") })
        let secret: String
        do {
            secret = try await Self.signingSecret(configuration, store: store)
        } catch {
            await store.close()  // a PostgreSQL pool would run on with nobody to stop it
            throw error
        }
        tokens = await TokenIssuer(secret: secret, issuer: configuration.issuer)
    }

    /// PostgreSQL when a database URL is configured, else SQLite.
    static func openStore(_ configuration: ServerConfiguration, logger: Logger) async throws -> any ServerStore {
        guard let url = configuration.databaseURL else {
            return try SQLiteServerStore(
                path: configuration.databasePath, qos: configuration.belowInteractive ? .utility : nil)
        }
        guard (1...1_000).contains(configuration.databasePoolSize) else {
            throw ConfigurationError("the database pool size must be 1-1000")
        }
        return try await PostgresServerStore(
            location: try PostgresLocation(url: url), maximumConnections: configuration.databasePoolSize,
            logger: logger)
    }

    /// The configured secret, else the one stored in the database, else a new one (stored).
    static func signingSecret(_ configuration: ServerConfiguration, store: any ServerStore) async throws -> String {
        if let secret = configuration.jwtSecret {
            guard secret.utf8.count >= 32 else { throw ServerSetupError.weakSecret }
            return secret
        }
        if let stored = try await store.setting("jwt_secret") { return stored }
        return try await store.initialSetting(
            "jwt_secret", value: AuthRoutes.randomToken() + AuthRoutes.randomToken())
    }

    /// Builds the router with every route.
    func router() -> Router<ServerRequestContext> {
        let router = Router(context: ServerRequestContext.self)
        let table = routeTable()
        router.add(
            middleware: RequestLogMiddleware(
                logger: logger, maxBodySize: configuration.maxBodySize,
                // Admin routes that are off (no admin token) are 404 for every method, not 405.
                methods: MethodTable(
                    table.filter { configuration.adminToken != nil || !$0.path.hasPrefix("/admin/") }
                        .map { ($0.method.rawValue, $0.path) }), metrics: metrics))
        router.add(middleware: FaultMiddleware(faults: faults))
        for route in table {
            router.on(RouterPath(route.hummingbirdPath), method: route.method) { request, context in
                try await route.handler(request, context)
            }
        }
        return router
    }

    /// Every route the server registers.
    public var routes: [RouteDescription] {
        routeTable().map { RouteDescription(method: $0.method.rawValue, path: $0.path) }
    }

    /// The Hummingbird application, bound per the configuration.
    public func application(onRunning: @escaping @Sendable (Int) async -> Void = { _ in })
        -> some ApplicationProtocol
    {
        var hbLogger = logger
        hbLogger.logLevel = .warning
        return Application(
            router: router(),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "trendy-dev-server"),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            logger: hbLogger)
    }

    /// Starts serving in a background task; returns once the port is bound.
    public func start() async throws -> RunningServer {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = application { port in continuation.yield(port) }
        var quiet = logger
        quiet.logLevel = .critical
        let group = ServiceGroup(configuration: .init(services: [app], logger: quiet))
        // Every connection's handler is a child of this task and inherits its priority.
        let task = Task(priority: configuration.belowInteractive ? .utility : nil) { try await group.run() }
        var iterator = stream.makeAsyncIterator()
        guard let port = await iterator.next() else { throw ServerSetupError.didNotStart }
        continuation.finish()
        logger.notice("Serving", metadata: ["host": .string(configuration.host), "port": .int(port)])
        return RunningServer(port: port, host: configuration.host, group: group, task: task, store: store)
    }
}

/// A server running in this process.
public struct RunningServer: Sendable {
    /// The bound port.
    public let port: Int
    /// The bound host.
    public let host: String
    let group: ServiceGroup
    let task: Task<Void, any Error>
    let store: any ServerStore

    /// `http://host:port`.
    public var baseURL: URL { URL(string: "http://\(host):\(port)")! }

    /// Stops accepting requests, lets in-flight requests finish, waits for the server to end,
    /// and releases the database.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = await task.result
        await store.close()
    }
}

/// Why the server could not start.
public enum ServerSetupError: Error, CustomStringConvertible {
    /// The JWT secret is shorter than 32 bytes.
    case weakSecret
    /// The listener never came up.
    case didNotStart

    /// A readable explanation.
    public var description: String {
        switch self {
        case .weakSecret: return "the JWT secret must be at least 32 bytes"
        case .didNotStart: return "the server did not start"
        }
    }
}

/// A configuration the server cannot start with.
public struct ConfigurationError: Error, CustomStringConvertible {
    /// What is wrong.
    public let description: String
    init(_ description: String) { self.description = description }
}
