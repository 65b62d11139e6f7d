import Foundation
import GRDB
import TrendyInsights

/// ``InsightStore`` on the install database: settings in `insight_settings`, data from the
/// aggregates ``InsightSchema`` keeps. Reads Sync's tables for the types, the numeric property
/// definitions and the few events of today and a week ago (partial days).
public final class SQLiteInsightStore: InsightStore {
    let db: any DatabaseWriter
    let defaultZone: @Sendable () -> String
    /// Zone offsets, read from the platform once per zone for the store's life.
    public let zones = ZoneOffsetCache()

    /// A store on `database`; `defaultZone` is the zone of a first use (the device's).
    public init(database: any DatabaseWriter, defaultZone: @escaping @Sendable () -> String) {
        db = database
        self.defaultZone = defaultZone
    }

    /// The settings; the first use keeps the default and counts every day with it.
    public func settings() async throws -> InsightSettings {
        if let settings = try await db.read({ db in try Self.stored(db) }) { return settings }
        let fresh = InsightSettings(timeZone: ZoneOffsets(zone: defaultZone()) == nil ? "UTC" : defaultZone())
        try await save(fresh)
        return fresh
    }

    /// Keeps `settings` and rebuilds the aggregates with them.
    public func save(_ settings: InsightSettings) async throws {
        var issues = settings.issues
        if ZoneOffsets(zone: settings.timeZone) == nil && settings.timeZone != "UTC" {
            issues.append("'\(settings.timeZone)' is not a time zone this device knows (try Europe/Berlin)")
        }
        guard issues.isEmpty else { throw InsightSettingsError(issues: issues) }
        let body = String(decoding: try JSONEncoder().encode(settings), as: UTF8.self)
        try await db.write { db in
            try db.execute(
                sql: """
                    INSERT INTO insight_settings (id, zone, day_start, body) VALUES (1, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET zone = excluded.zone, day_start = excluded.day_start, body = excluded.body
                    """, arguments: [settings.timeZone, settings.dayStartHour, body])
            _ = try Self.learnZones(db, also: [settings.timeZone])
            try db.execute(sql: InsightSchema.rebuild)
        }
    }

    /// The data from the aggregates.
    public func data(now: Date, zone: String, typeId: String? = nil) async throws -> InsightData {
        let settings = try await settings()
        // A zone seen for the first time (an event logged elsewhere, or from another device) is
        // looked up, and the days counted again; otherwise a read, beside any writer. (One type's
        // data, after a log, leaves that to the next whole read.)
        if typeId == nil, try await db.read({ db in try Self.unknownZones(db, also: [zone]) }).isEmpty == false {
            try await db.write { db in
                if try Self.learnZones(db, also: [zone]) { try db.execute(sql: InsightSchema.rebuild) }
            }
        }
        let zones = zones
        return try await db.read { db in
            let clock = settings.clock(cache: zones)
            var builder = try Self.builder(db, clock: clock, now: now, zone: zone)
            var data = builder.data
            let only = typeId.map { _ in " AND type_id = ?" } ?? ""
            let arguments: StatementArguments = typeId.map { [$0] } ?? []
            if let typeId { data.types = data.types.filter { $0.id == typeId } }
            let days = try Row.fetchCursor(
                db.cachedStatement(sql: "SELECT type_id, day, zone, count FROM insight_daily WHERE count > 0\(only)"),
                arguments: arguments)
            while let row = try days.next() {
                let type: String = row[0]
                let day: Int = row[1]
                let count: Int = row[3]
                data.daily[type, default: [:]][day, default: 0] += count
                data.dayZones[type, default: [:]][day, default: []].insert(row[2])
            }
            if typeId == nil {
                let slots = try Row.fetchCursor(
                    db.cachedStatement(sql: "SELECT type_id, slot, count FROM insight_slots WHERE count > 0"))
                while let row = try slots.next() {
                    let slot: Int = row[1]
                    guard (0..<168).contains(slot) else { continue }
                    data.hours[row[0], default: Array(repeating: 0, count: 168)][slot] = row[2]
                }
                let values = try Row.fetchCursor(
                    db.cachedStatement(sql: "SELECT type_id, key, day, n, milli FROM insight_values WHERE n > 0"))
                while let row = try values.next() {
                    let type: String = row[0]
                    let key: String = row[1]
                    data.propertyDaily["prop:\(type):\(key)", default: [:]][row[2]] = ValueSum(milli: row[4], n: row[3])
                }
            }
            try Self.partial(db, &builder, clock: clock, now: now, typeId: typeId)
            data.partial = builder.data.partial
            return data
        }
    }

    /// Today and the same day last week, up to now: the few events of those days, by time (a day
    /// where an event was logged can end up to 50 hours before now).
    static func partial(
        _ db: Database, _ builder: inout InsightData.Builder, clock: DayClock, now: Date, typeId: String?
    ) throws {
        let day: Int64 = 86_400_000
        let nowMs = InsightData.Builder.milliseconds(now)
        for (from, to) in [(nowMs - 3 * day, nowMs), (nowMs - 10 * day, nowMs - 7 * day)] {
            let rows = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT event_type_id, timestamp_ms, json_extract(body, '$.time_zone') FROM local_events
                        WHERE timestamp_ms BETWEEN ? AND ?
                        """), arguments: [from, to])
            for row in rows {
                let type: String = row[0]
                guard typeId == nil || typeId == type else { continue }
                let ms: Int64 = row[1]
                builder.addPartial(typeId: type, milliseconds: ms, day: clock.day(ms, zone: row[2]))
            }
        }
    }

    /// The data from every event, one at a time.
    public func scan(now: Date, zone: String, settings: InsightSettings) async throws -> InsightData {
        try await db.read { db in
            var builder = try Self.builder(db, clock: settings.clock(cache: zones), now: now, zone: zone)
            let cursor = try Row.fetchCursor(
                db,
                sql: """
                    SELECT event_type_id, timestamp_ms, json_extract(body, '$.time_zone'), json_extract(body, '$.properties')
                    FROM local_events
                    """)
            while let row = try cursor.next() {
                var values: [String: Double] = [:]
                if let text: String = row[3], text != "{}",
                    let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
                {
                    for (key, value) in object {
                        guard let typed = value as? [String: Any], let kind = typed["type"] as? String,
                            kind == "number" || kind == "duration", let number = typed["value"] as? NSNumber
                        else { continue }
                        values[key] = number.doubleValue
                    }
                }
                builder.add(typeId: row[0], milliseconds: row[1], zone: row[2], values: values)
            }
            return builder.data
        }
    }

    static func builder(_ db: Database, clock: DayClock, now: Date, zone: String) throws -> InsightData.Builder {
        // Sorted as the server sorts them (by name in any case, then id), so both list alike.
        let types = try Row.fetchAll(db, sql: "SELECT id, name FROM local_event_types")
            .map { InsightType(id: $0[0], name: $0[1]) }
            .sorted { ($0.name.lowercased(), $0.id) < ($1.name.lowercased(), $1.id) }
        let properties = try Row.fetchAll(
            db,
            sql: """
                SELECT event_type_id, json_extract(body, '$.key'), json_extract(body, '$.label'),
                       json_extract(body, '$.property_type')
                FROM local_property_definitions
                WHERE json_extract(body, '$.property_type') IN ('number', 'duration')
                ORDER BY event_type_id, json_extract(body, '$.display_order'), json_extract(body, '$.key')
                """
        ).map { InsightProperty(typeId: $0[0], key: $0[1], label: $0[2], kind: $0[3]) }
        return InsightData.Builder(
            types: types, properties: properties, clock: clock, now: InsightData.Builder.milliseconds(now),
            nowZone: zone)
    }

    /// Zones events were logged in (and `also`) never looked up.
    static func unknownZones(_ db: Database, also: [String]) throws -> Set<String> {
        var zones = Set(
            try String.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT DISTINCT zone FROM insight_daily
                        WHERE zone != '' AND zone NOT IN (SELECT zone FROM insight_zones)
                        """)))
        for zone in also
        where try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM insight_zones WHERE zone = ?"), arguments: [zone]) != true {
            zones.insert(zone)
        }
        return zones
    }

    static func stored(_ db: Database) throws -> InsightSettings? {
        guard let body = try String.fetchOne(db, sql: "SELECT body FROM insight_settings WHERE id = 1") else {
            return nil
        }
        return try JSONDecoder().decode(InsightSettings.self, from: Data(body.utf8))
    }

    /// Looks up the offsets of zones seen in events (and `also`) that were never looked up;
    /// whether events had a zone learnt now (their days were counted in the home zone until now).
    static func learnZones(_ db: Database, also: [String]) throws -> Bool {
        let seen = try unknownZones(db, also: [])
        var learnt = false
        for zone in try unknownZones(db, also: also) {
            let offsets = ZoneOffsets(zone: zone) ?? (zone == "UTC" ? ZoneOffsets(zone: "UTC", fixedOffsetSeconds: 0) : nil)
            try db.execute(
                sql: "INSERT INTO insight_zones (zone, known) VALUES (?, ?)", arguments: [zone, offsets != nil])
            for period in offsets?.periods ?? [] {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO insight_zone_offsets (zone, from_ms, offset_s) VALUES (?, ?, ?)",
                    arguments: [zone, period.fromMilliseconds, period.offsetSeconds])
            }
            if offsets != nil, seen.contains(zone) { learnt = true }
        }
        return learnt
    }
}
