import Foundation
import Testing

@testable import TrendyModels

struct ISO8601Tests {
    @Test(arguments: [
        ("2026-11-22T10:00:00Z", 1_795_341_600.0), ("2026-11-22T10:00:00.5Z", 1_795_341_600.5),
        ("2026-11-22T12:00:00+02:00", 1_795_341_600.0), ("2026-11-22T05:30:00-0430", 1_795_341_600.0),
        ("1970-01-01T00:00:00.000Z", 0), ("1969-12-31T23:59:59Z", -1), ("2000-02-29T00:00:00Z", 951_782_400),
        ("2026-11-22t10:00:00z", 1_795_341_600.0),
    ])
    func parsesTheCommonShapes(text: String, seconds: Double) throws {
        let date = try #require(ISO8601.parse(text))
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.0005)
    }

    @Test(arguments: [
        "", "yesterday", "2026-13-01T00:00:00Z", "2026-11-22T25:00:00Z", "2026-11-22 10:00:00", "2026-11-22T10:00:00",
        "2026-11-22T10:00:00.Z",
    ])
    func rejectsWhatIsNotADateTime(text: String) {
        #expect(ISO8601.parse(text) == nil)
    }

    @Test func formatsUTCWithMillisecondsAndRoundTrips() {
        let whole: [Double] = [0, -1, 1_795_341_600.5, 951_782_400, 4_102_444_799.25]
        for s in whole {
            let d = Date(timeIntervalSince1970: s)
            #expect(ISO8601.format(d) == d.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        }
        for s in whole + [1_795_341_600.123, 1_795_341_600.999] {
            let parsed = ISO8601.parse(ISO8601.format(Date(timeIntervalSince1970: s)))
            #expect(abs(parsed!.timeIntervalSince1970 - s) < 0.0011)
        }
        #expect(ISO8601.format(Date(timeIntervalSince1970: 1_795_341_600.123)) == "2026-11-22T10:00:00.123Z")
    }
}
