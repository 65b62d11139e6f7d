import Foundation
import GRDB

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// This install's device id stays this install's own (D57). The server leaves a device's own
/// changes out of its pulls; two databases with one id — a data folder copied to another
/// machine, or restored from a backup — would each skip changes only the other holds. So the
/// database remembers the file it was made in (device and inode), and a database found in
/// another file takes a new device id: the worst a needless renewal costs is echoes pulled once.
public enum DeviceIdentity {
    /// Gives the database at `path` a new device id when its file is not the one it last opened
    /// in; answers whether it did. The first open after an upgrade renews it too: a copy made
    /// before the upgrade shares the id and would record its own file as its own.
    @discardableResult
    public static func renewIfCopied(_ writer: any DatabaseWriter, path: String) throws -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        let file = "\(info.st_dev):\(info.st_ino)"
        let query = "SELECT value FROM sync_state WHERE key = 'database_file'"
        if try writer.read({ db in try String.fetchOne(db, sql: query) }) == file { return false }
        return try writer.write { db in
            let stored = try String.fetchOne(db, sql: query)
            guard stored != file else { return false }
            try db.execute(
                sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES ('database_file', ?)", arguments: [file])
            try db.execute(
                sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES ('device_id', lower(hex(randomblob(16))))")
            return true
        }
    }
}
