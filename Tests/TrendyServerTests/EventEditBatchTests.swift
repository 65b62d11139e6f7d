import Foundation
import NIOHTTP1
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyModels
import TrendyServerTestSupport
import TrendyTestSupport

/// `POST /events/edits` (issue 35): patches and deletes in one request, each answered as the
/// single request would have been, each with its own base; on both stores (the suite runs again
/// with TRENDY_TEST_STORE=postgres).
@Suite(.timeLimit(.minutes(5)))
struct EventEditBatchTests {
    func note(_ text: String) -> EventUpdate {
        var update = EventUpdate()
        update.notes = .set(text)
        return update
    }

    @Test func eachItemIsAnsweredAsItsSingleRequestWouldBe() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let events = (0..<4).map { h.event(type, at: h.clock.now.addingTimeInterval(Double(-10 - $0))) }
            _ = try await api.createEvents(events, idempotencyKey: nil)
            try await api.deleteEvent(id: events[3].id)
            let base = ChangeBase(version: try await api.latestCursor().cursor, deviceId: "A")
            var unknownType = EventUpdate()
            unknownType.eventTypeId = .set(h.ids.next())
            let response = try await api.editEvents(
                [
                    try EventEditItem(update: events[0].id, note("first"), base: base),
                    EventEditItem(delete: events[1].id, base: base),
                    try EventEditItem(update: events[2].id, unknownType, base: base),
                    try EventEditItem(update: events[3].id, note("too late"), base: base),
                    EventEditItem(delete: h.ids.next(), base: base),
                    // In order: the same event's later patch sees the earlier one applied.
                    try EventEditItem(update: events[0].id, note("second"), base: base),
                ], idempotencyKey: nil)
            #expect(response.results.map(\.status) == [.updated, .deleted, .failed, .gone, .notFound, .updated])
            #expect(response.results.map(\.index) == Array(0..<6))
            #expect((response.updated, response.deleted, response.failed) == (2, 1, 3))
            #expect(response.results[2].error?.errors?.map(\.field) == ["event_type_id"])
            #expect(response.results[3].error?.status == 410)
            #expect(try await api.event(id: events[0].id).value.notes == "second")
            await #expect(throws: TrendyAPIError.self) { try await api.event(id: events[1].id) }
            // The refused item changed nothing; the gone one is kept as a conflict, as a PATCH's is.
            #expect(try await api.event(id: events[2].id).value.eventTypeId == type.id)
            let kept = try await api.conflicts()
            #expect(kept.map(\.kind) == [.deleted])
            #expect(kept.first?.entityId == events[3].id.description)
        }
    }

    @Test func aConcurrentChangeIsKeptAsAConflictPerItem() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let events = (0..<2).map { h.event(type, at: h.clock.now.addingTimeInterval(Double(-10 - $0))) }
            _ = try await api.createEvents(events, idempotencyKey: nil)
            let seen = try await api.latestCursor().cursor
            // Device B changes the first event's note after A's base; A's batch then sets both.
            try await ChangeBase.$current.withValue(ChangeBase(version: seen, deviceId: "B")) {
                _ = try await api.updateEvent(id: events[0].id, note("from B"), idempotencyKey: nil)
            }
            let a = ChangeBase(version: seen, deviceId: "A")
            let response = try await api.editEvents(
                [
                    try EventEditItem(update: events[0].id, note("from A"), base: a),
                    try EventEditItem(update: events[1].id, note("from A"), base: a),
                ], idempotencyKey: nil)
            #expect(response.failed == 0)
            let kept = try await api.conflicts()
            #expect(kept.count == 1)
            #expect(kept.first?.entityId == events[0].id.description)
            #expect(kept.first?.lostValue == "\"from B\"")
            #expect(kept.first?.lostBy == "B")
            #expect(kept.first?.keptBy == "A")
        }
    }

    @Test func aBadItemRefusesTheWholeRequestAndAKeyReplaysIt() async throws {
        try await ServerHarness.with { h in
            let (api, session) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let event = h.event(type)
            _ = try await api.createEvent(event, idempotencyKey: nil)
            let id = event.id.description
            let auth = [("Authorization", "Bearer \(session.accessToken)")]
            func post(_ items: [String], key: String? = nil) async throws -> ServerHarness.Raw {
                try await h.raw(
                    .POST, "/api/v1/events/edits", body: #"{"edits":[\#(items.joined(separator: ","))]}"#,
                    headers: auth + (key.map { [("Idempotency-Key", $0)] } ?? []))
            }
            let good = #"{"id":"\#(id)","op":"update","fields":{"notes":"kept"}}"#
            for (bad, status, field) in [
                (#"{"id":"bad","op":"delete"}"#, 422, "edits[1].id"),
                (#"{"id":"\#(id)","op":"rename"}"#, 422, "edits[1].op"),
                (#"{"id":"\#(id)","op":"update"}"#, 422, "edits[1].fields"),
                (#"{"id":"\#(id)","op":"delete","fields":{}}"#, 422, "edits[1].fields"),
                (#"{"id":"\#(id)","op":"update","fields":{"timestamp":null}}"#, 422, "edits[1].fields.timestamp"),
                (#"{"id":"\#(id)","op":"delete","base_version":-1}"#, 422, "edits[1].base_version"),
                (#"{"id":"\#(id)","op":"delete","device_id":""}"#, 422, "edits[1].device_id"),
                (#"{"id":"\#(id)","op":"delete","device_id":null}"#, 422, "edits[1].device_id"),
                (#"{"id":"\#(id)","op":"delete","base_version":null}"#, 422, "edits[1].base_version"),
            ] {
                let answer = try await post([good, bad])
                #expect(answer.status == status, "\(bad)")
                let fields = (answer.json["errors"] as? [[String: Any]])?.compactMap { $0["field"] as? String }
                #expect(fields == [field], "\(bad)")
            }
            #expect(try await post([good, "[1]"]).status == 400)
            #expect(try await post([good, #"{"id":"\#(id)","op":"update","fields":{"notes":5}}"#]).status == 400)
            // Nothing of a refused request was applied.
            #expect(try await api.event(id: event.id).value.notes == event.notes)
            #expect(try await post([]).status == 422)
            #expect(try await post(Array(repeating: good, count: 501)).status == 422)

            let first = try await post([good], key: "edits-1")
            #expect(first.status == 200)
            let cursor = try await api.latestCursor().cursor
            _ = try await api.updateEvent(id: event.id, note("newer"), idempotencyKey: nil)
            // A resend with its key is replayed: it does not overwrite the newer note.
            let again = try await post([good], key: "edits-1")
            #expect(again.status == 200)
            #expect(again.headers.first(name: "Idempotent-Replayed") == "true")
            #expect(try await api.event(id: event.id).value.notes == "newer")
            #expect(try await api.latestCursor().cursor == cursor + 1)
        }
    }
}
