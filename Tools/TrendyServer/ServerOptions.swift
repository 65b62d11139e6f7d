import ArgumentParser
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import TrendyLogging
import UnixSignals

/// Command-line options of the dev server, shared by `trendy-server` and `trendy serve`.
/// Secrets can come from the environment instead of flags (`TRENDY_JWT_SECRET`, `TRENDY_ADMIN_TOKEN`).
public struct ServerOptions: ParsableArguments, Sendable {
    /// Bind address.
    @Option(help: "Address to bind (loopback by default).") public var host = "127.0.0.1"
    /// Port.
    @Option(help: "Port (0 picks a free one).") public var port = 8_080
    /// SQLite file.
    @Option(name: .customLong("db"), help: "SQLite database file, or :memory: (default: trendy-server.sqlite here).")
    public var database: String?
    /// PostgreSQL URL.
    @Option(
        name: .customLong("database"),
        help: ArgumentHelp(
            "PostgreSQL database URL (postgres://user@host:5432/db[?sslmode=...&schema=...]); also TRENDY_DATABASE_URL.",
            discussion: "Several instances may share one database. Without it, the server uses SQLite (--db)."))
    public var databaseURL: String?
    /// Pool size.
    @Option(help: "Most connections to PostgreSQL this instance opens (1-1000).") public var databasePoolSize = 10
    /// Access token lifetime.
    @Option(help: "Access token lifetime in seconds.") public var tokenLifetime = 3_600
    /// Refresh reuse window.
    @Option(help: "Seconds a rotated refresh token may be reused.") public var refreshReuseWindow = 10
    /// bcrypt cost.
    @Option(help: "bcrypt cost (4-16).") public var bcryptCost = 10
    /// API rate limit burst.
    @Option(help: "Per-user API burst (requests).") public var apiBurst = 600.0
    /// API refill.
    @Option(help: "Per-user API sustained rate (requests/s).") public var apiRate = 100.0
    /// Auth rate limit burst.
    @Option(help: "Per-address auth burst (requests).") public var authBurst = 120.0
    /// Auth refill.
    @Option(help: "Per-address auth sustained rate (requests/s).") public var authRate = 4.0
    /// Fault: 5xx rate.
    @Option(help: "Fault: fraction of requests answered 503 (0-1).") public var faultErrorRate = 0.0
    /// Fault: latency.
    @Option(help: "Fault: added latency in ms.") public var faultLatencyMs = 0.0
    /// Fault: jitter.
    @Option(help: "Fault: random extra latency up to this many ms.") public var faultJitterMs = 0.0
    /// Fault: drops.
    @Option(help: "Fault: fraction of connections dropped without an answer (0-1).") public var faultDropRate = 0.0
    /// Fault: answers cut off after the work was done.
    @Option(help: "Fault: fraction of requests carried out, then cut off before the answer (0-1).")
    public var faultCutRate = 0.0
    /// Fault: forced 429s.
    @Option(
        name: [.customLong("fault-429-count"), .customLong("fault429-count")],
        help: "Fault: answer the next N requests with 429.")
    public var fault429Count = 0
    /// Fault: a seed for the fault draws.
    @Option(help: "Fault: draw the faults from a generator seeded with this, so a faulted run replays.")
    public var faultSeed: UInt64?
    /// Mail directory.
    @Option(help: "Write the mail the server sends (reauthentication codes) as files in this directory.")
    public var mailDir: String?
    /// Reauthentication for password changes.
    @Flag(help: "A password change in a session older than 24 h needs a code sent by mail (needs --mail-dir).")
    public var securePasswordChange = false
    /// Log level.
    @Option(help: "Log level (info, debug, ...).") public var logLevel = "info"
    /// Log format.
    @Option(help: "Log format: human or json.") public var logFormat = "human"

    /// Creates default options.
    public init() {}

    /// Rejects impossible values before anything starts.
    public func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0-65535") }
        guard (1...1_000).contains(databasePoolSize) else {
            throw ValidationError("--database-pool-size must be 1-1000")
        }
        if databaseURL != nil && database != nil {
            throw ValidationError("give either --database (PostgreSQL) or --db (SQLite), not both")
        }
        if let databaseURL {
            do throws(ConfigurationError) { _ = try PostgresLocation(url: databaseURL) } catch {
                throw ValidationError("--database: \(error.description)")
            }
        }
        guard (4...16).contains(bcryptCost) else { throw ValidationError("--bcrypt-cost must be 4-16") }
        guard tokenLifetime > 0 else { throw ValidationError("--token-lifetime must be positive") }
        for (name, rate) in [("--fault-error-rate", faultErrorRate), ("--fault-drop-rate", faultDropRate)]
        where !(0...1).contains(rate) {
            throw ValidationError("\(name) must be between 0 and 1")
        }
        guard apiBurst >= 1, apiRate > 0, authBurst >= 1, authRate > 0 else {
            throw ValidationError("rate limits must be positive")
        }
        if securePasswordChange && mailDir == nil {
            throw ValidationError("--secure-password-change sends codes by mail: give --mail-dir too")
        }
        guard LogFormat(rawValue: logFormat) != nil else { throw ValidationError("--log-format must be human or json") }
        do { _ = try LogConfiguration(parsing: logLevel) } catch { throw ValidationError(error.description) }
    }

    /// The server configuration these options describe.
    public func configuration(environment: [String: String], defaultDatabase: String = "trendy-server.sqlite")
        -> ServerConfiguration
    {
        var c = ServerConfiguration()
        c.host = host
        c.port = port
        let path = database ?? defaultDatabase
        c.databasePath = path == ":memory:" ? nil : path
        c.databaseURL =
            databaseURL
            ?? (database == nil ? environment["TRENDY_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 } : nil)
        c.databasePoolSize = databasePoolSize
        c.jwtSecret = environment["TRENDY_JWT_SECRET"].flatMap { $0.isEmpty ? nil : $0 }
        c.adminToken = environment["TRENDY_ADMIN_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        c.metricsToken = environment["TRENDY_METRICS_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        c.accessTokenLifetime = .seconds(tokenLifetime)
        c.refreshReuseInterval = .seconds(refreshReuseWindow)
        c.bcryptCost = UInt8(bcryptCost)
        c.apiRateLimit = RateLimit(capacity: apiBurst, refillPerSecond: apiRate)
        c.authRateLimit = RateLimit(capacity: authBurst, refillPerSecond: authRate)
        c.faults.errorRate = faultErrorRate
        c.faults.latencyMilliseconds = faultLatencyMs
        c.faults.jitterMilliseconds = faultJitterMs
        c.faults.dropRate = faultDropRate
        c.faults.cutRate = faultCutRate
        c.faults.forced429Count = fault429Count
        c.faults.seed = faultSeed
        c.mailDirectory = mailDir
        c.passwordChangeRequiresReauthentication = securePasswordChange
        return c
    }

    /// Runs the server until SIGINT or SIGTERM, then shuts down gracefully.
    public func run(
        environment: [String: String], defaultDatabase: String = "trendy-server.sqlite",
        announce: @escaping @Sendable (String) -> Void
    ) async throws {
        let configuration = try LogConfiguration(parsing: logLevel)
        let logs = LogSystem(
            configuration: configuration,
            sinks: [ConsoleSink(format: LogFormat(rawValue: logFormat) ?? .human)])
        defer { logs.shutdown() }
        let server = try await TrendyServer(
            configuration: self.configuration(environment: environment, defaultDatabase: defaultDatabase), logs: logs)
        let host = self.host
        let app = server.application { port in announce("Trendy dev server listening on http://\(host):\(port)") }
        let group = ServiceGroup(
            configuration: .init(
                services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logs.logger(.server)))
        do {
            try await group.run()
        } catch {
            await server.store.close()
            throw error
        }
        await server.store.close()
    }
}
