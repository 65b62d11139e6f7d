import Foundation
import TrendyInsights

/// Events for tests of insights, built by day: a person who logs once per local day wherever
/// they are, across zone jumps, the date line and DST changes.
public enum InsightFixtures {
    /// One logged moment: milliseconds since 1970 and the zone it was logged in.
    public struct Log: Sendable, Hashable {
        /// When.
        public var milliseconds: Int64
        /// Where (an IANA zone).
        public var zone: String
    }

    /// A traveller's log: for each of `days` local days, the zone they are in that day (changing
    /// every `stay` days to a zone drawn from `zones`, at once, as the clock of a phone changes)
    /// and one log at a random local time in their day (from the day-start hour to the next
    /// day's; the last day in a zone late), seeded.
    public static func traveller(
        days: Int, from first: Day, zones: [String], stay: ClosedRange<Int>, dayStartHour: Int, seed: UInt64
    ) -> [Log] {
        var rng = SplitMix(seed: seed)
        var logs: [Log] = []
        var zone = zones[Int(rng.next() % UInt64(zones.count))]
        var left = Int(rng.next() % UInt64(stay.count)) + stay.lowerBound
        var lastMs = Int64.min
        let cache = ZoneOffsetCache()
        var day = first
        while logs.count < days {
            if left == 0 {
                zone = zones[Int(rng.next() % UInt64(zones.count))]
                left = Int(rng.next() % UInt64(stay.count)) + stay.lowerBound
            }
            left -= 1
            let clock = DayClock(homeZone: zone, dayStartHour: dayStartHour, cache: cache)
            // A moment inside this local day: start + 0 … 23.99 h, kept only if it is later
            // than the last log (a person's logs are in time order) and still this day.
            var start = clock.start(of: day, zone: zone)
            let end = clock.start(of: day.adding(1), zone: zone)
            // The last day before a move is logged late, just before leaving: a jump east then
            // often skips a whole day (from UTC−12 at 23:30 the clock of UTC+14 reads 01:30 two
            // days on).
            if left == 0 { start = Swift.max(start, end - 2 * 3_600_000) }
            var logged = false
            for _ in 0..<16 {
                let ms = start + Int64(rng.next() % UInt64(max(1, end - start)))
                if ms > lastMs, clock.day(ms, zone: zone) == day {
                    logs.append(Log(milliseconds: ms, zone: zone))
                    lastMs = ms
                    logged = true
                    break
                }
            }
            if !logged, end - 1 > lastMs, clock.day(end - 1, zone: zone) == day {
                logs.append(Log(milliseconds: end - 1, zone: zone))
                lastMs = end - 1
            }
            // The next day the person lives. A day that ended (in this zone) before their last
            // log was jumped over: they are in the day their clock shows now, not yet logged here.
            day = logged ? day.adding(1) : Swift.max(day.adding(1), clock.day(lastMs, zone: zone))
        }
        return logs
    }

    /// SplitMix64, for fixtures.
    struct SplitMix {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49EB_133D_11EB
            return z ^ (z >> 31)
        }
    }
}
