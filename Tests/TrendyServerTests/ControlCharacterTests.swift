import Foundation
import NIOHTTP1
import Testing
import TrendyAPI
import TrendyModels
import TrendyServer
import TrendyServerTestSupport

/// Issue 20: a NUL in a name was stored as sent in one place and cut off in another (SQLite's
/// C-string reads). Control characters are refused in every name and identifier, and every
/// control character but tab and line breaks in free text — on create and on update.
@Suite(.timeLimit(.minutes(5)))
struct ControlCharacterTests {
    @Test func controlCharactersAreRefusedOnEveryPath() async throws {
        try await ServerHarness.with { h in
            let (_, session) = try await h.newUserClient()
            let auth = [("Authorization", "Bearer \(session.accessToken)"), ("Content-Type", "application/json")]
            let typeId = h.ids.next()
            for name in [#"a\u0000b"#, #"tab\there"#, #"bell\u0007"#, #"del\u007f"#] {
                let r = try await h.raw(
                    .POST, "/api/v1/event-types", body: #"{"id":"\#(h.ids.next())","name":"\#(name)"}"#, headers: auth)
                #expect(r.status == 422, "\(name): \(r.status)")
            }
            let created = try await h.raw(
                .POST, "/api/v1/event-types", body: #"{"id":"\#(typeId)","name":"Tea"}"#, headers: auth)
            #expect(created.status == 201)
            let rename = try await h.raw(
                .PATCH, "/api/v1/event-types/\(typeId)", body: #"{"name":"T\u0000ea"}"#, headers: auth)
            #expect(rename.status == 422)
            let read = try await h.raw(.GET, "/api/v1/event-types/\(typeId)", headers: auth)
            #expect(read.json["name"] as? String == "Tea")

            func event(_ notes: String) -> String {
                #"{"id":"\#(h.ids.next())","event_type_id":"\#(typeId)","timestamp":"2026-01-01T10:00:00Z","notes":"\#(notes)"}"#
            }
            #expect(try await h.raw(.POST, "/api/v1/events", body: event(#"a\u0000b"#), headers: auth).status == 422)
            #expect(try await h.raw(.POST, "/api/v1/events", body: event(#"a\u001bb"#), headers: auth).status == 422)
            // Free text keeps tabs and line breaks.
            #expect(
                try await h.raw(.POST, "/api/v1/events", body: event(#"line\nbreak\ttab\r"#), headers: auth).status
                    == 201)

            func fence(_ name: String) -> String {
                #"{"id":"\#(h.ids.next())","name":"\#(name)","latitude":52.5,"longitude":13.4,"radius":100,"event_type_entry_id":"\#(typeId)"}"#
            }
            #expect(
                try await h.raw(.POST, "/api/v1/geofences", body: fence(#"Ho\u0000me"#), headers: auth).status == 422)
            let home = try await h.raw(.POST, "/api/v1/geofences", body: fence("Home"), headers: auth)
            #expect(home.status == 201, "\(String(decoding: home.body, as: UTF8.self))")
        }
    }

    @Test func theModelsRefuseThemToo() {
        #expect(throws: ValidationError.self) {
            try EventType(id: UUIDv7Generator().next(), name: "a\u{0}b").validate()
        }
        #expect(throws: Never.self) { try EventType(id: UUIDv7Generator().next(), name: "Café ☕️").validate() }
    }
}
