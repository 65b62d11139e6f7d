import Foundation
import GRDB
import TrendySync

/// The full-text index of events (issue 33): each event's note, place and text-like property
/// values (text, select, url, email), in an FTS5 table with the trigram tokenizer — words are
/// found anywhere in a word, in any case, as the scan they replace found them. Triggers on
/// `local_events` keep it in the same transaction as every write, whichever path writes (a log,
/// an edit, an import, a pull, a download, a delete, a type's cascade).
///
/// The index's rowids are the events' *search keys*: `timestamp_ms << 16` plus a slot among the
/// events of the same millisecond (`local_event_search` maps an event to its key), so the index
/// itself is in time order and the newest matches are read first, without sorting every match
/// (a common word matches hundreds of thousands). Within one millisecond, matches are listed in
/// the order they were written rather than by id.
enum SearchIndex {
    /// The text an event is found by, from its row's `body` (`row` is `new` or `old`).
    static func text(_ row: String) -> String {
        """
        trim(coalesce(json_extract(\(row).body, '$.notes'), '') || char(10)
          || coalesce(json_extract(\(row).body, '$.location_name'), '') || char(10)
          || coalesce((SELECT group_concat(json_extract(p.value, '$.value'), char(10))
                       FROM json_each(\(row).body, '$.properties') AS p
                       WHERE json_extract(p.value, '$.type') IN ('text', 'select', 'url', 'email')), ''),
          char(10))
        """
    }

    /// The next free key in the event's millisecond.
    static let nextKey = """
        (SELECT coalesce(max(key) + 1, new.timestamp_ms * 65536) FROM local_event_search
         WHERE key >= new.timestamp_ms * 65536 AND key < (new.timestamp_ms + 1) * 65536)
        """

    /// Removes `id`'s entry (its key and its indexed text).
    static func forget(_ id: String) -> String {
        """
        DELETE FROM local_events_fts WHERE rowid = (SELECT key FROM local_event_search WHERE event_id = \(id));
        DELETE FROM local_event_search WHERE event_id = \(id);
        """
    }

    /// Indexes the `new` row when it has text to find it by: the text is made once, the index's
    /// row goes in under the next free key, and the key is taken when it did (the key is read
    /// from the map, which has not changed in between).
    static let index = """
        INSERT INTO local_events_fts (rowid, text)
          SELECT k, t FROM (SELECT \(nextKey) AS k, \(text("new")) AS t) WHERE t != '';
        INSERT INTO local_event_search (key, event_id)
          SELECT k, new.id FROM (SELECT \(nextKey) AS k) WHERE EXISTS (SELECT 1 FROM local_events_fts WHERE rowid = k);
        """

    /// Migration `sync.v10-search`: the tables, the triggers, and every event already here.
    static func migrate(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE local_event_search (key INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE);
                CREATE VIRTUAL TABLE local_events_fts USING fts5(text, tokenize = 'trigram');
                CREATE TRIGGER local_events_search_insert AFTER INSERT ON local_events BEGIN
                  \(forget("new.id"))
                  \(index)
                END;
                CREATE TRIGGER local_events_search_update AFTER UPDATE OF body, timestamp_ms ON local_events BEGIN
                  \(forget("old.id"))
                  \(index)
                END;
                CREATE TRIGGER local_events_search_delete AFTER DELETE ON local_events BEGIN
                  \(forget("old.id"))
                END;
                INSERT INTO local_event_search (key, event_id)
                  SELECT timestamp_ms * 65536 + row_number() OVER (PARTITION BY timestamp_ms ORDER BY id) - 1, id
                  FROM local_events AS new WHERE \(text("new")) != '';
                INSERT INTO local_events_fts (rowid, text)
                  SELECT s.key, \(text("new")) FROM local_event_search AS s JOIN local_events AS new ON new.id = s.event_id;
                """)
    }

    /// The tables the index keeps (a repair builds them again from the events, never copies them).
    static let tables: Set<String> = [
        "local_event_search", "local_events_fts", "local_events_fts_data", "local_events_fts_idx",
        "local_events_fts_content", "local_events_fts_docsize", "local_events_fts_config", "local_search_dirty",
    ]

    // MARK: Deferred indexing (issue 35)

    /// Whether the current transaction holds the triggers' work back (``deferring(_:_:)``).
    static let deferred = "EXISTS (SELECT 1 FROM sync_state WHERE key = 'search_deferred')"

    /// An update that changes neither the text nor the time leaves the index as it is.
    static let changed = "(old.timestamp_ms IS NOT new.timestamp_ms OR \(text("old")) IS NOT \(text("new")))"

    /// Migration `sync.v11-search-deferral`: the triggers index row by row unless the transaction
    /// defers them, when they only note the event (`local_search_dirty`) for one set-wise pass at
    /// its end; an update that changes neither text nor time does neither.
    ///
    /// FTS5 writes its pending terms out at every statement, so indexing a pulled page row by row
    /// cost 55–130 µs an event (most of a pull's client time); a page's events indexed by one
    /// statement cost about 16.
    static func migrateDeferral(_ db: Database) throws {
        try db.execute(
            sql: """
                DROP TRIGGER local_events_search_insert;
                DROP TRIGGER local_events_search_update;
                DROP TRIGGER local_events_search_delete;
                CREATE TABLE local_search_dirty (event_id TEXT PRIMARY KEY) WITHOUT ROWID;
                CREATE TRIGGER local_events_search_insert AFTER INSERT ON local_events WHEN NOT \(deferred) BEGIN
                  \(forget("new.id"))
                  \(index)
                END;
                CREATE TRIGGER local_events_search_update AFTER UPDATE OF body, timestamp_ms ON local_events
                WHEN NOT \(deferred) AND \(changed) BEGIN
                  \(forget("old.id"))
                  \(index)
                END;
                CREATE TRIGGER local_events_search_delete AFTER DELETE ON local_events WHEN NOT \(deferred) BEGIN
                  \(forget("old.id"))
                END;
                CREATE TRIGGER local_events_search_note_insert AFTER INSERT ON local_events WHEN \(deferred) BEGIN
                  \(note("new.id"))
                END;
                CREATE TRIGGER local_events_search_note_update AFTER UPDATE OF body, timestamp_ms ON local_events
                WHEN \(deferred) AND \(changed) BEGIN
                  \(note("new.id"))
                END;
                CREATE TRIGGER local_events_search_note_delete AFTER DELETE ON local_events WHEN \(deferred) BEGIN
                  \(note("old.id"))
                END;
                """)
    }

    /// An update that gives the event another id (a merge: this device's copy takes the server's)
    /// or changes its text or time.
    static let changedOrRenamed = "(old.id IS NOT new.id OR \(changed))"

    /// Migration `sync.v12-search-follows-ids`: the update triggers follow an event whose id
    /// changes (`mergeIntoServerCopy`): the index kept the old id, and search lost the event until
    /// a pull (an outsider's attack, issue 35). The entries earlier merges left behind go, and the
    /// events they lost are indexed again.
    static func migrateRenames(_ db: Database) throws {
        try db.execute(
            sql: """
                DROP TRIGGER local_events_search_update;
                DROP TRIGGER local_events_search_note_update;
                CREATE TRIGGER local_events_search_update AFTER UPDATE OF id, body, timestamp_ms ON local_events
                WHEN NOT \(deferred) AND \(changedOrRenamed) BEGIN
                  \(forget("old.id"))
                  \(index)
                END;
                CREATE TRIGGER local_events_search_note_update AFTER UPDATE OF id, body, timestamp_ms ON local_events
                WHEN \(deferred) AND \(changedOrRenamed) BEGIN
                  \(note("old.id"))
                  \(note("new.id"))
                END;
                INSERT INTO local_search_dirty (event_id)
                  SELECT s.event_id FROM local_event_search AS s
                  WHERE NOT EXISTS (SELECT 1 FROM local_events WHERE id = s.event_id)
                  UNION
                  SELECT e.id FROM local_events AS e
                  WHERE NOT EXISTS (SELECT 1 FROM local_event_search WHERE event_id = e.id) AND \(text("e")) != '';
                """)
        try reindexNoted(db)
    }

    /// Notes `id` for the deferred pass, once (not `INSERT OR IGNORE`: a trigger's conflict clause
    /// yields to the statement that fired it, and an upsert's would make a second note an error).
    static func note(_ id: String) -> String {
        "INSERT INTO local_search_dirty (event_id) SELECT \(id) WHERE NOT EXISTS "
            + "(SELECT 1 FROM local_search_dirty WHERE event_id = \(id));"
    }

    /// Runs `body` inside the caller's transaction with the index's work held back, then indexes
    /// every event it inserted, changed or deleted in four set-wise statements. A failure rolls
    /// the whole transaction back, the hold included.
    static func deferring<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        try db.execute(sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES ('search_deferred', '1')")
        let result = try body()
        try db.execute(sql: "DELETE FROM sync_state WHERE key = 'search_deferred'")
        try reindexNoted(db)
        return result
    }

    /// Indexes the noted events again: their old entries go, each that still exists and has text
    /// takes the next free keys of its millisecond (in id order), and the notes are cleared. Every
    /// join starts from the notes (`CROSS JOIN` fixes the order): a page's events, not the store's.
    static func reindexNoted(_ db: Database) throws {
        guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM local_search_dirty)") == true else { return }
        // One key at a time: FTS5 finds a row by `rowid = ?`, but scans the whole index for `IN`.
        let stale = try Int64.fetchAll(
            db,
            sql: """
                SELECT s.key FROM local_search_dirty AS d CROSS JOIN local_event_search AS s ON s.event_id = d.event_id
                """)
        let forget = try db.cachedStatement(sql: "DELETE FROM local_events_fts WHERE rowid = ?")
        for key in stale { try forget.execute(arguments: [key]) }
        try db.execute(
            sql: """
                DELETE FROM local_event_search WHERE event_id IN (SELECT event_id FROM local_search_dirty);
                INSERT INTO local_event_search (key, event_id)
                  SELECT coalesce(
                      (SELECT max(key) + 1 FROM local_event_search
                       WHERE key >= new.timestamp_ms * 65536 AND key < (new.timestamp_ms + 1) * 65536),
                      new.timestamp_ms * 65536)
                    + row_number() OVER (PARTITION BY new.timestamp_ms ORDER BY new.id) - 1, new.id
                  FROM local_search_dirty AS d CROSS JOIN local_events AS new ON new.id = d.event_id
                  WHERE \(text("new")) != '';
                INSERT INTO local_events_fts (rowid, text)
                  SELECT s.key, \(text("new")) FROM local_search_dirty AS d
                  CROSS JOIN local_event_search AS s ON s.event_id = d.event_id
                  CROSS JOIN local_events AS new ON new.id = d.event_id;
                DELETE FROM local_search_dirty;
                """)
    }

    /// An FTS5 query of every word, each a phrase (found anywhere, any case): nil when a word is
    /// shorter than three characters (the trigram index cannot find it) or there is no word.
    static func query(_ words: [String]) -> String? {
        guard !words.isEmpty, words.allSatisfy({ $0.count >= 3 }) else { return nil }
        return words.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }.joined(separator: " ")
    }
}
