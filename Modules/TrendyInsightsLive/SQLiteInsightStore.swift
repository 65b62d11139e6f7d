import Foundation
import GRDB
import Synchronization
import TrendyInsights

/// ``InsightStore`` on the install database: settings in `insight_settings`, data from the
/// aggregates ``InsightSchema`` keeps. Reads Sync's tables for the types, the numeric property
/// definitions and the few events of today and a week ago (partial days).
public final class SQLiteInsightStore: InsightStore {
    let db: any DatabaseWriter
    let defaultZone: @Sendable () -> String
    /// Zone offsets, read from the platform once per zone for the store's life.
    public let zones = ZoneOffsetCache()
    /// The last settings read, by their stored text (decoding them is most of a small read).
    let decoded = DecodedSettings()

    /// A store on `database`; `defaultZone` is the zone of a first use (the device's).
    public init(database: any DatabaseWriter, defaultZone: @escaping @Sendable () -> String) {
        db = database
        self.defaultZone = defaultZone
    }

    /// The settings; the first use keeps the default and counts every day with it.
    public func settings() async throws -> InsightSettings {
        let decoded = decoded
        if let settings = try await db.read({ db in try Self.stored(db, decoded) }) { return settings }
        let fresh = InsightSettings(timeZone: ZoneOffsets.known(defaultZone()) == nil ? "UTC" : defaultZone())
        try await save(fresh)
        return fresh
    }

    /// Keeps `settings` and rebuilds the aggregates with them.
    public func save(_ settings: InsightSettings) async throws {
        var issues = settings.issues
        if ZoneOffsets.known(settings.timeZone) == nil {
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
            try db.execute(sql: InsightSchema.rebuildAll)
        }
    }

    /// False while a bulk load has the triggers down or builds the aggregates in parts (D67).
    public func countsEveryEvent() async throws -> Bool {
        try await db.read { db in try Bool.fetchOne(db, sql: InsightSchema.bulkLoadPresent) ?? false }
    }

    /// The data from the aggregates.
    public func data(now: Date, zone: String, typeId: String? = nil) async throws -> InsightData {
        // A zone seen for the first time (an event logged elsewhere, or from another device) is
        // looked up, and the days counted again; otherwise a read, beside any writer. (One type's
        // data, after a log, leaves that to the next whole read.)
        if typeId == nil, try await db.read({ db in try Self.unknownZones(db, also: [zone]) }).isEmpty == false {
            try await db.write { db in
                if try Self.learnZones(db, also: [zone]) { try db.execute(sql: InsightSchema.rebuildAll) }
            }
        }
        let (zones, decoded) = (zones, decoded)
        let read = try await db.read { db -> InsightData? in
            guard let settings = try Self.stored(db, decoded) else { return nil }
            return try Self.data(db, settings: settings, zones: zones, now: now, zone: zone, typeId: typeId)
        }
        if let read { return read }
        // First use: settings are made (and every day counted) first.
        let settings = try await settings()
        return try await db.read { db in
            try Self.data(db, settings: settings, zones: zones, now: now, zone: zone, typeId: typeId)
        }
    }

    static func data(
        _ db: Database, settings: InsightSettings, zones: ZoneOffsetCache, now: Date, zone: String, typeId: String?
    ) throws -> InsightData {
        let clock = settings.clock(cache: zones)
        var data = try builder(db, clock: clock, now: now, zone: zone, typeId: typeId).data
        // One type at a time, read through SQLite's C API (GRDB's rows cost a microsecond each,
        // most of a whole read). Rows come by day, the home zone ('') first.
        let days = try db.cachedStatement(
            sql: "SELECT day, zone, count FROM insight_daily WHERE type_id = ? AND count > 0 ORDER BY day, zone")
        let slots = try db.cachedStatement(sql: "SELECT slot, count FROM insight_slots WHERE type_id = ? AND count > 0")
        let values = try db.cachedStatement(
            sql: "SELECT key, day, n, milli FROM insight_values WHERE type_id = ? AND n > 0")
        for type in data.types.map(\.id) {
            var daily: [Int: Int] = [:]
            daily.reserveCapacity(2_048)
            // Zones are kept only for days next to a gap (all a streak's clock-jump rule reads):
            // the day being read and whether a gap came before it; stored when it is complete.
            var zonesOf: [Int: Set<String>] = [:]
            var current = Int.min
            var zones: Set<String> = []
            var gapBefore = false
            func complete(next: Int?) {
                guard current != Int.min else { return }
                let gapAfter = next.map { $0 - current > 1 } ?? false
                if gapBefore || gapAfter, zones.contains(where: { !$0.isEmpty }) { zonesOf[current] = zones }
                gapBefore = gapAfter
            }
            try RawRows.each(days, [type]) { row in
                let day = row.int(0)
                if day != current {
                    complete(next: day)
                    current = day
                    zones.removeAll(keepingCapacity: true)
                }
                daily[day, default: 0] += row.int(2)
                zones.insert(row.isEmpty(1) ? "" : row.text(1))
            }
            complete(next: nil)
            if !daily.isEmpty { data.daily[type] = daily }
            if !zonesOf.isEmpty { data.dayZones[type] = zonesOf }
            guard typeId == nil else { continue }
            var hours: [Int]?
            try RawRows.each(slots, [type]) { row in
                let slot = row.int(0)
                guard (0..<168).contains(slot) else { return }
                hours = hours ?? Array(repeating: 0, count: 168)
                hours?[slot] = row.int(1)
            }
            if let hours { data.hours[type] = hours }
            try RawRows.each(values, [type]) { row in
                data.propertyDaily["prop:\(type):\(row.text(0))", default: [:]][row.int(1)] = ValueSum(
                    milli: Int64(row.int(3)), n: row.int(2))
            }
        }
        try dropLater(db, &data, clock: clock, now: now, typeId: typeId)
        try partial(db, &data, clock: clock, now: now, typeId: typeId)
        return data
    }

    /// The number and duration values of an event's `properties` JSON, by key.
    static func numbers(_ text: String?) -> [String: Double] {
        guard let text, text != "{}",
            let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        else { return [:] }
        var values: [String: Double] = [:]
        for (key, value) in object {
            guard let typed = value as? [String: Any], let kind = typed["type"] as? String,
                kind == "number" || kind == "duration", let number = typed["value"] as? NSNumber
            else { continue }
            values[key] = number.doubleValue
        }
        return values
    }

    /// Insights are as at `now`: events after it (logged ahead, or every later one for a past
    /// moment) are taken back out of what the aggregates say, as the scan never counts them.
    static func dropLater(_ db: Database, _ data: inout InsightData, clock: DayClock, now: Date, typeId: String?)
        throws
    {
        let only = typeId == nil ? "" : " AND event_type_id = ?"
        let nowMs = InsightData.Builder.milliseconds(now)
        let rows = try Row.fetchCursor(
            db.cachedStatement(
                sql: """
                    SELECT event_type_id, timestamp_ms, json_extract(body, '$.time_zone'),
                           json_extract(body, '$.properties')
                    FROM local_events WHERE timestamp_ms > ?\(only)
                    """), arguments: typeId.map { [nowMs, $0] } ?? [nowMs])
        let known = Set(data.types.map(\.id))
        var touched: [String: Set<Int>] = [:]
        while let row = try rows.next() {
            let type: String = row[0]
            guard known.contains(type) else { continue }
            let ms: Int64 = row[1]
            let zone: String? = row[2]
            let day = clock.day(ms, zone: zone).number
            if let count = data.daily[type]?[day] { data.daily[type]?[day] = count > 1 ? count - 1 : nil }
            touched[type, default: []].insert(day)
            if typeId == nil {
                let slot = clock.slot(ms, zone: zone)
                if data.hours[type] != nil { data.hours[type]?[slot] -= 1 }
                for (key, value) in numbers(row[3]) {
                    let series = "prop:\(type):\(key)"
                    guard var sum = data.propertyDaily[series]?[day] else { continue }
                    sum.milli -= ValueSum.milli(value)
                    sum.n -= 1
                    data.propertyDaily[series]?[day] = sum.n > 0 ? sum : nil
                }
            }
        }
        // The zones of the days an event was taken from, and of their neighbours (a day emptied
        // leaves a gap beside them): counted again without the later events, kept when next to a gap.
        let zoneCounts = try db.cachedStatement(
            sql: "SELECT zone, count FROM insight_daily WHERE type_id = ? AND day = ?")
        let later = try db.cachedStatement(
            sql: """
                SELECT timestamp_ms, json_extract(body, '$.time_zone') FROM local_events
                WHERE event_type_id = ? AND timestamp_ms > ?
                """)
        for (type, days) in touched {
            var laterByDay: [Int: [String: Int]] = [:]
            let rows = try Row.fetchCursor(later, arguments: [type, nowMs])
            while let row = try rows.next() {
                let zone: String? = row[1]
                let day = clock.day(row[0], zone: zone).number
                laterByDay[day, default: [:]][zone ?? "", default: 0] += 1
            }
            let daily = data.daily[type] ?? [:]
            let borders = InsightData.gapBorders(daily)
            for day in Set(days.flatMap { [$0 - 1, $0, $0 + 1] }) {
                var zones: Set<String> = []
                if daily[day, default: 0] > 0 {
                    try RawRows.each(zoneCounts, [type, day]) { row in
                        let zone = row.text(0)
                        if row.int(1) - (laterByDay[day]?[zone] ?? 0) > 0 { zones.insert(zone) }
                    }
                }
                let keep = borders.contains(day) && zones.contains { !$0.isEmpty }
                data.dayZones[type, default: [:]][day] = keep ? zones : nil
            }
            // A day next to a gap only because of a later day (now gone) is no longer one.
            data.dayZones[type] = data.dayZones[type]?.filter { borders.contains($0.key) }
            if data.dayZones[type]?.isEmpty == true { data.dayZones[type] = nil }
            if data.daily[type]?.isEmpty == true { data.daily[type] = nil }
        }
        for (type, hours) in data.hours where hours.allSatisfy({ $0 <= 0 }) { data.hours[type] = nil }
        for (series, days) in data.propertyDaily where days.isEmpty { data.propertyDaily[series] = nil }
    }

    /// Today and the same day last week, each up to the same time of day: today's count (the
    /// later events are already out), and last week's day less its events after the same moment
    /// a week ago — only the 50 hours after it are read one by one (a day where an event was
    /// logged can end up to 50 hours after any moment in it).
    static func partial(
        _ db: Database, _ data: inout InsightData, clock: DayClock, now: Date, typeId: String?
    ) throws {
        let hour: Int64 = 3_600_000
        let nowMs = InsightData.Builder.milliseconds(now)
        let today = data.today
        for type in data.types.map(\.id) {
            let days = data.daily[type] ?? [:]
            let counts = PartialDays(today: days[today.number] ?? 0, lastWeek: days[today.number - 7] ?? 0)
            if counts != PartialDays() { data.partial[type] = counts }
        }
        let only = typeId == nil ? "" : " AND event_type_id = ?"
        let index = typeId == nil ? "local_events_time" : "local_events_type_time"
        for (moment, day) in [(nowMs - 168 * hour, today.adding(-7))] {
            let rows = try Row.fetchCursor(
                db.cachedStatement(
                    sql: """
                        SELECT event_type_id, timestamp_ms, json_extract(body, '$.time_zone')
                        FROM local_events INDEXED BY \(index)
                        WHERE timestamp_ms > ? AND timestamp_ms <= ?\(only)
                        """),
                arguments: typeId.map { [moment, moment + 50 * hour, $0] } ?? [moment, moment + 50 * hour])
            while let row = try rows.next() {
                let type: String = row[0]
                let ms: Int64 = row[1]
                guard clock.day(ms, zone: row[2]) == day, var counts = data.partial[type] else { continue }
                if day == today { counts.today -= 1 } else { counts.lastWeek -= 1 }
                data.partial[type] = counts == PartialDays() ? nil : counts
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
                builder.add(typeId: row[0], milliseconds: row[1], zone: row[2], values: Self.numbers(row[3]))
            }
            return builder.data
        }
    }

    static func builder(_ db: Database, clock: DayClock, now: Date, zone: String, typeId: String? = nil) throws
        -> InsightData.Builder
    {
        if let typeId {
            // One type (what a new event changes): its name, no properties.
            let name = try String.fetchOne(
                db.cachedStatement(sql: "SELECT name FROM local_event_types WHERE id = ?"), arguments: [typeId])
            return InsightData.Builder(
                types: name.map { [InsightType(id: typeId, name: $0)] } ?? [], properties: [], clock: clock,
                now: InsightData.Builder.milliseconds(now), nowZone: zone)
        }
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
            db.cachedStatement(sql: "SELECT 1 FROM insight_zones WHERE zone = ?"), arguments: [zone]) != true
        {
            zones.insert(zone)
        }
        return zones
    }

    static func stored(_ db: Database, _ decoded: DecodedSettings) throws -> InsightSettings? {
        guard
            let body = try String.fetchOne(
                db.cachedStatement(sql: "SELECT body FROM insight_settings WHERE id = 1"))
        else { return nil }
        // Settings this program cannot read (written by a newer one, or damaged) count as none:
        // the first use's defaults are kept again, never an install whose insights fail for ever.
        return try? decoded.settings(body)
    }

    /// Looks up the offsets of zones seen in events (and `also`) that were never looked up;
    /// whether events had a zone learnt now (their days were counted in the home zone until now).
    static func learnZones(_ db: Database, also: [String]) throws -> Bool {
        let seen = try unknownZones(db, also: [])
        let named = try also.filter {
            try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM insight_zones WHERE zone = ?"), arguments: [$0])
                != true
        }
        var learnt = false
        for zone in seen.union(named) {
            let offsets = ZoneOffsets.known(zone)
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

/// The last settings decoded, by their text.
final class DecodedSettings: Sendable {
    private let last = Mutex<(text: String, settings: InsightSettings)?>(nil)

    /// `text` decoded, or the settings it was decoded to last time.
    func settings(_ text: String) throws -> InsightSettings {
        if let known = last.withLock({ $0 }), known.text == text { return known.settings }
        let settings = try JSONDecoder().decode(InsightSettings.self, from: Data(text.utf8))
        last.withLock { $0 = (text, settings) }
        return settings
    }
}
