import Foundation
import GRDB
import Testing
import TrendyLogging
import TrendySync
import TrendySyncLive
import TrendySyncTesting
import TrendyTestSupport

/// The SQLite store keeps the LocalStore contract in memory and on a file (docs/porting.md).
@Suite(.timeLimit(.minutes(5)))
struct LocalStoreContractTests {
    @Test func theInMemoryStoreKeepsTheContract() async throws {
        try await LocalStoreContract.verify(fresh: { try MemoryLocalStore.make() })
    }

    @Test func theFileStoreKeepsTheContractAcrossProcesses() async throws {
        let folder = TemporaryDirectory("contract")
        let path = folder.url.appendingPathComponent("local.sqlite").path
        func open() throws -> any LocalStore {
            var migrator = DatabaseMigrator()
            SyncSchema.register(in: &migrator)
            let pool = try DatabasePool(path: path)
            try migrator.migrate(pool)
            return SQLiteLocalStore(database: pool, logger: LogSystem.disabled().logger(.data))
        }
        try await LocalStoreContract.verify(fresh: open, reopen: { _ in try open() })
    }
}
