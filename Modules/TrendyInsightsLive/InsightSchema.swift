import GRDB

/// The insights plugin's tables in the install database: the person's settings, zone offsets, and
/// the daily aggregates (per type, day and zone logged in; per type and weekday-hour slot; per type,
/// property and day) that triggers on Sync's `local_events` keep in the same transaction as
/// every write (a log, an edit, a delete, an import, a pull, an adoption, a repair's copy), so
/// insights never scan the events — except during a bulk load into an empty store, which takes
/// the triggers down and builds the aggregates once at its end (``bulkLoadBegin``, D63).
///
/// A day is computed in SQL exactly as ``DayClock`` computes it: the event's zone (its
/// `time_zone`, else the home zone) gives the offset in force at its time from
/// `insight_zone_offsets` (the same periods ``ZoneOffsets`` reads), the wall-clock time less the
/// day-start hour is floored to a day. Property sums are integers in thousandths (``ValueSum``).
/// An `INSERT OR REPLACE` (a pulled page) deletes the row it replaces without delete triggers, so
/// a `BEFORE INSERT` trigger takes that row out first.
public enum InsightSchema {
    /// Adds the migrations (after Sync's: the triggers are on its table).
    public static func register(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("insights.v1", migrate: migrate)
        migrator.registerMigration("insights.v2-build-in-parts", migrate: migrateBuildInParts)
    }

    /// Far enough back that every event's day is floored correctly by integer division.
    static let shift: Int64 = 86_400_000 * 1_000_000

    /// A column of the `row` event: `new.body`, or for the row an `INSERT OR REPLACE` is about
    /// to replace (`replaced`), the stored row with the new row's id.
    static func column(_ row: String, _ name: String) -> String {
        row == "replaced" ? "(SELECT \(name) FROM local_events WHERE id = new.id)" : "\(row).\(name)"
    }

    /// The offset (seconds) in force for the `row`'s event.
    static func offset(_ row: String) -> String {
        """
        coalesce(
          (SELECT offset_s FROM insight_zone_offsets WHERE zone = json_extract(\(column(row, "body")), '$.time_zone')
             AND from_ms <= \(column(row, "timestamp_ms")) ORDER BY from_ms DESC LIMIT 1),
          (SELECT z.offset_s FROM insight_zone_offsets AS z WHERE z.zone = (SELECT zone FROM insight_settings WHERE id = 1)
             AND z.from_ms <= \(column(row, "timestamp_ms")) ORDER BY z.from_ms DESC LIMIT 1),
          0)
        """
    }

    /// `(wall, ds)` for the row: its wall-clock milliseconds and the day start in milliseconds.
    static func clock(_ row: String) -> String {
        """
        (SELECT \(column(row, "timestamp_ms")) + 1000 * \(offset(row)) AS wall,
                coalesce((SELECT day_start FROM insight_settings WHERE id = 1), 0) * 3600000 AS ds)
        """
    }

    /// The day, from `wall` and `ds`.
    static let day = "((wall - ds + \(shift)) / 86400000 - \(shift / 86_400_000))"
    /// The weekday-and-hour slot, from `wall` and `ds`.
    static let slot = "(((\(day) % 7) + 10) % 7) * 24 + ((wall + \(shift)) % 86400000) / 3600000"
    /// Whether the `row` event may have a number or a duration (the values' statements skip
    /// reading its properties otherwise).
    static func numeric(_ row: String) -> String {
        "(instr(\(column(row, "body")), '\"type\":\"number\"') > 0 OR instr(\(column(row, "body")), '\"type\":\"duration\"') > 0)"
    }

    /// The event's zone name ('' for none).
    static func zone(_ row: String) -> String { "coalesce(json_extract(\(column(row, "body")), '$.time_zone'), '')" }

    /// Adds the `row` event to every aggregate.
    static func add(_ row: String) -> String {
        """
        INSERT INTO insight_daily (type_id, day, zone, count)
          SELECT \(column(row, "event_type_id")), \(day), \(zone(row)), 1 FROM \(clock(row)) WHERE 1
          ON CONFLICT (type_id, day, zone) DO UPDATE SET count = count + 1;
        INSERT INTO insight_slots (type_id, slot, count)
          SELECT \(column(row, "event_type_id")), \(slot), 1 FROM \(clock(row)) WHERE 1
          ON CONFLICT (type_id, slot) DO UPDATE SET count = count + 1;
        INSERT INTO insight_values (type_id, key, day, n, milli)
          SELECT \(column(row, "event_type_id")), p.key, \(day), 1, CAST(round(json_extract(p.value, '$.value') * 1000) AS INTEGER)
          FROM \(clock(row)), json_each(\(column(row, "body")), '$.properties') AS p
          WHERE \(numeric(row)) AND json_extract(p.value, '$.type') IN ('number', 'duration')
          ON CONFLICT (type_id, key, day) DO UPDATE SET n = n + 1, milli = milli + excluded.milli;
        """
    }

    /// Takes the `row` event out of every aggregate (rows left at zero are skipped by reads and
    /// dropped by a rebuild).
    static func remove(_ row: String) -> String {
        let d = "(SELECT \(day) FROM \(clock(row)))"
        return """
            UPDATE insight_daily SET count = count - 1
              WHERE type_id = \(column(row, "event_type_id")) AND day = \(d) AND zone = \(zone(row));
            UPDATE insight_slots SET count = count - 1
              WHERE type_id = \(column(row, "event_type_id")) AND slot = (SELECT \(slot) FROM \(clock(row)));
            UPDATE insight_values SET n = n - 1,
              milli = milli - (SELECT CAST(round(json_extract(p.value, '$.value') * 1000) AS INTEGER)
                               FROM json_each(\(column(row, "body")), '$.properties') AS p WHERE p.key = insight_values.key)
              WHERE \(numeric(row)) AND type_id = \(column(row, "event_type_id")) AND day = \(d)
                AND key IN (SELECT p.key FROM json_each(\(column(row, "body")), '$.properties') AS p
                            WHERE json_extract(p.value, '$.type') IN ('number', 'duration'));
            """
    }

    /// Every event with its wall-clock time and the day start, for the rebuild.
    static let clocked = clocked(nil)

    /// The events `filter` keeps (all for nil) with their wall-clock times and the day start.
    static func clocked(_ filter: String?) -> String {
        """
        (SELECT r.event_type_id AS event_type_id, r.body AS body, r.timestamp_ms + 1000 * \(offset("r")) AS wall,
                coalesce((SELECT day_start FROM insight_settings WHERE id = 1), 0) * 3600000 AS ds
         FROM local_events AS r\(filter.map { " WHERE \($0)" } ?? "")) AS r
        """
    }

    /// Every aggregate built again from the events (after the settings or the zones changed).
    static let rebuild = """
        DELETE FROM insight_daily;
        DELETE FROM insight_slots;
        DELETE FROM insight_values;
        INSERT INTO insight_daily (type_id, day, zone, count)
          SELECT r.event_type_id, \(day) AS d, \(zone("r")) AS z, count(*) FROM \(clocked)
          GROUP BY r.event_type_id, d, z;
        INSERT INTO insight_slots (type_id, slot, count)
          SELECT r.event_type_id, \(slot) AS s, count(*) FROM \(clocked) GROUP BY r.event_type_id, s;
        INSERT INTO insight_values (type_id, key, day, n, milli)
          SELECT r.event_type_id, p.key, \(day) AS d, count(*),
                 sum(CAST(round(json_extract(p.value, '$.value') * 1000) AS INTEGER))
          FROM \(clocked), json_each(r.body, '$.properties') AS p
          WHERE json_extract(p.value, '$.type') IN ('number', 'duration')
          GROUP BY r.event_type_id, p.key, d;
        """

    /// The triggers that keep the aggregates: as migration `insights.v1` created them
    /// (`inParts` false), or as `insights.v2-build-in-parts` makes them, skipping the events a
    /// build in parts has not reached (``counted(_:)``). A later change to them is a new
    /// migration, and this must then create the new ones (a bulk load's end creates them again
    /// from here).
    static func triggers(ifNotExists: Bool, inParts: Bool = true) -> String {
        let create = ifNotExists ? "CREATE TRIGGER IF NOT EXISTS" : "CREATE TRIGGER"
        let when = { (rowid: String) in inParts ? "WHEN \(counted(rowid))" : "" }
        let replaced =
            inParts
            ? "EXISTS (SELECT 1 FROM local_events WHERE id = new.id AND \(counted("local_events.rowid")))"
            : "EXISTS (SELECT 1 FROM local_events WHERE id = new.id)"
        return """
            \(create) insight_events_insert AFTER INSERT ON local_events \(when("new.rowid")) BEGIN
              \(add("new"))
            END;
            \(create) insight_events_update AFTER UPDATE OF event_type_id, timestamp_ms, body ON local_events
            \(when("old.rowid")) BEGIN
              \(remove("old"))
              \(add("new"))
            END;
            \(create) insight_events_replace BEFORE INSERT ON local_events
            WHEN \(replaced) BEGIN
              \(remove("replaced"))
            END;
            \(create) insight_events_delete AFTER DELETE ON local_events \(when("old.rowid")) BEGIN
              \(remove("old"))
            END;
            """
    }

    /// Whether the event at `rowid` is in the aggregates: always, unless a build in parts
    /// (``bulkLoadStart``) has not reached it yet — then the part that reaches it counts it as it
    /// is then, and the triggers leave it alone until that part.
    static func counted(_ rowid: String) -> String {
        "NOT EXISTS (SELECT 1 FROM insight_build WHERE \(rowid) > upto)"
    }

    /// Migration `insights.v2-build-in-parts`: the table a build in parts keeps its place in, and
    /// the triggers that skip what it has not reached (put back only if they were up: a bulk load
    /// under way keeps them down, and its end makes the new ones).
    static func migrateBuildInParts(_ db: Database) throws {
        let up = try Bool.fetchOne(db, sql: bulkLoadPresentV1) ?? false
        try db.execute(
            sql: """
                CREATE TABLE insight_build (
                    id INTEGER PRIMARY KEY CHECK (id = 1), upto INTEGER NOT NULL, next INTEGER NOT NULL
                );
                \(bulkLoadBegin)
                """)
        if up { try db.execute(sql: triggers(ifNotExists: false)) }
    }

    /// Takes the triggers down for a bulk load into an empty store (D63): row by row they cost
    /// a pulled event more than its own insert; ``bulkLoadEnd`` counts everything once.
    public static let bulkLoadBegin = triggerNames.map { "DROP TRIGGER IF EXISTS \($0);" }.joined(separator: "\n")

    /// The names ``triggers(ifNotExists:)`` creates.
    static let triggerNames = ["insert", "update", "replace", "delete"].map { "insight_events_\($0)" }

    /// Whether the triggers are all there (1 or 0), as `insights.v1` had them.
    static let bulkLoadPresentV1 = """
        SELECT COUNT(*) = \(triggerNames.count) FROM sqlite_master WHERE type = 'trigger'
          AND name IN (\(triggerNames.map { "'\($0)'" }.joined(separator: ", ")))
        """

    /// Whether the aggregates are whole (1 or 0): the triggers are all there and no build in
    /// parts is under way.
    public static let bulkLoadPresent = """
        SELECT (\(bulkLoadPresentV1)) AND NOT EXISTS (SELECT 1 FROM insight_build)
        """

    /// Ends a bulk load in one transaction: the triggers again (also on a store whose load began
    /// before they were taken down) and every aggregate built from the events, set-wise; a build
    /// in parts under way is done with. (An open's mend; a bulk load's end goes in parts.)
    public static var bulkLoadEnd: String { triggers(ifNotExists: true) + "\n" + rebuildAll }

    /// Every aggregate built again, and a build in parts under way done with (after the settings
    /// or the zones changed, at the end of a bulk load).
    static let rebuildAll = rebuild + "\nDELETE FROM insight_build;"

    /// Starts building the aggregates in parts (D67): the triggers go up at once, skipping every
    /// event there is now (``counted(_:)``), the aggregates start empty, and each
    /// ``bulkLoadStep(part:)`` counts the next events — in transactions of their own, so a
    /// person's write waits for one part (at 140,000 events one build held the writer ~0.9 s).
    ///
    /// The triggers are made again, not kept if there: an older program running across the
    /// upgrade may have put back the ones of `insights.v1`, which count every event (a review).
    public static var bulkLoadStart: String {
        """
        \(bulkLoadBegin)
        \(triggers(ifNotExists: false))
        DELETE FROM insight_daily;
        DELETE FROM insight_slots;
        DELETE FROM insight_values;
        INSERT OR REPLACE INTO insight_build (id, upto, next) VALUES (1, 0, 0);
        """
    }

    /// A bulk load's end in parts of 10,000 events (``bulkLoadStart``, ``bulkLoadStep(part:)``).
    public static var bulkLoadInParts: (start: String, step: String) { (bulkLoadStart, bulkLoadStep(part: 10_000)) }

    /// Counts the next `part` events of a build in parts (by rowid) into the aggregates as they
    /// are now, and ends the build once it reaches the last event; nothing when no build is under
    /// way. A write meanwhile to an event already counted goes through the triggers; one to an
    /// event not yet reached (or a new one, after every rowid there was) is counted by its part.
    public static func bulkLoadStep(part: Int) -> String {
        let range = "r.rowid > (SELECT upto FROM insight_build) AND r.rowid <= (SELECT next FROM insight_build)"
        return """
            UPDATE insight_build SET next = coalesce(
              (SELECT rowid FROM local_events WHERE rowid > upto ORDER BY rowid LIMIT 1 OFFSET \(max(part, 1) - 1)),
              (SELECT max(rowid) FROM local_events), upto);
            INSERT INTO insight_daily (type_id, day, zone, count)
              SELECT r.event_type_id, \(day) AS d, \(zone("r")) AS z, count(*) FROM \(clocked(range))
              GROUP BY r.event_type_id, d, z
              ON CONFLICT (type_id, day, zone) DO UPDATE SET count = count + excluded.count;
            INSERT INTO insight_slots (type_id, slot, count)
              SELECT r.event_type_id, \(slot) AS s, count(*) FROM \(clocked(range)) GROUP BY r.event_type_id, s
              ON CONFLICT (type_id, slot) DO UPDATE SET count = count + excluded.count;
            INSERT INTO insight_values (type_id, key, day, n, milli)
              SELECT r.event_type_id, p.key, \(day) AS d, count(*),
                     sum(CAST(round(json_extract(p.value, '$.value') * 1000) AS INTEGER))
              FROM \(clocked(range)), json_each(r.body, '$.properties') AS p
              WHERE json_extract(p.value, '$.type') IN ('number', 'duration')
              GROUP BY r.event_type_id, p.key, d
              ON CONFLICT (type_id, key, day) DO UPDATE SET n = n + excluded.n, milli = milli + excluded.milli;
            UPDATE insight_build SET upto = next;
            DELETE FROM insight_build WHERE upto >= (SELECT coalesce(max(rowid), 0) FROM local_events);
            """
    }

    static func migrate(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE insight_settings (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    zone TEXT NOT NULL,
                    day_start INTEGER NOT NULL,
                    body TEXT NOT NULL
                );
                CREATE TABLE insight_zone_offsets (
                    zone TEXT NOT NULL, from_ms INTEGER NOT NULL, offset_s INTEGER NOT NULL,
                    PRIMARY KEY (zone, from_ms)
                ) WITHOUT ROWID;
                CREATE TABLE insight_zones (zone TEXT PRIMARY KEY, known INTEGER NOT NULL) WITHOUT ROWID;
                CREATE TABLE insight_daily (
                    type_id TEXT NOT NULL, day INTEGER NOT NULL, zone TEXT NOT NULL, count INTEGER NOT NULL,
                    PRIMARY KEY (type_id, day, zone)
                ) WITHOUT ROWID;
                CREATE INDEX insight_daily_zone ON insight_daily (zone);
                CREATE TABLE insight_slots (
                    type_id TEXT NOT NULL, slot INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (type_id, slot)
                ) WITHOUT ROWID;
                CREATE TABLE insight_values (
                    type_id TEXT NOT NULL, key TEXT NOT NULL, day INTEGER NOT NULL, n INTEGER NOT NULL,
                    milli INTEGER NOT NULL, PRIMARY KEY (type_id, key, day)
                ) WITHOUT ROWID;
                \(triggers(ifNotExists: false, inParts: false))
                \(rebuild)
                """)
    }

    /// The tables the triggers and the store derive from the events and the zone database (a
    /// repair leaves them to be rebuilt: copied beside the events they count, each event would
    /// count twice). The person's settings (`insight_settings`) are kept.
    public static let derived: Set<String> = [
        "insight_zone_offsets", "insight_zones", "insight_daily", "insight_slots", "insight_values", "insight_build",
    ]
}
