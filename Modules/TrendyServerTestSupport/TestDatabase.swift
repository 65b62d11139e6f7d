import Foundation
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
        guard let url, var parts = URLComponents(string: url) else { return nil }
        let schema = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20)
        parts.queryItems =
            (parts.queryItems ?? []).filter { $0.name != "schema" } + [
                URLQueryItem(name: "schema", value: String(schema))
            ]
        return parts.string
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
