import Foundation
import Testing
import TrendyInsights
import TrendyInsightsTesting

struct StreakTests {
    static let type = InsightType(id: "t", name: "Pill")

    static func streak(_ days: [Int], today: Int, settings: InsightSettings = .init(timeZone: "UTC")) -> Streak? {
        let daily = Dictionary(days.map { ($0, 1) }, uniquingKeysWith: +)
        return Streaks.streak(
            type, daily: daily, dayZones: [:], today: Day(today), settings: settings, clock: settings.clock())
    }

    @Test func consecutiveDaysMakeARunAndTodayNeverBreaksIt() throws {
        let s = try #require(Self.streak(Array(100...109), today: 110))
        #expect(s.current?.logged == 10)
        #expect(s.current?.start == Day(100))
        #expect(s.loggedToday == false)
        #expect(s.sentence.contains("log today to keep it"))
        let broken = try #require(Self.streak(Array(100...109), today: 111))
        #expect(broken.current == nil)
        #expect(broken.longest?.logged == 10)
    }

    @Test func daysOffAndGraceKeepARunWithinTheBudget() throws {
        // Day 7 (1970-01-08) is a Thursday (3); mark Thursdays off.
        var settings = InsightSettings(timeZone: "UTC", skipWeekdays: [3])
        let skip = try #require(Self.streak([5, 6, 8, 9], today: 9, settings: settings))
        #expect(skip.current?.logged == 4)
        #expect(skip.current?.kept.map(\.day) == [Day(7)])
        #expect(skip.current?.kept.map(\.reason) == [.skip])
        // Two grace days a month: two misses in January kept, a third breaks.
        settings = InsightSettings(timeZone: "UTC", gracePerMonth: 2)
        let two = try #require(Self.streak([1, 2, 4, 6, 7], today: 7, settings: settings))
        #expect(two.current?.logged == 5)
        let three = try #require(Self.streak([1, 2, 4, 6, 8], today: 8, settings: settings))
        #expect(three.current?.start == Day(8))
        #expect(three.current?.logged == 1)
    }

    @Test func strengthIsADentAfterALongRunNotAZero() throws {
        let long = try #require(Self.streak(Array(0..<60), today: 60))
        let after = try #require(Self.streak(Array(0..<60) + [61], today: 61))
        let missed = try #require(Self.streak(Array(0..<60), today: 61))
        #expect(long.strength > 0.9)
        #expect(missed.strength > 0.85)  // one missed day: a dent
        #expect(missed.current == nil)
        #expect(after.strength > missed.strength)
        // Loop's multiplier: a day's weight halves in 13 days.
        #expect(abs(pow(Streaks.multiplier, 13) - 0.5) < 1e-12)
    }

    /// Zones with ±14 h, the date line, half and three-quarter hours, and both DST changes.
    static let zones = [
        "Pacific/Kiritimati", "Pacific/Pago_Pago", "Etc/GMT+12", "Pacific/Apia", "America/New_York", "Europe/Berlin",
        "Australia/Lord_Howe", "Asia/Kathmandu", "America/St_Johns", "Asia/Tokyo", "Pacific/Honolulu", "UTC",
        "Pacific/Auckland", "America/Los_Angeles", "Pacific/Tongatapu", "Pacific/Niue",
    ]

    /// A person who logs once per local day, wherever they are, never breaks a streak: 300
    /// seeded histories across zone jumps of up to ±26 hours, the date line, both DST changes
    /// and logs between midnight and the day start.
    @Test(arguments: [0, 4]) func aTravellerWhoLogsEveryLocalDayKeepsTheStreak(dayStart: Int) throws {
        let first = Day(iso: "2026-01-01")!
        var jumped = 0
        for seed in UInt64(1)...150 {
            let logs = InsightFixtures.traveller(
                days: 120, from: first, zones: Self.zones, stay: 2...12, dayStartHour: dayStart, seed: seed)
            let settings = InsightSettings(timeZone: "Europe/Berlin", dayStartHour: dayStart)
            let clock = settings.clock()
            let last = try #require(logs.last)
            var builder = InsightData.Builder(
                types: [Self.type], properties: [], clock: clock, now: last.milliseconds, nowZone: last.zone)
            for log in logs { builder.add(typeId: "t", milliseconds: log.milliseconds, zone: log.zone) }
            let data = builder.data
            let s = try #require(
                Streaks.streak(
                    Self.type, daily: data.daily["t"] ?? [:], dayZones: data.dayZones["t"] ?? [:], today: data.today,
                    settings: settings, clock: clock))
            #expect(s.current != nil, "seed \(seed): the streak broke")
            #expect(s.current?.logged == data.daily["t"]?.count, "seed \(seed)")
            #expect(s.current?.kept.allSatisfy { $0.reason == .clockJump } == true, "seed \(seed)")
            #expect(s.longest == s.current, "seed \(seed)")
            jumped += s.current?.kept.count ?? 0
        }
        // The histories do cross days the clock jumped over (else this test could not fail).
        #expect(jumped > 20)
    }

    @Test func eventsAfterTheMomentCountForNothing() throws {
        // As at 01:00 on a day: an event at 23:00 that day is not logged yet.
        let settings = InsightSettings(timeZone: "UTC")
        let day = Day(iso: "2026-11-26")!
        let oneAM = Int64(day.number) * 86_400_000 + 3_600_000
        var builder = InsightData.Builder(types: [Self.type], properties: [], clock: settings.clock(), now: oneAM)
        builder.add(typeId: "t", milliseconds: oneAM + 22 * 3_600_000, zone: nil)
        builder.add(typeId: "t", milliseconds: oneAM - 86_400_000, zone: nil)
        let data = builder.data
        #expect(data.daily["t"] == [day.number - 1: 1])
        #expect(data.hours["t"]?.reduce(0, +) == 1)
        let s = try #require(
            Streaks.streak(
                Self.type, daily: data.daily["t"] ?? [:], dayZones: [:], today: data.today, settings: settings,
                clock: settings.clock()))
        #expect(s.loggedToday == false)
    }

    @Test func aGapThatWasLivedStillBreaks() throws {
        // Same zone both sides: a missed day is missed, whatever the clock.
        let settings = InsightSettings(timeZone: "Asia/Tokyo")
        var zones: [Int: Set<String>] = [:]
        for d in [10, 12] { zones[d] = ["Asia/Tokyo"] }
        let s = Streaks.streak(
            Self.type, daily: [10: 1, 12: 1], dayZones: zones, today: Day(12), settings: settings,
            clock: settings.clock())
        #expect(s?.current?.logged == 1)
        #expect(s?.longest?.logged == 1)
    }
}

struct WeekComparisonTests {
    static let type = InsightType(id: "t", name: "Coffee")

    @Test func comparesLikeForLikeSpans() throws {
        // Thursday 2026-11-26: Monday–Wednesday complete, Thursday up to now on both sides.
        let today = Day(iso: "2026-11-26")!
        var daily: [Int: Int] = [:]
        for d in 0..<3 {
            daily[today.monday.number + d] = 4  // this week, Mon–Wed
            daily[today.monday.number + d - 7] = 1  // last week
        }
        daily[today.number - 7 + 1] = 50  // last Friday: after the span, never counted
        let w = try #require(
            WeekComparison.compare(Self.type, daily: daily, partial: PartialDays(today: 2, lastWeek: 0), today: today))
        #expect(w.thisWeek == 14)
        #expect(w.lastWeek == 3)
        #expect(w.days == 4)
        #expect(w.direction == .up)
        #expect(w.p < 0.05)
        let same = try #require(
            WeekComparison.compare(
                Self.type, daily: [today.number: 3], partial: PartialDays(today: 3, lastWeek: 2), today: today))
        #expect(same.direction == .same)
        #expect(same.thisWeek == 3)  // today's complete count is not used: only up to now
        #expect(WeekComparison.compare(Self.type, daily: [:], partial: PartialDays(), today: today) == nil)
    }
}

struct TimePatternTests {
    @Test func morningHabitsAreNamedAndSpreadOnesAreNot() throws {
        var slots = Array(repeating: 0, count: 168)
        for w in 0..<7 { slots[w * 24 + 7] = 5 }
        let today = Day(iso: "2026-11-26")!
        let daily = Dictionary(uniqueKeysWithValues: (0..<35).map { (today.number - 35 + $0, 1) })
        let p = try #require(TimePattern.pattern(.init(id: "t", name: "Run"), slots: slots, daily: daily, today: today))
        #expect(p.peakHour == 7)
        #expect(p.partsOfDay == [0, 35, 0, 0])
        #expect(p.consistency > 0.99)
        #expect(p.sentence.contains("mostly in the morning (100 %), around 7:00"), "\(p.sentence)")
        // Half at 23:50, half at 00:20: the mean is midnight, not noon, and neither part is "mostly".
        var night = Array(repeating: 0, count: 168)
        for w in 0..<7 {
            night[w * 24 + 23] = 3
            night[w * 24] = 3
        }
        let n = try #require(
            TimePattern.pattern(.init(id: "t", name: "Night"), slots: night, daily: daily, today: today))
        #expect(n.meanHour == 0)
        #expect(n.sentence.contains("most often in the") && !n.sentence.contains("mostly"), "\(n.sentence)")
        let spread = (0..<168).map { _ in 1 }
        let q = try #require(
            TimePattern.pattern(.init(id: "t", name: "Run"), slots: spread, daily: daily, today: today))
        #expect(q.sentence.contains("no particular time"))
        #expect(
            TimePattern.pattern(
                .init(id: "t", name: "Run"), slots: Array(repeating: 0, count: 168), daily: [:], today: today) == nil)
    }
}
