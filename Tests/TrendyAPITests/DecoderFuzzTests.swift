import Foundation
import Testing
import TrendyAPI
import TrendyModels

/// Damaged and hostile server answers: every decoder and fast reader returns a value or an
/// error, never crashes, whatever the bytes.
@Suite struct DecoderFuzzTests {
    struct Bytes: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            return z ^ (z >> 27)
        }
    }

    static func samples() throws -> [Data] {
        let ids = UUIDv7Generator()
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        let type = EventType(id: ids.next(), name: "Tea")
        let event = Event(
            id: ids.next(), eventTypeId: type.id, timestamp: t0, endDate: t0.addingTimeInterval(60), notes: "a \"b\"",
            location: Coordinate(latitude: 1, longitude: 2), properties: ["n": .number(1.5), "s": .text("x")])
        let page = ChangesPage(
            changes: [
                Change(
                    cursor: 1, entityType: .eventType, entityId: type.id.description, operation: .create,
                    data: .eventType(Timestamped(type, createdAt: t0, updatedAt: t0)), createdAt: t0),
                Change(
                    cursor: 2, entityType: .event, entityId: event.id.description, operation: .update,
                    data: .event(Timestamped(event, createdAt: t0, updatedAt: t0)), createdAt: t0),
                Change(cursor: 3, entityType: .event, entityId: "x", operation: .delete, data: nil, createdAt: t0),
            ], nextCursor: 3, hasMore: false)
        let list = ListPage(
            items: [Timestamped(event, createdAt: t0, updatedAt: t0)], limit: 1, offset: 0, hasMore: false)
        return [
            try TrendyJSON.encoder().encode(page), try TrendyJSON.encoder().encode(list),
            Data(
                #"{"type":"urn:x","title":"T","status":422,"detail":"d","errors":[{"field":"f","message":"m"}]}"#.utf8),
        ]
    }

    func mutate(_ data: Data, _ rng: inout Bytes) -> Data {
        var bytes = [UInt8](data)
        let alphabet = Array(#"{}[]":,\0123456789.eE-+truefalsnl "#.utf8)
        for _ in 0..<Int.random(in: 1...6, using: &rng) {
            guard !bytes.isEmpty else { break }
            let at = Int.random(in: 0..<bytes.count, using: &rng)
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: bytes[at] = alphabet.randomElement(using: &rng)!
            case 1: bytes.remove(at: at)
            case 2: bytes.insert(UInt8.random(in: 0...255, using: &rng), at: at)
            default: bytes = Array(bytes[0..<at])
            }
        }
        return Data(bytes)
    }

    @Test func damagedAnswersNeverCrashAnyReader() throws {
        var rng = Bytes(state: 2026)
        var readable = 0
        for sample in try Self.samples() {
            for _ in 0..<1_500 {
                let data = mutate(sample, &rng)
                if ChangesPage.fastRead(data) != nil { readable += 1 }
                _ = ListPage<Timestamped<Event>>.fastRead(data)
                _ = EventBatchResponse.fastRead(data)
                _ = try? TrendyJSON.decoder().decode(ChangesPage.self, from: data)
                _ = try? TrendyJSON.decoder().decode(APIProblem.self, from: data)
                _ = try? TrendyJSON.decoder().decode(ListPage<Timestamped<Event>>.self, from: data)
            }
        }
        // Damage inside strings and numbers leaves valid documents: some must still be read.
        #expect(readable > 0)
    }

    @Test func pathologicalDocumentsAreRefused() {
        let deep = Data((String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000)).utf8)
        let deepObjects = Data(
            (#"{"changes":"# + String(repeating: #"{"a":"#, count: 100_000) + "1"
                + String(repeating: "}", count: 100_001)).utf8)
        let hugeNumber = Data(#"{"changes":[],"next_cursor":1e999999,"has_more":false}"#.utf8)
        let negativeCursor = Data(#"{"changes":[],"next_cursor":-5,"has_more":false}"#.utf8)
        for data in [deep, deepObjects, hugeNumber, Data(), Data([0xFF, 0xFE, 0x00])] {
            #expect(ChangesPage.fastRead(data) == nil)
            #expect((try? TrendyJSON.decoder().decode(ChangesPage.self, from: data)) == nil)
        }
        _ = ChangesPage.fastRead(negativeCursor)  // the engine refuses cursors that go backwards
    }
}
