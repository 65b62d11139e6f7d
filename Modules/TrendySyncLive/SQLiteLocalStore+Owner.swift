import Foundation
import GRDB
import TrendySync

/// Which account the local data belongs to.
extension SQLiteLocalStore {
    /// Why local data cannot be handed to another account.
    public struct OwnedByAnotherAccount: Error, CustomStringConvertible {
        /// Unsynced changes of the previous account.
        public var pending: Int
        /// A readable explanation.
        public var description: String {
            "this device holds \(pending) unsynced change(s) of another account; sign in as that account and run `trendy sync` first"
        }
    }

    /// Makes `userId` the owner of the local data. A different previous owner's synced data is
    /// cleared (it is on the server); unsynced data of another account is never discarded.
    /// Returns whether local data was cleared.
    @discardableResult
    public func claim(for userId: String) async throws -> Bool {
        try await db.write { db in
            let owner = try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'owner'")
            if owner == userId { return false }
            var cleared = false
            if owner != nil {
                // A conflict dismissed or restored and not yet sent is a change too.
                let pending =
                    (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM outbox") ?? 0)
                    + (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sync_conflicts WHERE resolution_unsent = 1") ?? 0)
                if pending > 0 { throw OwnedByAnotherAccount(pending: pending) }
                // The last account's conflicts and merges go with its data (they were shown to the
                // next account, with its notes).
                for table in [
                    "local_events", "local_event_types", "local_geofences", "local_property_definitions", "tombstones",
                    "sync_history",
                    "sync_conflicts", "merged_events",
                ] {
                    try db.execute(sql: "DELETE FROM \(table)")
                }
                // The install's device id stays (it is this install's, not the account's; before, a
                // switch left every later change of this install from device `unknown`).
                try db.execute(sql: "DELETE FROM sync_state WHERE key NOT IN ('device_id', 'database_file')")
                cleared = true
            }
            try db.execute(
                sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES ('owner', ?)", arguments: [userId])
            return cleared
        }
    }

    public func owner() async throws -> String? {
        try await db.read { db in try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'owner'") }
    }
}
