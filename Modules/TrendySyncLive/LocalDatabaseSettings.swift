import Dispatch
import Foundation
import GRDB

/// How an install's database is opened, for the app and for anything that measures it as the app
/// runs it (the benchmarks): `synchronous = NORMAL` under WAL, checkpoints off the writer
/// (``BackgroundCheckpointer``), a larger page cache for the writer, and writes below the
/// interactive path.
public enum LocalDatabaseSettings {
    /// The writer connection's page cache, in KiB (SQLite's default is 2,000). A pulled page's
    /// transaction dirties a page of every index leaf its events land on: the event-id and
    /// search-key indexes take ids in no useful order, so a page of 1,000 events touches
    /// thousands of pages. With 2 MB they did not fit: SQLite wrote them to the WAL before the
    /// commit and read them back, and a new device's download of 140,000 events made 1.45
    /// million `pread`s (D64). Filled only as used.
    public static let writerCacheKiB = 16_384

    /// How a connection waits for another process's write lock: it tries again every
    /// millisecond, for up to 10 s. SQLite's own timeout tries again every 100 ms after the first
    /// few, and a download's page transactions follow one another with gaps far shorter than that:
    /// a `trendy log` beside another process's download waited 0.7–6.1 s (an outsider). The
    /// download leaves a gap after each page (``writeGap``) that a waiter trying this often meets.
    public static let waitForTheWriteLock: Database.BusyCallback = { tries in
        usleep(1_000)
        return tries < 10_000
    }

    /// How long a download or a bulk load's end leaves the write lock free between its
    /// transactions, for a write from another process (``waitForTheWriteLock``).
    public static let writeGap = Duration.milliseconds(3)

    /// Applies the settings for the database at `path` to `configuration`.
    ///
    /// Writes (a pulled page's transaction above all) run on a utility queue: GRDB's default QoS
    /// is `userInitiated`, which Linux runs at `nice -2`, above the main thread (D62). Reads, which
    /// a screen waits for, keep GRDB's default.
    public static func apply(to configuration: inout Configuration, path: String) {
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // Readers (a pool's are read-only) keep SQLite's 2 MB: an export streams through one.
            if !db.configuration.readonly { try db.execute(sql: "PRAGMA cache_size = -\(writerCacheKiB)") }
        }
        configuration.writeTargetQueue = DispatchQueue(label: "trendy.database.write", qos: .utility)
        BackgroundCheckpointer.configure(&configuration, path: path)
    }
}
