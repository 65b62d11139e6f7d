import Foundation
import GRDB
import TrendyLogging
import TrendySync
import TrendySyncLive

/// The real local store over an in-memory, migrated database: for a module's tests that need
/// the store's behaviour without a file (and for a look at, or a tamper with, its tables).
public enum MemoryLocalStore {
    /// A migrated in-memory local store on the clock `now`.
    public static func make(now: @escaping @Sendable () -> Date = Date.init) throws -> SQLiteLocalStore {
        try makeWithDatabase(now: now).store
    }

    /// A migrated in-memory local store and its database.
    public static func makeWithDatabase(now: @escaping @Sendable () -> Date = Date.init) throws -> (
        store: SQLiteLocalStore, database: DatabaseQueue
    ) {
        let queue = try DatabaseQueue()
        var migrator = DatabaseMigrator()
        SyncSchema.register(in: &migrator)
        try migrator.migrate(queue)
        return (SQLiteLocalStore(database: queue, now: now, logger: LogSystem.disabled().logger(.data)), queue)
    }
}
