import Foundation
import Testing

@testable import TrendyModels

struct WireFormatTests {
    let ids = UUIDv7Generator()

    @Test func eventRoundTripsInSnakeCase() throws {
        let e = Event(
            id: ids.next(), eventTypeId: ids.next(), timestamp: Date(timeIntervalSince1970: 1_800_000_000.5),
            endDate: Date(timeIntervalSince1970: 1_800_000_100), notes: "n", sourceType: .imported, externalId: "row-1",
            location: .init(latitude: 1, longitude: 2), locationName: "Home",
            properties: [
                "mood": .number(3), "tag": .select("a"), "when": .date(Date(timeIntervalSince1970: 0)),
                "ok": .boolean(true),
            ])
        let data = try TrendyJSON.encoder().encode(e)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"event_type_id\""))
        #expect(text.contains("\"source_type\":\"imported\""))
        #expect(text.contains("\"timestamp\":\"2027-01-15T08:00:00.500Z\""))
        #expect(text.contains("\"mood\":{\"type\":\"number\",\"value\":3}"))
        #expect(try TrendyJSON.decoder().decode(Event.self, from: data) == e)
    }

    @Test func eventDecodingAppliesDefaults() throws {
        let json = """
            {"id":"\(ids.next())","event_type_id":"\(ids.next())","timestamp":"2026-11-22T10:00:00+02:00"}
            """
        let e = try TrendyJSON.decoder().decode(Event.self, from: Data(json.utf8))
        #expect(e.sourceType == .manual)
        #expect(e.isAllDay == false)
        #expect(e.properties.isEmpty)
        #expect(e.timestamp == TrendyJSON.parseDate("2026-11-22T08:00:00Z"))
    }

    @Test func unknownPropertyTypesAndSourceTypesFailToDecode() {
        let bad = #"{"type":"colour","value":"red"}"#
        #expect(throws: DecodingError.self) {
            try TrendyJSON.decoder().decode(PropertyValue.self, from: Data(bad.utf8))
        }
        let json = """
            {"id":"\(ids.next())","event_type_id":"\(ids.next())","timestamp":"2026-11-22T10:00:00Z","source_type":"fax"}
            """
        #expect(throws: DecodingError.self) { try TrendyJSON.decoder().decode(Event.self, from: Data(json.utf8)) }
    }

    @Test func badDatesFailWithAReadableMessage() {
        let json = """
            {"id":"\(ids.next())","event_type_id":"\(ids.next())","timestamp":"yesterday"}
            """
        do {
            _ = try TrendyJSON.decoder().decode(Event.self, from: Data(json.utf8))
            Issue.record("expected a decoding error")
        } catch {
            #expect(String(describing: error).contains("is not an ISO-8601 date-time"))
        }
    }

    @Test func geofenceUsesTheFlatWireForm() throws {
        let g = Geofence(
            id: ids.next(), name: "Gym", center: .init(latitude: 52.5, longitude: 13.4), radius: 150,
            entryEventTypeId: ids.next())
        let data = try TrendyJSON.encoder().encode(g)
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        #expect(object?["latitude"] as? Double == 52.5)
        #expect(object?["event_type_entry_id"] as? String == g.entryEventTypeId?.description)
        #expect(object?["is_active"] as? Bool == true)
        #expect(try TrendyJSON.decoder().decode(Geofence.self, from: data) == g)
    }
}

struct EventWireJSONTests {
    let ids = UUIDv7Generator()

    @Test func handWrittenJSONMatchesTheEncoder() throws {
        let full = Event(
            id: ids.next(), eventTypeId: ids.next(), timestamp: Date(timeIntervalSince1970: 1_800_000_000.25),
            endDate: Date(timeIntervalSince1970: 1_800_000_100), notes: "say \"hi\"\n\\ \u{01}", isAllDay: true,
            sourceType: .geofence, externalId: "x-1", geofenceId: ids.next(),
            location: .init(latitude: 52.5, longitude: -13.25), locationName: "Café",
            properties: ["mood": .number(3), "tag": .select("a")])
        let minimal = Event(id: ids.next(), eventTypeId: ids.next(), timestamp: Date(timeIntervalSince1970: 0))
        for e in [full, minimal] {
            let decoded = try TrendyJSON.decoder().decode(Event.self, from: Data(e.wireJSON().utf8))
            #expect(decoded == e)
            let stamped = e.wireJSON(
                createdAt: Date(timeIntervalSince1970: 1), updatedAt: Date(timeIntervalSince1970: 2))
            let object = try JSONSerialization.jsonObject(with: Data(stamped.utf8)) as? [String: Any]
            #expect(object?["created_at"] as? String == "1970-01-01T00:00:01.000Z")
            #expect(object?["updated_at"] as? String == "1970-01-01T00:00:02.000Z")
        }
    }
}
