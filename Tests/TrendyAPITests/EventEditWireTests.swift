import Foundation
import Synchronization
import Testing
import TrendyAPI
import TrendyModels

/// The batched edit's wire pieces (issue 35): an item's JSON, and the fields a patch names read
/// without encoding it (the server asks for every edit) against the keys of its JSON object.
@Suite struct EventEditWireTests {
    @Test func aPatchNamesTheKeysOfItsJSONObject() throws {
        var generator = SplitMix64(seed: 35)
        for _ in 0..<300 {
            var update = EventUpdate()
            func pick<T>(_ value: T) -> FieldUpdate<T> {
                switch generator.next() % 3 {
                case 0: return .keep
                case 1: return .clear
                default: return .set(value)
                }
            }
            update.eventTypeId = pick(UUIDv7Generator().next())
            update.timestamp = pick(Date(timeIntervalSince1970: 1.7e9))
            update.endDate = pick(Date(timeIntervalSince1970: 1.7e9 + 60))
            update.notes = pick("n")
            update.isAllDay = pick(true)
            update.externalId = pick("x")
            update.geofenceId = pick(UUIDv7Generator().next())
            update.location = pick(Coordinate(latitude: 1, longitude: 2))
            update.locationName = pick("Home")
            update.properties = pick(["k": .text("v")])
            update.timeZone = pick("Europe/Berlin")
            let keys = try FieldPatch.object(update).keys.sorted()
            #expect(update.patchedFields == keys)
        }
    }

    @Test func anItemIsItsWireObject() throws {
        let id = UUIDv7Generator().next()
        var fields = EventUpdate()
        fields.notes = .set("a \"quoted\" note")
        let update = try EventEditItem(update: id, fields, base: ChangeBase(version: 7, deviceId: "dev \"1\""))
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(update.wireJSON.utf8)) as? [String: Any])
        #expect(object["id"] as? String == id.description)
        #expect(object["op"] as? String == "update")
        #expect((object["fields"] as? [String: Any])?["notes"] as? String == "a \"quoted\" note")
        #expect(object["base_version"] as? Int == 7)
        #expect(object["device_id"] as? String == "dev \"1\"")
        #expect(try update.fields() == fields)
        let delete = EventEditItem(delete: id, base: nil)
        #expect(delete.wireJSON == #"{"id":"\#(id.description)","op":"delete"}"#)
    }

    /// Without the batch route, each item is its own request; a patch unreadable here is that
    /// item's refusal (never sent), what stops a request stops the batch.
    @Test func oneByOneAnswersEachItemAndStopsOnWhatStopsARequest() async throws {
        let ids = UUIDv7Generator()
        let (bad, good, missing) = (ids.next(), ids.next(), ids.next())
        var note = EventUpdate()
        note.notes = .set("n")
        let items = [
            EventEditItem(update: bad, fieldsJSON: "not json", base: nil),
            try EventEditItem(update: good, note, base: ChangeBase(version: 3, deviceId: "d")),
            EventEditItem(delete: missing, base: nil),
        ]
        let sent = Mutex<[String]>([])
        let response = try await EventEditResponse.oneByOne(
            items,
            update: { _, id, _ throws(TrendyAPIError) in
                sent.withLock { $0.append("update \(id) base \(ChangeBase.current?.version ?? -1)") }
            },
            delete: { id throws(TrendyAPIError) in
                sent.withLock { $0.append("delete \(id)") }
                throw .notFound(APIProblem(status: 404, code: "not_found", title: "Not found"))
            })
        #expect(response.results.map(\.status) == [.failed, .updated, .notFound])
        #expect(response.results[0].error?.code == "malformed_request")
        #expect(sent.withLock { $0 } == ["update \(good) base 3", "delete \(missing)"])
        await #expect(throws: TrendyAPIError.self) {
            _ = try await EventEditResponse.oneByOne(
                items.suffix(1), update: { _, _, _ throws(TrendyAPIError) in },
                delete: { _ throws(TrendyAPIError) in throw .transport(.timedOut) })
        }
    }
}
