import Foundation
import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import Synchronization

/// A connection leased from the pool, with the few ways the store talks over it.
struct PostgresSession: Sendable {
    let connection: PostgresConnection
    let logger: Logger

    /// Every row of `query`.
    func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await connection.query(query, logger: logger).collect()
    }

    /// Runs a statement; answers how many rows it returned (`RETURNING` makes that its count).
    @discardableResult
    func run(_ query: PostgresQuery) async throws -> Int {
        try await rows(query).count
    }

    /// The first row's columns, decoded; nil when there is no row.
    func one<each Column: PostgresDecodable>(_ query: PostgresQuery, as type: (repeat each Column).Type)
        async throws -> (repeat each Column)?
    {
        guard let row = try await rows(query).first else { return nil }
        return try row.decode(type)
    }

    /// Every row's columns, decoded.
    func all<each Column: PostgresDecodable>(_ query: PostgresQuery, as type: (repeat each Column).Type)
        async throws -> [(repeat each Column)]
    {
        try await rows(query).map { try $0.decode(type) }
    }

    /// Every row's single column.
    func column<T: PostgresDecodable>(_ query: PostgresQuery, as type: T.Type) async throws -> [T] {
        try await rows(query).map { try $0.decode(T.self) }
    }

    /// The first row's single column; nil when there is no row (or it is NULL, for optionals).
    func value<T: PostgresDecodable>(_ query: PostgresQuery, as type: T.Type) async throws -> T? {
        guard let row = try await rows(query).first else { return nil }
        return try row.decode(T.self)
    }
}

/// The PostgreSQL side of ``PostgresServerStore``: the pool (PostgresNIO's `PostgresClient`, run
/// by a task this object owns), transactions, and the migrations.
final class PostgresDatabase: Sendable {
    let client: PostgresClient
    let logger: Logger
    let location: PostgresLocation
    let maximumConnections: Int
    private let runner: Task<Void, Never>
    private let leases = Mutex(0)
    /// When the database last answered a request (readiness counts it).
    private let lastAnswer = Mutex<ContinuousClock.Instant?>(nil)

    /// SQLSTATEs worth running a transaction again for: serialization failure, deadlock.
    static let retryable: Set<String> = ["40001", "40P01"]

    init(location: PostgresLocation, maximumConnections: Int, logger: Logger) {
        var configuration = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: Self.tls(location.tls))
        configuration.options.maximumConnections = maximumConnections
        configuration.options.minimumConnections = 0
        configuration.options.connectTimeout = .seconds(10)
        // Every statement names its tables unqualified: the connection's search path picks the schema.
        configuration.options.additionalStartupParameters = Self.sessionSettings(location)
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        self.logger = logger
        self.location = location
        self.maximumConnections = maximumConnections
        runner = Task { await client.run() }
    }

    /// Settings every connection starts with. The schema comes from the search path (statements
    /// name tables unqualified). Nothing may wait or hold on for ever: a statement is cancelled
    /// after 15 s, a lock wait — the per-user feed lock included — after 10 s (both then answer
    /// 503), and PostgreSQL ends a session left idle inside a transaction after 30 s, so an
    /// instance that vanishes mid-transaction (a paused VM, a partition) releases its user's lock
    /// in half a minute rather than when TCP notices, hours later.
    static func sessionSettings(_ location: PostgresLocation) -> [(String, String)] {
        [
            ("search_path", location.schema), ("application_name", "trendy-server"),
            ("statement_timeout", "15s"), ("lock_timeout", "10s"), ("idle_in_transaction_session_timeout", "30s"),
        ]
    }

    /// libpq's meanings: `prefer` and `require` encrypt without checking the certificate (a
    /// stock server's self-signed one works); `verify-full` checks the chain and the host name.
    static func tlsConfiguration(_ mode: PostgresLocation.TLSMode) -> TLSConfiguration? {
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch mode {
        case .disable: return nil
        case .prefer, .require: configuration.certificateVerification = .none
        case .verifyFull: configuration.certificateVerification = .fullVerification
        }
        return configuration
    }

    static func tls(_ mode: PostgresLocation.TLSMode) -> PostgresClient.Configuration.TLS {
        guard let configuration = tlsConfiguration(mode) else { return .disable }
        return mode == .prefer ? .prefer(configuration) : .require(configuration)
    }

    /// Connections leased right now (pool usage).
    var leased: Int { leases.withLock { $0 } }

    /// Stops the pool: running queries end first, but a pool that cannot finish (a connection
    /// attempt to a database that stopped answering) is left behind after 5 s rather than holding
    /// the server's shutdown forever.
    func close() async {
        runner.cancel()
        let runner = self.runner
        let finished = await Self.within(.seconds(5), otherwise: false) {
            await runner.value
            return true
        }
        if !finished { logger.warning("The database pool did not close within 5 s; left behind") }
    }

    /// `operation`'s answer if it comes within `limit`, else `fallback` at once — without waiting
    /// for the operation to notice its cancellation (a task group would wait for it).
    static func within<T: Sendable>(
        _ limit: Duration, otherwise fallback: T, _ operation: @escaping @Sendable () async -> T
    ) async -> T {
        let answered = Mutex(false)
        return await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            let resume: @Sendable (T) -> Bool = { value in
                let first = answered.withLock { done in
                    defer { done = true }
                    return !done
                }
                if first { continuation.resume(returning: value) }
                return first
            }
            let work = Task { _ = resume(await operation()) }
            Task {
                try? await Task.sleep(for: limit)
                if resume(fallback) { work.cancel() }
            }
        }
    }

    /// Runs `body` on a leased connection, outside a transaction (each statement sees what is
    /// committed when it starts).
    ///
    /// A connection must come within `patience` (a request's `leaseTimeout` unless said); a database that is down or saturated makes
    /// the request fail at once with ``StoreError/unavailable(_:)`` (503), and so does a connection
    /// lost in the middle, instead of requests that wait on the pool's reconnection attempts.
    @discardableResult
    func read<T: Sendable>(patience: Duration? = nil, _ body: (PostgresSession) async throws -> T) async throws -> T {
        let handoff = LeaseHandoff()
        let client = self.client
        let holder = Task {
            do {
                try await client.withConnection { connection in
                    guard handoff.deliver(connection) else { return }
                    await handoff.heldUntilReleased()
                }
            } catch {
                handoff.fail(error)
            }
        }
        defer { handoff.release() }
        let connection: PostgresConnection
        do {
            connection = try await handoff.connection(within: patience ?? leaseTimeout) { holder.cancel() }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.unavailable("no database connection: \(Self.reason(error))")
        }
        leases.withLock { $0 += 1 }
        defer { leases.withLock { $0 -= 1 } }
        do {
            let value = try await body(PostgresSession(connection: connection, logger: logger))
            lastAnswer.withLock { $0 = .now }
            return value
        } catch let error as PSQLError where Self.isUnavailability(error) {
            throw StoreError.unavailable("the database is unavailable: \(Self.reason(error))")
        }
    }

    /// How long a request waits for a connection from the pool.
    var leaseTimeout: Duration { .seconds(5) }

    /// How long starting up waits for its first pooled connection. The probe has already reached
    /// the database, so a slow lease here means a busy machine or a fleet starting together (the
    /// pool's task not yet scheduled, connections being forked), not a dead database: an instance
    /// that gave up after a request's 5 s would fail to start where waiting a little more works
    /// (CI, two cores, ~300 test servers migrating in the first seconds).
    var startupPatience: Duration { .seconds(60) }

    /// Failures that say the connection, not the statement, failed.
    static let lostConnection: [PSQLError.Code] = [
        .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed,
    ]

    /// Whether `error` says the database cannot serve now, rather than that the statement is
    /// wrong: a lost connection, or PostgreSQL's own word — connection exceptions (class 08),
    /// shutting down (57P01–57P03), out of resources (class 53), read-only after a failover
    /// (25006), a statement or lock wait over its limit (57014, 55P03).
    static func isUnavailability(_ error: PSQLError) -> Bool {
        if lostConnection.contains(error.code) { return true }
        guard let state = error.sqlState else { return false }
        return state.hasPrefix("08") || state.hasPrefix("53")
            || ["57P01", "57P02", "57P03", "25006", "57014", "55P03"].contains(state)
    }

    /// PostgreSQL's message, else the network's reason, else the error's code.
    static func reason(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return String(describing: error) }
        if let message = error.serverInfo?[.message] { return message }
        if let underlying = error.underlying { return String(describing: underlying) }
        return "\(error.code)"
    }

    /// Runs `body` in a transaction (READ COMMITTED), committed when it returns and rolled back
    /// when it throws; run again (at most three times) when PostgreSQL reports a deadlock or a
    /// serialization failure.
    ///
    /// With `feedOf`, the transaction first takes that user's feed lock: every transaction that
    /// appends to a user's change feed does, so they run one after another per user and the
    /// cursors they number become visible in order — a reader that saw cursor N has seen every
    /// cursor below it (the feed never skips; D46).
    @discardableResult
    func transaction<T: Sendable>(
        feedOf userId: String?, patience: Duration? = nil, _ body: (PostgresSession) async throws -> T
    ) async throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await read(patience: patience) { session in
                    try await session.run("BEGIN")
                    do {
                        if let userId {
                            try await session.run("SELECT pg_advisory_xact_lock(hashtextextended(\(userId), 46))")
                        }
                        let value = try await body(session)
                        try await session.run("COMMIT")
                        return value
                    } catch {
                        do {
                            try await session.run("ROLLBACK")
                        } catch {
                            // A connection whose transaction state is unknown must not go back to
                            // the pool for the next request: closed, the pool opens another.
                            try? await session.connection.close()
                        }
                        throw error
                    }
                }
            } catch let error as PSQLError
                where attempt < 3 && Self.retryable.contains(error.serverInfo?[.sqlState] ?? "")
            {
                logger.notice("Retrying a transaction", metadata: ["sqlstate": "\(error.serverInfo?[.sqlState] ?? "")"])
            }
        }
    }

    /// One direct connection, opened and closed: an unreachable server, a refused role or a
    /// missing database fails here at once with PostgreSQL's reason (the pool would keep
    /// retrying in the background while requests wait).
    func probe() async throws {
        var configuration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: try Self.connectionTLS(location.tls))
        configuration.options.connectTimeout = .seconds(10)
        let connection = try await PostgresConnection.connect(
            on: PostgresClient.defaultEventLoopGroup.next(), configuration: configuration, id: 0, logger: logger
        ).get()
        try await connection.close()
    }

    static func connectionTLS(_ mode: PostgresLocation.TLSMode) throws -> PostgresConnection.Configuration.TLS {
        guard let configuration = tlsConfiguration(mode) else { return .disable }
        let context = try NIOSSLContext(configuration: configuration)
        return mode == .prefer ? .prefer(context) : .require(context)
    }

    /// Brings the schema up to date. Several instances may start at once: the migrations run
    /// under a lock, so each runs once and the others find it applied.
    func migrate() async throws {
        let schema = location.schema
        try await transaction(feedOf: nil, patience: startupPatience) { session in
            // A migration may take long and may wait for another instance's: no session limits here.
            try await session.run("SET LOCAL statement_timeout = 0")
            try await session.run("SET LOCAL lock_timeout = 0")
            try await session.run("SELECT pg_advisory_xact_lock(hashtextextended(\("trendy-migrate:" + schema), 46))")
            // Created only when missing: CREATE SCHEMA IF NOT EXISTS needs the CREATE right on the
            // database even when the schema exists, which an application role often lacks.
            if try await session.run("SELECT 1 FROM pg_namespace WHERE nspname = \(schema)") == 0 {
                try await session.run(PostgresQuery(unsafeSQL: "CREATE SCHEMA \(schema)"))
            }
            try await session.run(
                PostgresQuery(
                    unsafeSQL: """
                        CREATE TABLE IF NOT EXISTS \(schema).trendy_migrations (
                            name TEXT PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)
                        """))
            let applied = Set(
                try await session.column("SELECT name FROM trendy_migrations", as: String.self))
            for (name, statements) in PostgresSchema.migrations where !applied.contains(name) {
                for statement in statements { try await session.run(PostgresQuery(unsafeSQL: statement)) }
                try await session.run(
                    "INSERT INTO trendy_migrations (name, applied_at) VALUES (\(name), \(Date().timeIntervalSince1970))"
                )
            }
        }
    }

    /// Whether the database answers within `patience` (readiness): a database that hangs or
    /// refuses new connections makes the instance not ready, instead of a check that waits.
    ///
    /// A database that answered a request in the last 5 s is up: a pool that is merely busy (every
    /// connection in use, requests queued) must not take every instance out of the balancer at
    /// once, and a readiness query queued behind them would only add load.
    func ping(patience: Duration = .seconds(2)) async -> Bool {
        if let last = lastAnswer.withLock({ $0 }), ContinuousClock.now - last < .seconds(5) { return true }
        return await Self.within(patience, otherwise: false) { [self] in
            (try? await read { session in try await session.value("SELECT 1", as: Int.self) }) == 1
        }
    }
}

extension PSQLError {
    /// The SQLSTATE PostgreSQL answered with, if it answered.
    var sqlState: String? { serverInfo?[.sqlState] }
}
