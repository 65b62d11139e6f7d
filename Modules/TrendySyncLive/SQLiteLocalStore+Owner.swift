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
    /// cleared (it is on the server); unsynced data of another account is never discarded. An
    /// earlier owner with the same `email` is the same person on a server that no longer has
    /// that account (restored from a backup without it, outsider's B2): clearing would lose
    /// everything they had, so the data stays, the cursor goes, and the next sync's download
    /// finds none of it on the server and sends it all again (D59's recovery).
    @discardableResult
    public func claim(for userId: String, email: String?) async throws -> LocalClaim {
        try await db.write { db in
            let owner = try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'owner'")
            let ownerEmail = try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'owner_email'")
            var claim = LocalClaim.unchanged
            if let owner, owner != userId {
                if let email, let ownerEmail, ownerEmail.lowercased() == email.lowercased() {
                    try db.execute(
                        sql: """
                            DELETE FROM sync_state
                            WHERE key IN ('cursor', 'cursor_at', 'pushed_cursor', 'pushed_cursor_at', 'download_progress')
                            """)
                    claim = .carriedOver(previous: owner)
                } else {
                    try Self.clearForAnotherAccount(db)
                    claim = .cleared
                }
            }
            if owner != userId {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES ('owner', ?)", arguments: [userId])
            }
            if let email {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES ('owner_email', ?)", arguments: [email])
            }
            return claim
        }
    }

    /// Clears the last account's data before another takes the store; refused while any of it
    /// waits to be sent.
    static func clearForAnotherAccount(_ db: Database) throws {
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
            "sync_conflicts", "merged_events", "pushed_versions",
        ] {
            try db.execute(sql: "DELETE FROM \(table)")
        }
        // The install's device id stays (it is this install's, not the account's; before, a
        // switch left every later change of this install from device `unknown`).
        try db.execute(sql: "DELETE FROM sync_state WHERE key NOT IN ('device_id', 'database_file')")
    }

    /// The email of the account the local data belongs to, as its last sign-in gave it (nil
    /// before one recorded it).
    public func ownerEmail() async throws -> String? {
        try await db.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'owner_email'")
        }
    }

    public func owner() async throws -> String? {
        try await db.read { db in try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'owner'") }
    }
}
