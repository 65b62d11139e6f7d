import Foundation
import Synchronization

/// A zone's offsets from UTC over time: every transition from 1900 to 2100 as read from the
/// platform's time-zone data, before 1900 the first offset and after 2100 the last. The device's
/// aggregates (a table of these rows that SQL looks up) and every computation in Swift read the
/// same rows, so a day is the same day on every path.
public struct ZoneOffsets: Sendable, Hashable {
    /// One period: from `fromMilliseconds` (UTC) on, the zone is `offsetSeconds` ahead of UTC.
    public struct Period: Sendable, Hashable {
        /// When the period starts (milliseconds since 1970, UTC); `Int64.min` for the first.
        public var fromMilliseconds: Int64
        /// Seconds ahead of UTC.
        public var offsetSeconds: Int
    }

    /// The zone's name.
    public let zone: String
    /// Its periods, oldest first; the first starts at `Int64.min`.
    public let periods: [Period]

    /// The offsets of `zone`; nil when this platform does not know it.
    public init?(zone: String) {
        guard let tz = TimeZone(identifier: zone) else { return nil }
        self.zone = zone
        let start = Date(timeIntervalSince1970: -2_208_988_800)  // 1900-01-01
        let end = Date(timeIntervalSince1970: 4_102_444_800)  // 2100-01-01
        var periods = [Period(fromMilliseconds: .min, offsetSeconds: tz.secondsFromGMT(for: start))]
        var at = start
        while let next = tz.nextDaylightSavingTimeTransition(after: at), next < end, next > at {
            let offset = tz.secondsFromGMT(for: next)
            if offset != periods[periods.count - 1].offsetSeconds {
                periods.append(
                    Period(
                        fromMilliseconds: Int64((next.timeIntervalSince1970 * 1000).rounded()), offsetSeconds: offset))
            }
            at = next
        }
        self.periods = periods
    }

    /// The offsets of `zone` as every path reads them: the platform's, and UTC even on a platform
    /// without time-zone data; nil for a zone this device does not know.
    public static func known(_ zone: String) -> ZoneOffsets? {
        ZoneOffsets(zone: zone) ?? (zone == "UTC" ? ZoneOffsets(zone: "UTC", fixedOffsetSeconds: 0) : nil)
    }

    /// A zone with one fixed offset (tests, and UTC without time-zone data).
    public init(zone: String, fixedOffsetSeconds: Int) {
        self.zone = zone
        periods = [Period(fromMilliseconds: .min, offsetSeconds: fixedOffsetSeconds)]
    }

    /// The offset in force at `milliseconds` (UTC).
    public func offsetSeconds(at milliseconds: Int64) -> Int {
        var lo = 0
        var hi = periods.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if periods[mid].fromMilliseconds <= milliseconds { lo = mid } else { hi = mid - 1 }
        }
        return periods[lo].offsetSeconds
    }
}

/// Zone offsets by name, read from the platform once per zone (shared by one computation).
public final class ZoneOffsetCache: Sendable {
    private let zones = Mutex<[String: ZoneOffsets?]>([:])

    /// An empty cache.
    public init() {}

    /// The offsets of `zone`, nil when the platform does not know it.
    public func offsets(_ zone: String) -> ZoneOffsets? {
        if let known = zones.withLock({ $0[zone] }) { return known }
        let made = ZoneOffsets.known(zone)
        zones.withLock { $0[zone] = made }
        return made
    }
}

/// How a moment becomes a person's day: the local date where the event was logged (its own zone,
/// or the person's home zone for events without one), after the person's "day starts at" hour (a
/// pill at 00:20 counts for the day before when the day starts at 4).
public struct DayClock: Sendable {
    /// The zone for events logged without one.
    public let homeZone: String
    /// The hour (0–12) the person's day starts at.
    public let dayStartHour: Int
    private let cache: ZoneOffsetCache
    private let home: ZoneOffsets

    /// A clock for `homeZone` (UTC when the platform does not know it) and `dayStartHour`.
    public init(homeZone: String, dayStartHour: Int, cache: ZoneOffsetCache = ZoneOffsetCache()) {
        self.homeZone = homeZone
        self.dayStartHour = max(0, min(12, dayStartHour))
        self.cache = cache
        home = cache.offsets(homeZone) ?? ZoneOffsets(zone: "UTC", fixedOffsetSeconds: 0)
    }

    /// The offsets used for an event logged in `zone` (the home zone's when nil or unknown).
    public func offsets(for zone: String?) -> ZoneOffsets {
        guard let zone, !zone.isEmpty, let known = cache.offsets(zone) else { return home }
        return known
    }

    /// The wall-clock time where the event was logged, as milliseconds since 1970 on a clock
    /// that reads local time as if it were UTC.
    public func wallMilliseconds(_ milliseconds: Int64, zone: String?) -> Int64 {
        milliseconds + Int64(offsets(for: zone).offsetSeconds(at: milliseconds)) * 1000
    }

    /// The person's day of a moment.
    public func day(_ milliseconds: Int64, zone: String?) -> Day {
        Day(
            Int(Self.floorDiv(wallMilliseconds(milliseconds, zone: zone) - Int64(dayStartHour) * 3_600_000, 86_400_000))
        )
    }

    /// The weekday-and-hour slot (weekday of the person's day × 24 + wall-clock hour, 0–167).
    public func slot(_ milliseconds: Int64, zone: String?) -> Int {
        let wall = wallMilliseconds(milliseconds, zone: zone)
        let day = Day(Int(Self.floorDiv(wall - Int64(dayStartHour) * 3_600_000, 86_400_000)))
        let hour = Int(Self.floorMod(wall, 86_400_000) / 3_600_000)
        return day.weekday * 24 + hour
    }

    /// The moment `day` starts for a person in `zone` (its day-start hour there).
    public func start(of day: Day, zone: String?) -> Int64 {
        let offsets = offsets(for: zone)
        let wall = Int64(day.number) * 86_400_000 + Int64(dayStartHour) * 3_600_000
        var utc = wall - Int64(offsets.offsetSeconds(at: wall)) * 1000
        utc = wall - Int64(offsets.offsetSeconds(at: utc)) * 1000
        return utc
    }

    /// Floor division.
    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    /// The remainder of floor division, in 0..<b.
    static func floorMod(_ a: Int64, _ b: Int64) -> Int64 { a - floorDiv(a, b) * b }
}
