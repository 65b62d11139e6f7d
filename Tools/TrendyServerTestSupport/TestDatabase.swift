import AsyncHTTPClient
import Foundation
import TrendyLogging
import TrendyServer

/// The PostgreSQL server tests may use, from the environment:
/// - `TRENDY_TEST_DATABASE_URL` (`postgres://postgres@127.0.0.1:54329/postgres`) says where one
///   is; the tests that need PostgreSQL (several instances, the feed under concurrent writers)
///   run only when it is set, and `Tools/postgres/cluster.sh` starts one;
/// - `TRENDY_TEST_STORE=postgres` runs every test server (``RunningTestServer``) on it instead
///   of SQLite: the same suite, on the other store. `.ci/run` runs the suite both ways.
public enum TestDatabase {
    /// The PostgreSQL server's URL, if the environment gives one.
    public static var url: String? {
        ProcessInfo.processInfo.environment["TRENDY_TEST_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether test servers run on PostgreSQL.
    public static var serversUsePostgres: Bool {
        ProcessInfo.processInfo.environment["TRENDY_TEST_STORE"] == "postgres"
    }

    /// The PostgreSQL URL with a schema of its own (created on first use), so each test server
    /// starts empty; nil without a PostgreSQL server.
    public static func freshURL() -> String? {
        url.flatMap { try? PostgresLocation(url: $0) }?.inFreshSchema(prefix: "t").url
    }
}

extension ServerConfiguration {
    /// This configuration on a fresh PostgreSQL schema when the tests run servers on PostgreSQL
    /// and it keeps its data in memory (a test that names a file or a database keeps it).
    public func onTestStore() throws -> ServerConfiguration {
        guard TestDatabase.serversUsePostgres, databasePath == nil, databaseURL == nil else { return self }
        guard let url = TestDatabase.freshURL() else {
            throw TestDatabaseMissing()
        }
        var copy = self
        copy.databaseURL = url
        return copy
    }
}

/// `TRENDY_TEST_STORE=postgres` without `TRENDY_TEST_DATABASE_URL`.
public struct TestDatabaseMissing: Error, CustomStringConvertible {
    /// What to do.
    public var description: String {
        "TRENDY_TEST_STORE=postgres needs TRENDY_TEST_DATABASE_URL (start one with Tools/postgres/cluster.sh start DIR)"
    }
}

extension RunningTestServer {
    /// `count` servers sharing one fresh PostgreSQL schema — several instances of one backend, as
    /// clients that may reach any of them see it — with one HTTP client; all stopped after `body`.
    /// `configuration` is each instance's (its database is replaced by the shared one).
    public static func instances<T>(
        _ count: Int, _ configuration: ServerConfiguration = .testing(), logs: LogSystem = .disabled(),
        now: @escaping @Sendable () -> Date = Date.init, _ body: ([RunningTestServer]) async throws -> T
    ) async throws -> T {
        guard let url = TestDatabase.freshURL() else { throw TestDatabaseMissing() }
        let shared = {
            var c = configuration
            c.databaseURL = url
            return c
        }()
        // The first instance migrates the schema; the others start together and find it done.
        let first = try await TrendyServer(configuration: shared, logs: logs, now: now)
        var servers = [first]
        try await withThrowingTaskGroup(of: TrendyServer.self) { group in
            for _ in 1..<count {
                group.addTask { try await TrendyServer(configuration: shared, logs: logs, now: now) }
            }
            for try await server in group { servers.append(server) }
        }
        var running: [RunningServer] = []
        for server in servers { running.append(try await server.start()) }
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let tests = zip(servers, running).map { RunningTestServer(server: $0, running: $1, http: http) }
        let result: Result<T, any Error>
        do {
            result = .success(try await body(tests))
        } catch {
            result = .failure(error)
        }
        try? await http.shutdown()
        for server in running { await server.stop() }
        return try result.get()
    }
}
