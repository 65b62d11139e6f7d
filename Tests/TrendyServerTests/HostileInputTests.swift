import Foundation
import NIOHTTP1
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyModels
import TrendyServerTestSupport

/// Hostile request bodies: deeply nested JSON, huge arrays, binary garbage, wrong types — each a
/// 4xx problem document, and the server keeps serving.
@Suite(.timeLimit(.minutes(5)))
struct HostileInputTests {
    @Test func hostileBodiesAreRefusedAndTheServerKeepsServing() async throws {
        try await ServerHarness.with { h in
            let (client, session) = try await h.newUserClient()
            let auth = [("Authorization", "Bearer \(session.accessToken)")]
            let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
            let deepObject = String(repeating: #"{"a":"#, count: 50_000) + "1" + String(repeating: "}", count: 50_000)
            var rng = SeededBytes(seed: 99)
            let bodies: [(String, String?, Data?)] = [
                ("/api/v1/events/batch", deep, nil),
                ("/api/v1/events/batch", #"{"events":"# + deep + "}", nil),
                ("/api/v1/event-types", deepObject, nil),
                ("/api/v1/events/batch", #"{"events":[1,2,3]}"#, nil),
                (
                    "/api/v1/events/batch",
                    #"{"events":"#
                        + "[" + Array(repeating: "{}", count: 5_000).joined(separator: ",") + "]}", nil
                ),
                ("/api/v1/events", #"{"id":123,"event_type_id":[],"timestamp":{}}"#, nil),
                ("/api/v1/geofences", #"{"latitude":"1e999","longitude":null}"#, nil),
                ("/api/v1/event-types", nil, Data((0..<4_096).map { _ in rng.next() })),
                ("/api/v1/event-types", "\u{FEFF}\u{0000}{\"name\":\"x\"}", nil),
            ]
            for (path, text, data) in bodies {
                let r = try await h.raw(.POST, path, body: text, bodyData: data, headers: auth)
                #expect(
                    (400..<500).contains(r.status),
                    "\(path) answered \(r.status) to \(String((text ?? "binary").prefix(40)))")
                // A batch whose every item is refused answers with its per-item results instead.
                let type = r.headers.first(name: "Content-Type")
                #expect(
                    type == "application/problem+json" || (type == "application/json" && r.json["results"] != nil),
                    "\(path) \(r.status) \(type ?? "-")")
            }
            // Still serving.
            #expect(try await client.health().status == "ok")
            #expect(try await client.listEventTypes().isEmpty)
        }
    }
}

/// A valid local time that its offset carries outside years 0001–9999 is refused on every route
/// (an outside tester stored one with `POST /events`: 201, kept as year 0000, and every device's
/// download of the account failed on it from then on).
@Suite(.timeLimit(.minutes(5)))
struct OutOfRangeTimeTests {
    @Test func timesOutsideTheWritableYearsAreRefusedEverywhere() async throws {
        try await ServerHarness.with { h in
            let (client, session) = try await h.newUserClient()
            let auth = [("Authorization", "Bearer \(session.accessToken)")]
            let type = try await client.createEventType(
                EventTypeCreate(id: UUIDv7Generator().next(), name: "Edge"), idempotencyKey: nil
            ).value
            let ok = try await client.createEvent(
                Event(id: UUIDv7Generator().next(), eventTypeId: type.id, timestamp: Date()), idempotencyKey: nil
            ).event.value
            for time in ["9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+23:59"] {
                let event =
                    #"{"id":"\#(UUIDv7Generator().next())","event_type_id":"\#(type.id)","timestamp":"\#(time)"}"#
                let single = try await h.raw(.POST, "/api/v1/events", body: event, headers: auth)
                #expect(single.status == 400, "POST /events \(time): \(single.status)")
                let batch = try await h.raw(
                    .POST, "/api/v1/events/batch", body: #"{"events":[\#(event)]}"#, headers: auth)
                #expect((400..<500).contains(batch.status) || batch.json["results"] != nil, "batch \(batch.status)")
                let patch = try await h.raw(
                    .PATCH, "/api/v1/events/\(ok.id)", body: #"{"timestamp":"\#(time)"}"#, headers: auth)
                #expect(patch.status == 400, "PATCH \(time): \(patch.status)")
            }
            // Nothing of it was stored (a batch answers per item), and the account still downloads.
            #expect(try await client.listEvents(limit: 10, after: nil).items.map(\.value.id) == [ok.id])
            let page = try await client.changes(since: 0, limit: 100)
            #expect(page.changes.count >= 2)
            #expect(try await client.event(id: ok.id).value.timestamp == ok.timestamp)
        }
    }
}

/// Deterministic pseudo-random bytes.
struct SeededBytes {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt8 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return UInt8(truncatingIfNeeded: state >> 33)
    }
}
