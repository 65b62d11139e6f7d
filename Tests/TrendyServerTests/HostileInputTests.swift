import Foundation
import NIOHTTP1
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyServerTestSupport

/// Hostile request bodies: deeply nested JSON, huge arrays, binary garbage, wrong types — each a
/// 4xx problem document, and the server keeps serving.
@Suite(.timeLimit(.minutes(1)))
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

/// Deterministic pseudo-random bytes.
struct SeededBytes {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt8 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return UInt8(truncatingIfNeeded: state >> 33)
    }
}
