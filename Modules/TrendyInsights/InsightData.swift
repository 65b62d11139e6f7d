import Foundation

/// An event type as insights name it.
public struct InsightType: Sendable, Hashable, Codable {
    /// Its id.
    public var id: String
    /// Its name.
    public var name: String

    /// Creates one.
    public init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}

/// A numeric property (number or duration) of a type, whose daily mean can be correlated.
public struct InsightProperty: Sendable, Hashable, Codable {
    /// The type it belongs to.
    public var typeId: String
    /// Its key.
    public var key: String
    /// What a person calls it.
    public var label: String
    /// `number` or `duration` (seconds, shown in hours).
    public var kind: String

    /// Creates one.
    public init(typeId: String, key: String, label: String, kind: String) {
        self.typeId = typeId
        self.key = key
        self.label = label
        self.kind = kind
    }

    /// The id of its series.
    public var seriesId: String { "prop:\(typeId):\(key)" }
}

/// A property's values on one day, summed exactly: in thousandths, as integers, so the sum does
/// not depend on the order values were added or removed in (the device's aggregates and a scan of
/// the events then agree to the bit). Values beyond ±9 × 10¹² are clamped there.
public struct ValueSum: Sendable, Hashable, Codable {
    /// The sum, in thousandths.
    public var milli: Int64
    /// How many values.
    public var n: Int

    /// Creates one.
    public init(milli: Int64, n: Int) {
        self.milli = milli
        self.n = n
    }

    /// A value in thousandths, as the store's SQL rounds it (half away from zero).
    public static func milli(_ value: Double) -> Int64 {
        guard value.isFinite else { return 0 }
        return Int64(max(-9e15, min(9e15, (value * 1000).rounded())))
    }

    /// Adds a value.
    public mutating func add(_ value: Double) {
        milli += Self.milli(value)
        n += 1
    }

    /// The mean.
    public var mean: Double { n == 0 ? .nan : Double(milli) / 1000 / Double(n) }
}

/// Today and the same day a week ago, each counted up to the same time of day.
public struct PartialDays: Sendable, Hashable, Codable {
    /// Events of today up to now.
    public var today: Int = 0
    /// Events of the same weekday last week up to the same moment a week ago.
    public var lastWeek: Int = 0

    /// Creates one.
    public init(today: Int = 0, lastWeek: Int = 0) {
        self.today = today
        self.lastWeek = lastWeek
    }
}

/// Everything insights are computed from: daily counts per type, weekday-and-hour counts, the
/// daily sums of numeric properties, the zones seen each day and today's partial counts. The
/// device reads it from aggregates kept in its database; the server and `insights explain` build
/// it from the events (``Builder``). Both give the same value for the same events.
public struct InsightData: Sendable, Hashable {
    /// The types, in the order shown.
    public var types: [InsightType] = []
    /// The numeric properties.
    public var properties: [InsightProperty] = []
    /// Per type id, per day number: events.
    public var daily: [String: [Int: Int]] = [:]
    /// Per type id: 168 counts, weekday (Monday first) × 24 + hour.
    public var hours: [String: [Int]] = [:]
    /// Per property series id, per day number: the day's values.
    public var propertyDaily: [String: [Int: ValueSum]] = [:]
    /// Per type id, per day number: the zones its events were logged in (`""` for the home
    /// zone), for the days next to a gap in the type's days that have an event logged in a zone
    /// of its own (a day missing here was logged in the home zone only, or has no gap beside it):
    /// a streak's gap is a clock jump by the zones of its own logs on either side, and that is
    /// all that reads them.
    public var dayZones: [String: [Int: Set<String>]] = [:]
    /// Per type id: today's and last week's counts up to the same time.
    public var partial: [String: PartialDays] = [:]
    /// The person's day now.
    public var today: Day

    /// Empty data for `today`.
    public init(today: Day) { self.today = today }

    /// Builds ``InsightData`` from events, one at a time, with a ``DayClock``: the scan path.
    public struct Builder: Sendable {
        /// The data so far.
        var raw: InsightData

        /// The data so far, of the types it was started with (an event whose type is not here —
        /// deleted on another device, say — counts for nothing, as on the device).
        public var data: InsightData {
            var data = raw
            let known = Set(raw.types.map(\.id))
            data.daily = raw.daily.filter { known.contains($0.key) }
            data.hours = raw.hours.filter { known.contains($0.key) }
            data.partial = raw.partial.filter { known.contains($0.key) }
            data.propertyDaily = raw.propertyDaily.filter { entry in
                known.contains(where: { entry.key.hasPrefix("prop:\($0):") })
            }
            data.dayZones = [:]
            for (type, days) in raw.dayZones where known.contains(type) {
                let borders = InsightData.gapBorders(raw.daily[type] ?? [:])
                let kept = days.filter { day, zones in zones.contains { !$0.isEmpty } && borders.contains(day) }
                if !kept.isEmpty { data.dayZones[type] = kept }
            }
            return data
        }

        /// The clock days are counted with.
        public let clock: DayClock
        let now: Int64

        /// Milliseconds since 1970, rounded as the device's store rounds them.
        public static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

        /// Starts from `types` and `properties`, at `now` (milliseconds since 1970).
        /// `nowZone` is where the person is now (their today is the day there); nil for the home zone.
        public init(
            types: [InsightType], properties: [InsightProperty], clock: DayClock, now: Int64, nowZone: String? = nil
        ) {
            self.clock = clock
            self.now = now
            raw = InsightData(today: clock.day(now, zone: nowZone))
            raw.types = types
            raw.properties = properties
        }

        /// Adds one event: its type, time, zone and numeric property values by key.
        /// An event after `now` counts for nothing: insights are as at `now`.
        public mutating func add(typeId: String, milliseconds: Int64, zone: String?, values: [String: Double] = [:]) {
            guard milliseconds <= now else { return }
            let zoneName = zone.flatMap { $0.isEmpty ? nil : $0 }
            let day = clock.day(milliseconds, zone: zoneName)
            raw.daily[typeId, default: [:]][day.number, default: 0] += 1
            let slot = clock.slot(milliseconds, zone: zoneName)
            raw.hours[typeId, default: Array(repeating: 0, count: 168)][slot] += 1
            raw.dayZones[typeId, default: [:]][day.number, default: []].insert(zoneName ?? "")
            // Every number and duration, defined or not (as the device's aggregates keep them);
            // only defined properties become series.
            for (key, value) in values {
                raw.propertyDaily["prop:\(typeId):\(key)", default: [:]][day.number, default: ValueSum(milli: 0, n: 0)]
                    .add(value)
            }
            addPartial(typeId: typeId, milliseconds: milliseconds, day: day)
        }

        /// Counts an event toward today's and last week's partial days.
        mutating func addPartial(typeId: String, milliseconds: Int64, day: Day) {
            let week: Int64 = 7 * 86_400_000
            if day == raw.today, milliseconds <= now {
                raw.partial[typeId, default: PartialDays()].today += 1
            } else if day == raw.today.adding(-7), milliseconds <= now - week {
                raw.partial[typeId, default: PartialDays()].lastWeek += 1
            }
        }
    }
}

extension InsightData {
    /// The logged days of `daily` next to a gap: the type's previous or next logged day is more
    /// than a day away.
    public static func gapBorders(_ daily: [Int: Int]) -> Set<Int> {
        let days = daily.compactMap { $0.value > 0 ? $0.key : nil }.sorted()
        var borders: Set<Int> = []
        for (i, day) in days.enumerated() {
            if (i > 0 && day - days[i - 1] > 1) || (i + 1 < days.count && days[i + 1] - day > 1) {
                borders.insert(day)
            }
        }
        return borders
    }
}
