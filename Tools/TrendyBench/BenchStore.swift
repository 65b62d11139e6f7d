import Foundation
import TrendyServer

/// Which database a server benchmark runs its server on: SQLite (a file in the run's folder) or
/// PostgreSQL (a fresh schema of the database `--database`, `TRENDY_BENCH_DATABASE_URL` or
/// `TRENDY_TEST_DATABASE_URL` names), so both are measured in one run.
enum BenchStore: Sendable, CustomStringConvertible {
    case sqlite
    case postgres(PostgresLocation)

    var isSQLite: Bool {
        if case .sqlite = self { return true }
        return false
    }

    var description: String {
        switch self {
        case .sqlite: return "sqlite"
        case .postgres: return "postgres"
        }
    }

    /// The stores `--store` asks for: `sqlite`, `postgres` or `both` (the default: both when a
    /// PostgreSQL database is known, else SQLite).
    static func chosen(_ option: String?, database: String?) throws -> [BenchStore] {
        let environment = ProcessInfo.processInfo.environment
        let url =
            database ?? environment["TRENDY_BENCH_DATABASE_URL"] ?? environment["TRENDY_TEST_DATABASE_URL"]
        let postgres = try url.map { BenchStore.postgres(try PostgresLocation(url: $0)) }
        switch option ?? (postgres == nil ? "sqlite" : "both") {
        case "sqlite": return [.sqlite]
        case "postgres", "both":
            guard let postgres else {
                throw BenchStoreError(description: "--store \(option ?? "both") needs --database postgres://…")
            }
            return option == "postgres" ? [postgres] : [.sqlite, postgres]
        default: throw BenchStoreError(description: "--store must be sqlite, postgres or both")
        }
    }

    /// A fresh place for one server (or several instances sharing it): a new SQLite file in
    /// `dir`, or a new schema (each instance opening at most `poolSize` connections to it).
    func fresh(in dir: URL, name: String, poolSize: Int = 20) -> BenchStore.Place {
        switch self {
        case .sqlite:
            return .init(arguments: ["--db", dir.appendingPathComponent("\(name).sqlite").path]) {
                $0.databasePath = dir.appendingPathComponent("\(name)-inproc.sqlite").path
            }
        case .postgres(let location):
            let url = location.inFreshSchema(prefix: "bench").url
            return .init(arguments: ["--database", url, "--database-pool-size", String(poolSize)]) {
                $0.databaseURL = url
                $0.databasePoolSize = poolSize
            }
        }
    }

    /// Where one benchmark's server keeps its data: as `trendy-server` arguments, and as an
    /// in-process server's configuration.
    struct Place: Sendable {
        var arguments: [String]
        var configure: @Sendable (inout ServerConfiguration) -> Void
    }
}

struct BenchStoreError: Error, CustomStringConvertible {
    var description: String
}
