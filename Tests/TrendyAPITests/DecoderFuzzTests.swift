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

    /// The fast page reader may give up (the caller then uses `JSONDecoder`), but whatever it
    /// reads must be what `JSONDecoder` reads, and the event text it keeps must decode to the
    /// same event: that text is stored as it is.
    @Test func whatTheFastReaderAcceptsTheDecoderReadsTheSame() throws {
        let ids = UUIDv7Generator()
        let t0 = Date(timeIntervalSince1970: 1_800_000_000.25)
        let type = EventType(id: ids.next(), name: "Tea")
        var changes: [Change] = [
            Change(
                cursor: 1, entityType: .eventType, entityId: type.id.description, operation: .create,
                data: .eventType(Timestamped(type, createdAt: t0, updatedAt: t0)), createdAt: t0)
        ]
        let events = [
            Event(id: ids.next(), eventTypeId: type.id, timestamp: t0),
            Event(
                id: ids.next(), eventTypeId: type.id, timestamp: t0, endDate: t0.addingTimeInterval(90),
                notes: "tab\there \"quoted\" \\ é 🚲", isAllDay: true, sourceType: .geofence, externalId: "ext-1",
                geofenceId: ids.next(), location: Coordinate(latitude: -33.5, longitude: 151.25), locationName: "Café"),
        ]
        for (i, event) in events.enumerated() {
            changes.append(
                Change(
                    cursor: Int64(i + 2), entityType: .event, entityId: event.id.description, operation: .update,
                    data: .event(Timestamped(event, createdAt: t0, updatedAt: t0)), createdAt: t0))
        }
        changes.append(
            Change(cursor: 9, entityType: .event, entityId: "gone", operation: .delete, data: nil, createdAt: t0))
        let page = ChangesPage(changes: changes, nextCursor: 9, hasMore: true)
        // The server's own field order (entity_type before data) and the encoder's sorted one.
        var server = #"{"changes":["#
        for (i, change) in changes.enumerated() {
            if i > 0 { server += "," }
            let data: String
            switch change.data {
            case .event(let e): data = e.value.wireJSON(createdAt: e.createdAt, updatedAt: e.updatedAt)
            case .eventType(let t): data = String(decoding: try TrendyJSON.encoder().encode(t), as: UTF8.self)
            default: data = "null"
            }
            server += #"{"cursor":\#(change.cursor),"entity_type":"\#(change.entityType.rawValue)","#
            server += #""entity_id":"\#(change.entityId)","operation":"\#(change.operation.rawValue)","#
            server += #""created_at":"\#(ISO8601.format(t0))","data":\#(data)}"#
        }
        server += #"],"next_cursor":9,"has_more":true}"#
        let samples = [Data(server.utf8), try TrendyJSON.encoder().encode(page)]
        for sample in samples {
            let fast = try #require(ChangesPage.fastRead(sample))
            #expect(fast == page)
            for change in fast.changes {
                guard case .event(let e) = change.data else { continue }
                let kept = try #require(change.dataJSON)
                #expect(try TrendyJSON.decoder().decode(Timestamped<Event>.self, from: Data(kept.utf8)) == e)
            }
        }
        var rng = Bytes(state: 77)
        var agreed = 0
        for sample in samples {
            for _ in 0..<3_000 {
                let data = mutate(sample, &rng)
                guard let fast = ChangesPage.fastRead(data) else { continue }
                let decoded = try #require(
                    try? TrendyJSON.decoder().decode(ChangesPage.self, from: data),
                    "\(String(decoding: data, as: UTF8.self))")
                #expect(fast == decoded)
                for change in fast.changes {
                    guard case .event(let e) = change.data, let kept = change.dataJSON else { continue }
                    #expect((try? TrendyJSON.decoder().decode(Timestamped<Event>.self, from: Data(kept.utf8))) == e)
                }
                agreed += 1
            }
        }
        #expect(agreed > 100)
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
