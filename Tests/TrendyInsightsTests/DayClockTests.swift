import Foundation
import Testing
import TrendyInsights

struct DayClockTests {
    @Test func daysAreCivilDates() {
        #expect(Day(year: 1970, month: 1, day: 1).number == 0)
        #expect(Day(iso: "2026-11-26")?.weekday == 3)  // a Thursday
        #expect(Day(iso: "2026-11-30")?.weekday == 0)  // a Monday
        #expect(Day(iso: "2024-02-29")?.iso == "2024-02-29")
        #expect(Day(iso: "2023-02-29") == nil)
        #expect(Day(iso: "26-11-2026") == nil)
        #expect(Day(iso: "1969-12-31")?.number == -1)
        #expect(Day(-1).weekday == 2)  // a Wednesday
        for n in stride(from: -100_000, to: 100_000, by: 997) { #expect(Day(iso: Day(n).iso) == Day(n)) }
        #expect(Day(iso: "2026-11-26")?.monday.iso == "2026-11-23")
        #expect(Day(iso: "2026-11-26")?.firstOfMonth.iso == "2026-11-01")
        // Years below 1000 keep four digits, and read back (they were written "999-06-01").
        #expect(Day(iso: "0999-06-01")?.iso == "0999-06-01")
        #expect(Day(year: 1, month: 1, day: 1).iso == "0001-01-01")
        #expect(Day(iso: Day(year: 5, month: 3, day: 9).iso) == Day(year: 5, month: 3, day: 9))
    }

    static func ms(_ text: String) -> Int64 {
        Int64((ISO8601DateFormatter().date(from: text)!.timeIntervalSince1970 * 1000).rounded())
    }

    @Test func aDayIsTheLocalDateWhereItWasLogged() {
        let clock = DayClock(homeZone: "Europe/Berlin", dayStartHour: 0)
        // 23:30 UTC on the 26th is 00:30 on the 27th in Berlin (winter, +1) and 08:30 in Tokyo.
        #expect(clock.day(Self.ms("2026-11-26T23:30:00Z"), zone: nil).iso == "2026-11-27")
        #expect(clock.day(Self.ms("2026-11-26T23:30:00Z"), zone: "Asia/Tokyo").iso == "2026-11-27")
        #expect(clock.day(Self.ms("2026-11-26T23:30:00Z"), zone: "America/Los_Angeles").iso == "2026-11-26")
        // An unknown zone counts in the home zone.
        #expect(clock.day(Self.ms("2026-11-26T23:30:00Z"), zone: "Mars/Olympus_Mons").iso == "2026-11-27")
        // The hour slot is the wall-clock hour there.
        #expect(clock.slot(Self.ms("2026-11-26T23:30:00Z"), zone: "Asia/Tokyo") == 4 * 24 + 8)
    }

    @Test func theDayStartHourMovesSmallHoursToTheDayBefore() {
        let clock = DayClock(homeZone: "Europe/Berlin", dayStartHour: 4)
        // 00:20 and 03:59 Berlin on the 27th belong to the 26th; 04:00 to the 27th.
        #expect(clock.day(Self.ms("2026-11-26T23:20:00Z"), zone: nil).iso == "2026-11-26")
        #expect(clock.day(Self.ms("2026-11-27T02:59:00Z"), zone: nil).iso == "2026-11-26")
        #expect(clock.day(Self.ms("2026-11-27T03:00:00Z"), zone: nil).iso == "2026-11-27")
        #expect(clock.start(of: Day(iso: "2026-11-27")!, zone: nil) == Self.ms("2026-11-27T03:00:00Z"))
    }

    @Test func bothDaylightSavingChangesKeepEveryDay() {
        let clock = DayClock(homeZone: "Europe/Berlin", dayStartHour: 0)
        // Spring forward (29 March 2026, 02:00 → 03:00) and fall back (25 October 2026).
        #expect(clock.day(Self.ms("2026-03-28T23:30:00Z"), zone: nil).iso == "2026-03-29")  // 00:30 CET
        #expect(clock.day(Self.ms("2026-03-29T21:59:00Z"), zone: nil).iso == "2026-03-29")  // 23:59 CEST
        #expect(clock.day(Self.ms("2026-03-29T22:00:00Z"), zone: nil).iso == "2026-03-30")
        #expect(clock.day(Self.ms("2026-10-24T22:30:00Z"), zone: nil).iso == "2026-10-25")  // 00:30 CEST
        #expect(clock.day(Self.ms("2026-10-25T22:59:00Z"), zone: nil).iso == "2026-10-25")  // 23:59 CET
        #expect(clock.start(of: Day(iso: "2026-03-30")!, zone: nil) == Self.ms("2026-03-29T22:00:00Z"))
        #expect(clock.start(of: Day(iso: "2026-10-26")!, zone: nil) == Self.ms("2026-10-25T23:00:00Z"))
    }

    @Test func offsetsFollowTheZonesHistory() throws {
        let berlin = try #require(ZoneOffsets(zone: "Europe/Berlin"))
        #expect(berlin.offsetSeconds(at: Self.ms("2026-07-01T00:00:00Z")) == 7200)
        #expect(berlin.offsetSeconds(at: Self.ms("2026-12-01T00:00:00Z")) == 3600)
        let kathmandu = try #require(ZoneOffsets(zone: "Asia/Kathmandu"))
        #expect(kathmandu.offsetSeconds(at: Self.ms("2026-07-01T00:00:00Z")) == 20700)
        #expect(ZoneOffsets(zone: "Nowhere/Atlantis") == nil)
    }
}
