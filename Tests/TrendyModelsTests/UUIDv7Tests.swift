import Foundation
import Synchronization
import Testing

@testable import TrendyModels

struct UUIDv7Tests {
    @Test func layoutHasTimestampVersionAndVariant() {
        let date = Date(timeIntervalSince1970: 1_700_000_000.123)
        let id = UUIDv7Generator(now: { date }).next()
        let b = id.uuid.uuid
        #expect(b.6 >> 4 == 7)
        #expect(b.8 & 0xC0 == 0x80)
        #expect(id.milliseconds == 1_700_000_000_123)
        #expect(abs(id.timestamp.timeIntervalSince(date)) < 0.001)
    }

    @Test func idsAreStrictlyIncreasingUnderAFrozenClock() {
        let frozen = Date(timeIntervalSince1970: 1_700_000_000)
        let generator = UUIDv7Generator(now: { frozen })
        var previous = generator.next()
        for _ in 0..<10_000 {
            let next = generator.next()
            #expect(previous < next)
            previous = next
        }
    }

    @Test func counterOverflowAdvancesTheTimestampInsteadOfRepeating() {
        let frozen = Date(timeIntervalSince1970: 1_700_000_000)
        // A random source of all ones seeds the counter at its highest starting point.
        let generator = UUIDv7Generator(now: { frozen }, random: { .max })
        var ids: [UUIDv7] = []
        for _ in 0..<5_000 { ids.append(generator.next()) }
        #expect(Set(ids).count == ids.count)
        #expect(ids == ids.sorted())
        #expect(ids.last!.milliseconds > 1_700_000_000_000)
    }

    @Test func clockSteppingBackStaysMonotonic() {
        let clock = Mutex(Date(timeIntervalSince1970: 1_700_000_010))
        let generator = UUIDv7Generator(now: { clock.withLock { $0 } })
        let first = generator.next()
        clock.withLock { $0 = Date(timeIntervalSince1970: 1_700_000_000) }
        #expect(first < generator.next())
    }

    @Test func randomnessIsInjected() {
        let g1 = UUIDv7Generator(now: { Date(timeIntervalSince1970: 1) }, random: { 42 })
        let g2 = UUIDv7Generator(now: { Date(timeIntervalSince1970: 1) }, random: { 42 })
        #expect(g1.next() == g2.next())
    }

    @Test func textRoundTrips() throws {
        let id = UUIDv7Generator().next()
        #expect(UUIDv7(id.description) == id)
        #expect(UUIDv7(id.description.uppercased()) == id)
        #expect(id.description == id.description.lowercased())
        let data = try JSONEncoder().encode([id])
        #expect(try JSONDecoder().decode([UUIDv7].self, from: data) == [id])
    }

    @Test(arguments: [
        "", "not-a-uuid", "0190b7e4-8f1a-7c2d-9e3f", "0190b7e4-8f1a-7c2d-9e3f-4a5b6c7d8e9fff",
        "0190b7e48f1a7c2d9e3f4a5b6c7d8e9f", "zz90b7e4-8f1a-7c2d-9e3f-4a5b6c7d8e9f",
    ])
    func malformedTextIsRejected(text: String) {
        #expect(UUIDv7(text) == nil)
        #expect(throws: UUIDv7Error.malformed(text)) { try UUIDv7(validating: text) }
    }

    @Test(arguments: [
        ("6ba7b810-9dad-11d1-80b4-00c04fd430c8", 1), ("550e8400-e29b-41d4-a716-446655440000", 4),
        ("0190b7e4-8f1a-6c2d-9e3f-4a5b6c7d8e9f", 6),
    ])
    func otherVersionsAreRejected(text: String, version: Int) {
        #expect(UUIDv7(text) == nil)
        #expect(throws: UUIDv7Error.wrongVersion(text, version: version)) { try UUIDv7(validating: text) }
    }

    @Test func wrongVariantIsRejected() {
        #expect(UUIDv7("0190b7e4-8f1a-7c2d-1e3f-4a5b6c7d8e9f") == nil)
    }

    @Test func decodingANonV7IdFailsWithAReadableError() {
        let json = Data(#"["550e8400-e29b-41d4-a716-446655440000"]"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([UUIDv7].self, from: json) }
    }
}
