import Foundation
import Testing
import TrendyModels

/// The rules of a property definition and of reading typed text by one (issue 33).
@Suite struct PropertyDefinitionTests {
    let ids = UUIDv7Generator()

    func definition(_ kind: PropertyKind, options: [String]? = nil) -> PropertyDefinition {
        PropertyDefinition(id: ids.next(), eventTypeId: ids.next(), key: "k", propertyType: kind, options: options)
    }

    @Test(arguments: [
        (PropertyKind.number, "2", PropertyValue.number(2)), (.number, "-0.5", .number(-0.5)),
        (.number, "1e3", .number(1000)),
        (.duration, "90", .duration(90)), (.duration, "1:30", .duration(90)), (.duration, "1:02:03", .duration(3723)),
        (.duration, "90:00", .duration(5400)), (.duration, "1h30m", .duration(5400)), (.boolean, "YES", .boolean(true)),
        (.boolean, "0", .boolean(false)), (.url, "https://example.com/x", .url("https://example.com/x")),
        (.email, "sam@example.com", .email("sam@example.com")), (.text, " as typed ", .text(" as typed ")),
    ])
    func typedTextIsReadByItsKind(kind: PropertyKind, text: String, value: PropertyValue) throws {
        #expect(try definition(kind).parse(text) == value)
    }

    @Test(arguments: [
        (PropertyKind.number, "0x10"), (.number, "nan"), (.number, "inf"), (.number, "two"), (.duration, "1:99"),
        (.duration, "0x10"), (.duration, "-5"), (.duration, "1:-1"), (.boolean, "maybe"), (.date, "yesterday"),
        (.url, "ftp://example.com"), (.url, "example.com"), (.email, "sam@"), (.email, "a b@example.com"),
    ])
    func textThatIsNotOfTheKindIsRefusedNamingTheProperty(kind: PropertyKind, text: String) {
        #expect(throws: ValidationError.self) { try definition(kind).parse(text) }
        do {
            _ = try definition(kind).parse(text)
        } catch {
            #expect(error.issues.first?.field == "properties.k")
        }
    }

    @Test func aSelectTakesItsOptionsInAnyCaseAndNothingElse() throws {
        let milk = definition(.select, options: ["Oat", "whole"])
        #expect(try milk.parse("OAT") == .select("Oat"))
        #expect(throws: ValidationError.self) { try milk.parse("soy") }
        #expect(!milk.issues(for: .select("soy")).isEmpty)
        #expect(!milk.issues(for: .text("Oat")).isEmpty, "a value of another kind")
    }

    @Test func aDefinitionsOwnRulesAreCheckedAtOnce() {
        var d = definition(.select)
        #expect(throws: ValidationError.self) { try d.validate() }  // no options
        d.options = ["a", "A"]
        #expect(throws: ValidationError.self) { try d.validate() }  // the same in another case
        d = definition(.number, options: ["a"])
        #expect(throws: ValidationError.self) { try d.validate() }  // options of a number
        for key in ["notes", "Type", "2x", "a b", String(repeating: "k", count: 65)] {
            d = definition(.text)
            d.key = key
            #expect(throws: ValidationError.self, "\(key)") { try d.validate() }
        }
        d = definition(.number)
        d.defaultValue = .text("two")
        #expect(throws: ValidationError.self) { try d.validate() }
    }

    @Test func anEventsKeysAreNotColumnsAndAreOnceInAnyCase() {
        let ids = UUIDv7Generator()
        var event = Event(id: ids.next(), eventTypeId: ids.next(), timestamp: Date(timeIntervalSince1970: 1.8e9))
        event.properties = ["Dist": .number(5), "dist": .number(6)]
        #expect(throws: ValidationError.self) { try event.validate() }
        event.properties = ["notes": .text("x")]
        #expect(throws: ValidationError.self) { try event.validate() }
        event.properties = ["dist": .number(5), "mood": .text("ok")]
        #expect(throws: Never.self) { try event.validate() }
    }

    @Test func aDefinitionRoundTripsItsWireShapeWithABareDefault() throws {
        var d = definition(.duration)
        d.defaultValue = .duration(90)
        let data = try TrendyJSON.encoder().encode(d)
        #expect(String(decoding: data, as: UTF8.self).contains("\"default_value\":90"))
        #expect(try TrendyJSON.decoder().decode(PropertyDefinition.self, from: data) == d)
    }
}
