import Foundation
import GRDB
import TrendyFiles
import TrendySyncLive

/// The install's SQLite database: WAL, foreign keys, and the migrations of every plugin
/// (``AppPlugins/migrator(_:)``).
enum AppDatabase {
    /// `derivedNotMended` hears a failure to put back derived tables whose triggers a load left
    /// down (D63): the database still opens, with those tables stale until a later open mends
    /// them — a command that cannot open its database over a statistic would lose the person's
    /// writes.
    static func open(
        at url: URL, migrator: DatabaseMigrator, derived: [DerivedFromEvents] = [],
        derivedNotMended: (any Error) -> Void = { _ in }
    ) throws -> DatabasePool {
        // A repair killed after its commit point is finished first (D39).
        try LocalDatabaseRepair.finishInterruptedRepair(at: url)
        try OwnerOnlyFile.prepareDatabase(url)
        var configuration = Configuration()
        configuration.busyMode = .callback(LocalDatabaseSettings.waitForTheWriteLock)
        LocalDatabaseSettings.apply(to: &configuration, path: url.path)
        let pool = try DatabasePool(path: url.path, configuration: configuration)
        try migrator.migrate(pool)
        do {
            try SQLiteLocalStore.mendDerived(pool, derived)
        } catch {
            derivedNotMended(error)
        }
        // A copied or restored database is another device (its pulls leave out its own changes).
        try DeviceIdentity.renewIfCopied(pool, path: url.path)
        return pool
    }

    /// Whether the database at `url` holds `userId`'s data (it owns the local data and has event
    /// types). Read-only and cheap; false when there is no readable database. Used by the launch
    /// only when the onboarding cache has no status for the user.
    static func holdsData(of userId: String, at url: URL) -> Bool {
        guard FileManager.default.fileExists(atPath: url.path) else { return false }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(1)
        do {
            let queue = try DatabaseQueue(path: url.path, configuration: configuration)
            defer { try? queue.close() }
            return try queue.read { db in
                let owner = try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'owner'")
                return try owner == userId
                    && Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM local_event_types)") == true
            }
        } catch {
            return false
        }
    }

    /// Moves a damaged database aside and rebuilds it from what can still be read (see
    /// `LocalDatabaseRepair`).
    static func repair(at url: URL, plugins: [any TrendyPlugin]) throws -> LocalDatabaseRepair.Report {
        try LocalDatabaseRepair.repair(
            at: url, migrator: AppPlugins.migrator(plugins),
            derived: plugins.reduce(into: Set<String>()) { $0.formUnion($1.derivedTables) })
    }
}
