import Foundation
import GRDB
import TrendyFiles
import TrendyGeofenceLive
import TrendySyncLive

/// The install's SQLite database: WAL, foreign keys, and every module's migrations, registered
/// here in one place.
enum AppDatabase {
    static func migrator() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        SyncSchema.register(in: &migrator)
        GeofenceSchema.register(in: &migrator)
        return migrator
    }

    static func open(at url: URL) throws -> DatabasePool {
        try OwnerOnlyFile.prepareDatabase(url)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        BackgroundCheckpointer.configure(&configuration, path: url.path)
        let pool = try DatabasePool(path: url.path, configuration: configuration)
        try migrator().migrate(pool)
        return pool
    }

    /// Moves a damaged database aside and rebuilds it from what can still be read (see
    /// `LocalDatabaseRepair`).
    static func repair(at url: URL) throws -> LocalDatabaseRepair.Report {
        try LocalDatabaseRepair.repair(at: url, migrator: migrator())
    }
}
