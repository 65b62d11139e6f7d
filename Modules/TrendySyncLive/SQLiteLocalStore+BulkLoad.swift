import Foundation
import GRDB
import Logging

/// Tables another feature derives from `local_events` by its own triggers (the insights plugin's
/// daily aggregates), as a bulk load treats them: `begin` takes the triggers down with the event
/// indexes, in the same transaction; `end` puts them back and builds the tables from every event
/// once, in the transaction that builds the indexes (D63). The caller (the composition root)
/// hands them to the store; the store runs the statements and knows nothing of what they keep.
public struct DerivedFromEvents: Sendable {
    /// Statements that take the triggers down.
    public var begin: String
    /// Statements that create the triggers (`IF NOT EXISTS`: a load a crash interrupted, or one
    /// begun by a version that left them up) and build the tables from the events.
    public var end: String
    /// A query answering whether the tables are whole: the triggers are all there, and a build
    /// in parts is not under way (1 or 0).
    public var present: String
    /// Optional: a bulk load's end builds the tables in parts, each in a transaction of its own,
    /// so a person's write waits for one part, not for the whole build (D67). `start` puts the
    /// triggers up and begins the build; each `step` builds the next part, until ``present``
    /// says the tables are whole. Without them, ``end`` in one transaction.
    public var inParts: (start: String, step: String)?

    /// Derived tables with their bulk-load statements.
    public init(begin: String, end: String, present: String, inParts: (start: String, step: String)? = nil) {
        self.begin = begin
        self.end = end
        self.present = present
        self.inParts = inParts
    }
}

/// Bulk loading: a device downloading its history into a store with no events takes down the
/// secondary indexes on `local_events` that the download would fill at random, and builds them
/// once at the end; other features' derived tables (``DerivedFromEvents``) the same way.
///
/// Each row inserted with the indexes up is three B-tree inserts instead of one, and when the
/// feed's order is not the events' time order every insert into the time index lands on a
/// different page, so each commit rewrites hundreds of pages. Building an index over the whole
/// table at the end is a sort. Whether a load is under way is the schema itself (the indexes are
/// absent), not a flag: a crash mid-download, or a user switch that wipes `sync_state`, cannot
/// lose it, and the next pull rebuilds them (and the derived tables, whose triggers went down in
/// the same transaction).
extension SQLiteLocalStore {
    /// The secondary indexes on `local_events`, exactly as migration `sync.v1` creates them
    /// (SQLite stores the statement without `IF NOT EXISTS`).
    static let eventIndexes: [(name: String, sql: String)] = [
        (
            timeIndex,
            "CREATE INDEX IF NOT EXISTS local_events_time ON local_events(timestamp_ms DESC, id DESC)"
        ),
        (
            "local_events_type_time",
            "CREATE INDEX IF NOT EXISTS local_events_type_time ON local_events(event_type_id, timestamp_ms)"
        ),
    ]

    /// The index the first screen reads (newest events first).
    static let timeIndex = "local_events_time"

    static func eventIndexesDown(_ db: Database) throws -> Bool {
        let names = eventIndexes.map(\.name)
        let present =
            try Int.fetchOne(
                db,
                sql: """
                    SELECT COUNT(*) FROM sqlite_master WHERE type = 'index'
                    AND name IN (\(names.map { _ in "?" }.joined(separator: ", ")))
                    """,
                arguments: StatementArguments(names)) ?? 0
        return present < names.count
    }

    /// Whether a bulk load has the event indexes down (including one a crash interrupted).
    package func bulkLoading() async throws -> Bool {
        try await db.read { db in try Self.eventIndexesDown(db) }
    }

    /// What ``beginBulkLoad()`` found.
    package enum BulkLoadStart: Sendable, Equatable {
        /// The store has events and its indexes: rows go through them as usual.
        case notStarted
        /// The store had no events: the indexes are down, and every event stored until the load
        /// ends arrives in this download.
        case startedOnEmptyStore
        /// The indexes were already down (a load a crash interrupted): continued.
        case continued
    }

    /// Starts a bulk load when the store has no events (or continues one already under way).
    /// Reads stay correct meanwhile, only without the indexes that are down.
    ///
    /// `keepingTimeIndex`: the download arrives newest first (the bootstrap's listing), which is
    /// the time index's own order, so its inserts there are appends (about 1 µs a row) and the
    /// first screen stays indexed while a new device downloads its history; only the type/time
    /// index, which such a download fills at random, comes down. A feed download arrives in
    /// change order, not time order, and takes both down.
    package func beginBulkLoad(keepingTimeIndex: Bool = false) async throws -> BulkLoadStart {
        try await db.write { db in
            if try Self.eventIndexesDown(db) { return .continued }
            guard try !(Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM local_events)") ?? true) else {
                return .notStarted
            }
            for index in Self.eventIndexes where !(keepingTimeIndex && index.name == Self.timeIndex) {
                try db.execute(sql: "DROP INDEX IF EXISTS \(index.name)")
            }
            // Whether the time index stays or not, one of the indexes is down: that is the mark
            // that these triggers are down too.
            for tables in derived { try db.execute(sql: tables.begin) }
            return .startedOnEmptyStore
        }
    }

    /// Puts back derived tables whose triggers are missing while no load is under way, at open: a
    /// load this version began and a program that does not know them ended (an older `trendy`
    /// still running across an upgrade, or one built without the feature) built the indexes
    /// only, and nothing else would ever notice; or a build in parts a crash cut short (D67). One
    /// read of the schema when all is well.
    public static func mendDerived(_ writer: any DatabaseWriter, _ derived: [DerivedFromEvents]) throws {
        let missing = try writer.read { db -> [DerivedFromEvents] in
            guard try !eventIndexesDown(db) else { return [] }  // under way: its end builds them
            return try derived.filter { try !(Bool.fetchOne(db, sql: $0.present) ?? false) }
        }
        guard !missing.isEmpty else { return }
        try writer.write { db in
            for tables in missing { try db.execute(sql: tables.end) }
        }
    }

    /// Most parts a build in parts takes before it is finished in one transaction (a build whose
    /// steps make no progress must not hold a download's end for ever).
    static let mostParts = 10_000

    /// Ends a bulk load: builds the event indexes over everything stored, then the derived
    /// tables. Derived tables that cannot be built (a damaged table, a full disk) are
    /// logged and left with their triggers down — the next open mends them (``mendDerived(_:_:)``):
    /// failing the load for them left the indexes down and every later pull failing the same way
    /// (a review finding).
    ///
    /// The indexes and each feature's tables are built in transactions of their own, and tables
    /// that can be built in parts are (D67): a person's write waits for one of them, not for all
    /// (at 140,000 events a write waited up to 0.95 s for the indexes and the aggregates in one).
    /// A crash between them leaves the derived tables' triggers down, or their build in parts
    /// unfinished, with the indexes up, which the next open mends; a write between them is
    /// counted by the build.
    package func endBulkLoad() async throws {
        try await db.write { db in
            for index in Self.eventIndexes { try db.execute(sql: index.sql) }
        }
        for tables in derived {
            do {
                if let (start, step) = tables.inParts {
                    try await db.write { db in try db.execute(sql: start) }
                    // Each part a transaction of its own.
                    var whole = false
                    for _ in 0..<Self.mostParts where !whole {
                        try await Task.sleep(for: LocalDatabaseSettings.writeGap)
                        whole = try await db.write { db in
                            try db.execute(sql: step)
                            return try Bool.fetchOne(db, sql: tables.present) ?? false
                        }
                    }
                    if whole { continue }
                }
                try await db.write { db in try db.execute(sql: tables.end) }
            } catch {
                logger.error(
                    "Could not build tables derived from the events; they stay stale until an open mends them",
                    metadata: ["error": .string(String(describing: error))])
            }
        }
    }
}
