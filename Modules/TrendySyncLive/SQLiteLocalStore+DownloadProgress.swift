import Foundation
import GRDB
import TrendyAPI

/// How far a full download (the bootstrap) got, kept with each page it stores so that a download
/// a kill or a lost connection cut short goes on from the page after the last one stored instead
/// of from the first (D69). Kept in `sync_state` (a switch to another account wipes it with the
/// rest); written in the transaction that stores the page, so the record never runs ahead of the
/// rows.
package struct DownloadProgress: Codable, Sendable, Equatable {
    /// The account the download is for; another account's record is never continued.
    package var user: String
    /// The newest change when the download began: the cursor it ends at, so everything written
    /// on the server since (also during the pause) comes through the feed afterwards.
    package var cursor: Int64
    /// When that change was written (D59).
    package var at: String?
    /// The server lost changes (D59–D61): what it has older than this device knows goes to it again.
    package var recovering: Bool
    /// The event listing's next page (`after`); nil before the first page.
    package var after: String?
    /// The listing's last page is stored.
    package var listed = false
    /// Whether the events stored are remembered as seen (``SQLiteLocalStore/bootstrap(_:wire:remember:recovering:progress:)``):
    /// decided at the first page, kept for the rest, since the end's check must know which.
    package var remember: Bool?

    /// This download's own mark, kept in `bootstrap_seen` too: a record whose mark is not there
    /// belongs to a download whose table another program cleared or did not copy (an older
    /// `trendy`'s download or repair), and is not continued.
    package var nonce: String

    /// A download beginning at `latest`.
    package init(user: String, latest: LatestCursor, recovering: Bool) {
        self.nonce = UUID().uuidString
        self.user = user
        self.cursor = latest.cursor
        self.at = latest.at
        self.recovering = recovering
    }

    /// The cursor the download ends at.
    package var latest: LatestCursor { LatestCursor(cursor: cursor, at: at) }

    static let key = "download_progress"
    /// The `entity` of the record's mark in `bootstrap_seen`.
    static let seenEntity = "download"

    static func save(_ progress: DownloadProgress, _ db: Database) throws {
        try db.execute(
            sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES (?, ?)",
            arguments: [key, try SQLiteLocalStore.encode(progress)])
    }

    static func forget(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM sync_state WHERE key = ?", arguments: [key])
    }
}

extension SQLiteLocalStore {
    /// The record of a download cut short, if one is kept (unreadable: none, and the next download
    /// starts over).
    package func downloadProgress() async throws -> DownloadProgress? {
        try await db.read { db in try Self.downloadProgress(db) }
    }

    static func downloadProgress(_ db: Database) throws -> DownloadProgress? {
        try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = ?", arguments: [DownloadProgress.key])
            .flatMap { try? decode(DownloadProgress.self, $0) }
    }

    /// The record of a download cut short, when the next full download goes on with it: the
    /// state that asked for it stands (no cursor yet, or a recovery owed — a `--full` asked of a
    /// device that has its history starts over), and its mark is in `bootstrap_seen` with the ids
    /// it has seen (``DownloadProgress/nonce``).
    package func continuableDownload() async throws -> DownloadProgress? {
        try await db.read { db in try Self.continuableDownload(db) }
    }

    static func continuableDownload(_ db: Database) throws -> DownloadProgress? {
        guard let kept = try downloadProgress(db), try downloadOwed(db), try db.tableExists("bootstrap_seen") else {
            return nil
        }
        let marked =
            try Bool.fetchOne(
                db, sql: "SELECT 1 FROM bootstrap_seen WHERE entity = ? AND id = ?",
                arguments: [DownloadProgress.seenEntity, kept.nonce]) ?? false
        return marked ? kept : nil
    }

    /// Whether a full download is owed: no cursor yet, or a recovery (D59–D61).
    static func downloadOwed(_ db: Database) throws -> Bool {
        try cursor(db) == nil
            || (try Bool.fetchOne(db, sql: "SELECT 1 FROM sync_state WHERE key = 'download_everything'") ?? false)
    }

    /// A full download owed and begun: the events stored so far — whether the next pass goes on
    /// with it (``continuableDownload()``) or starts over (a push came between; an outsider found
    /// `trendy status` silent then about a device holding 18,001 of 100,004 events).
    public func downloadCutShort() async throws -> Int? {
        try await db.read { db -> Int? in
            guard try Self.downloadOwed(db) else { return nil }
            let stored =
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM local_events WHERE sync_status = 'synced'") ?? 0
            return try Self.continuableDownload(db) != nil || stored > 0 ? stored : nil
        }
    }

    /// Forgets a download cut short: the next one starts from the first page.
    package func forgetDownloadProgress() async throws {
        try await db.write { db in try DownloadProgress.forget(db) }
    }
}
