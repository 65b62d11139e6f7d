import Dispatch
import Foundation
import GRDB
import GRDBSQLite

/// Moves WAL checkpoints off the writer. SQLite normally checkpoints inside the commit that
/// pushes the WAL past 1,000 pages, so every few thousand rows of a pull or an import one
/// commit waits for the copy into the database file and its fsync. Installed on the install
/// database's connections, this checkpoints from its own connection on a utility queue instead
/// (the pattern SQLite's documentation suggests); a passive checkpoint never blocks the writer
/// or readers. If the WAL still grows far past the threshold (the background checkpoint cannot
/// keep up, or readers pin it), the committing connection checkpoints itself as SQLite would.
public final class BackgroundCheckpointer: @unchecked Sendable {
    /// WAL pages after which a background checkpoint starts (SQLite's own default).
    public let threshold: Int32
    /// WAL pages after which the committing connection checkpoints itself.
    public let ceiling: Int32
    private let path: String
    private let queue = DispatchQueue(label: "trendy.wal-checkpoint", qos: .utility)
    private let lock = NSLock()
    // Guarded by `lock`.
    private var scheduled = false
    // Used only on `queue`.
    private var connection: OpaquePointer?

    /// A checkpointer for the database at `path`.
    public init(path: String, threshold: Int32 = 1_000, ceiling: Int32 = 16_000) {
        self.path = path
        self.threshold = threshold
        self.ceiling = ceiling
    }

    deinit {
        if let connection { sqlite3_close_v2(connection) }
    }

    /// Installs a checkpointer for `path` on every connection `configuration` opens.
    public static func configure(
        _ configuration: inout Configuration, path: String, threshold: Int32 = 1_000, ceiling: Int32 = 16_000
    ) {
        let checkpointer = BackgroundCheckpointer(path: path, threshold: threshold, ceiling: ceiling)
        configuration.prepareDatabase { db in checkpointer.install(on: db) }
    }

    /// Takes over the connection's checkpoints (replaces SQLite's automatic ones on it).
    public func install(on db: Database) {
        let hook: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = {
            context, connection, _, pages in
            guard let context, let connection else { return SQLITE_OK }
            Unmanaged<BackgroundCheckpointer>.fromOpaque(context).takeUnretainedValue()
                .walGrew(to: pages, on: connection)
            return SQLITE_OK
        }
        sqlite3_wal_hook(db.sqliteConnection, hook, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Called by SQLite after each commit with the WAL's size in pages.
    private func walGrew(to pages: Int32, on connection: OpaquePointer) {
        if pages >= ceiling {
            sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            return
        }
        guard pages >= threshold else { return }
        let start = lock.withLock {
            defer { scheduled = true }
            return !scheduled
        }
        guard start else { return }
        queue.async { [self] in
            checkpoint()
            lock.withLock { scheduled = false }
        }
    }

    /// Returns when no background checkpoint is scheduled or running: one started before the call
    /// has finished. For shutdown and for tests that need the checkpoints to have run.
    public func waitUntilIdle() {
        queue.sync {}
    }

    /// One passive checkpoint from the checkpointer's own connection (on `queue`).
    private func checkpoint() {
        if connection == nil {
            var opened: OpaquePointer?
            guard sqlite3_open_v2(path, &opened, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
                sqlite3_close_v2(opened)
                return
            }
            sqlite3_busy_timeout(opened, 1_000)
            sqlite3_exec(opened, "PRAGMA synchronous = NORMAL", nil, nil, nil)
            connection = opened
        }
        sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
    }
}
