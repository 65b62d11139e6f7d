import Dispatch
import GRDB

/// How an install's database is opened, for the app and for anything that measures it as the app
/// runs it (the benchmarks): `synchronous = NORMAL` under WAL, checkpoints off the writer
/// (``BackgroundCheckpointer``), and writes below the interactive path.
public enum LocalDatabaseSettings {
    /// Applies the settings for the database at `path` to `configuration`.
    ///
    /// Writes (a pulled page's transaction above all) run on a utility queue: GRDB's default QoS
    /// is `userInitiated`, which Linux runs at `nice -2`, above the main thread (D62). Reads, which
    /// a screen waits for, keep GRDB's default.
    public static func apply(to configuration: inout Configuration, path: String) {
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        configuration.writeTargetQueue = DispatchQueue(label: "trendy.database.write", qos: .utility)
        BackgroundCheckpointer.configure(&configuration, path: path)
    }
}
