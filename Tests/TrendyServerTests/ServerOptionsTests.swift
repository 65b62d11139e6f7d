import ArgumentParser
import Foundation
import Testing
import TrendyServer

/// How `trendy-server` (and `trendy serve`) choose their database from flags and environment.
@Suite struct ServerOptionsTests {
    let url = "postgres://app:secret@db.internal:5433/trendy?sslmode=require&schema=prod"

    @Test func theDatabaseComesFromTheFlagOrTheEnvironmentAndSQLiteStaysTheDefault() throws {
        let flag = try ServerOptions.parse(["--database", url, "--database-pool-size", "25"])
        let fromFlag = flag.configuration(environment: [:])
        #expect(fromFlag.databaseURL == url && fromFlag.databasePoolSize == 25)
        let fromEnvironment = try ServerOptions.parse([]).configuration(environment: ["TRENDY_DATABASE_URL": url])
        #expect(fromEnvironment.databaseURL == url)
        // A SQLite file named on the command line wins over the environment.
        let sqlite = try ServerOptions.parse(["--db", "/tmp/x.sqlite"])
            .configuration(environment: ["TRENDY_DATABASE_URL": url])
        #expect(sqlite.databaseURL == nil && sqlite.databasePath == "/tmp/x.sqlite")
        #expect(try ServerOptions.parse([]).configuration(environment: [:]).databaseURL == nil)
    }

    @Test func badDatabaseOptionsAreRefusedBeforeAnythingStarts() {
        for arguments in [
            ["--database", "mysql://u@h/d"], ["--database", "postgres://@h/d"], ["--database", "postgres://u@/d"],
            ["--database", "postgres://u@h/d?sslmode=sometimes"],
            ["--database", "postgres://u@h/d?schema=Robert'); DROP"],
            ["--database", "postgres://u@h/d?pool=3"], ["--database", url, "--db", "x.sqlite"],
            ["--database-pool-size", "0"], ["--database-pool-size", "1001"],
        ] {
            #expect(throws: (any Error).self, "\(arguments)") { _ = try ServerOptions.parse(arguments) }
        }
    }

    @Test func theURLIsReadAndNeverPrintedWithItsPassword() throws {
        let location = try PostgresLocation(url: url)
        #expect(location.host == "db.internal" && location.port == 5433 && location.user == "app")
        #expect(location.database == "trendy" && location.schema == "prod" && location.tls == .require)
        #expect(!location.redacted.contains("secret"))
        #expect(try PostgresLocation(url: location.url) == location)
        #expect(try PostgresLocation(url: "postgres://u@h/d?sslmode=verify-full").tls == .verifyFull)
        let defaults = try PostgresLocation(url: "postgresql://me@localhost")
        #expect(
            defaults.port == 5_432 && defaults.database == "me" && defaults.schema == "public"
                && defaults.tls == .prefer)
    }
}
