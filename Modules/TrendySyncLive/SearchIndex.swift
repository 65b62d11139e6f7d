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
        "local_events_fts_content", "local_events_fts_docsize", "local_events_fts_config",
    ]

    /// An FTS5 query of every word, each a phrase (found anywhere, any case): nil when a word is
    /// shorter than three characters (the trigram index cannot find it) or there is no word.
    static func query(_ words: [String]) -> String? {
        guard !words.isEmpty, words.allSatisfy({ $0.count >= 3 }) else { return nil }
        return words.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }.joined(separator: " ")
    }
}
