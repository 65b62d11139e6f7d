import Foundation
import Testing

@testable import TrendyModels

struct ModelValidationTests {
    let ids = UUIDv7Generator()

    func validationError(_ body: () throws(ValidationError) -> Void) -> ValidationError? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }

    /// An event's time is between the years 1800 and 2999 (outside attack: a year-1 event was
    /// sent as "0000-12-30", refused by the server, and made the data directory unreadable).
    @Test(arguments: [
        ("0001-01-01T00:00:00Z", false), ("1799-12-31T23:59:59Z", false), ("1800-01-01T00:00:00Z", true),
        ("1969-07-20T20:17:00Z", true), ("2999-12-31T23:59:59Z", true), ("3000-01-01T00:00:00Z", false),
        ("9999-12-31T00:00:00Z", false),
    ])
    func anEventsTimeIsWithinTheYearsEveryStoreAgreesOn(time: String, valid: Bool) throws {
        let at = try #require(ISO8601.parse(time))
        let event = Event(id: ids.next(), eventTypeId: ids.next(), timestamp: at)
        let error = validationError { () throws(ValidationError) in try event.validate() }
        #expect(
            valid
                ? error == nil
                : error?.issues == [
                    FieldIssue(field: "timestamp", reason: "must be between the years 1800 and 2999")
                ], "\(time)")
        let ending = Event(id: ids.next(), eventTypeId: ids.next(), timestamp: Event.years.lowerBound, endDate: at)
        #expect(
            (validationError { () throws(ValidationError) in try ending.validate() } == nil) == valid, "end \(time)")
    }

    @Test func validGeofencePasses() throws {
        let g = Geofence(id: ids.next(), name: "Gym", center: .init(latitude: 52.5, longitude: 13.4), radius: 100)
        try g.validate()
    }

    @Test(arguments: [49.9, 10_000.1, -5, .nan, .infinity])
    func geofenceRadiusOutOfRangeIsRejected(radius: Double) {
        let g = Geofence(id: ids.next(), name: "Gym", center: .init(latitude: 0, longitude: 0), radius: radius)
        let error = validationError { () throws(ValidationError) in try g.validate() }
        #expect(error?.issues == [FieldIssue(field: "radius", reason: "must be between 50 and 10000 metres")])
    }

    @Test(arguments: [50.0, 10_000.0])
    func geofenceRadiusBoundsAreInclusive(radius: Double) throws {
        try Geofence(id: ids.next(), name: "x", center: .init(latitude: 0, longitude: 0), radius: radius).validate()
    }

    @Test func geofenceReportsEveryProblemAtOnce() {
        let g = Geofence(id: ids.next(), name: "  ", center: .init(latitude: 91, longitude: -181), radius: 1)
        let error = validationError { () throws(ValidationError) in try g.validate() }
        #expect(error?.entity == "Geofence")
        #expect(error?.issues.map(\.field) == ["name", "latitude", "longitude", "radius"])
        #expect(error?.description.contains("radius: must be between 50 and 10000 metres") == true)
    }

    @Test func coordinateValidationAndDistance() throws {
        #expect(throws: ValidationError.self) { try Coordinate(validatingLatitude: 90.5, longitude: 0) }
        #expect(throws: ValidationError.self) { try Coordinate(validatingLatitude: .nan, longitude: 0) }
        let berlin = try Coordinate(validatingLatitude: 52.520008, longitude: 13.404954)
        let paris = try Coordinate(validatingLatitude: 48.856613, longitude: 2.352222)
        #expect(abs(berlin.distance(to: paris) - 877_500) < 2_000)
        #expect(berlin.distance(to: berlin) == 0)
    }

    @Test func geofenceEdgeDistance() {
        let g = Geofence(id: ids.next(), name: "x", center: .init(latitude: 0, longitude: 0), radius: 100)
        #expect(g.distanceToEdge(from: .init(latitude: 0, longitude: 0)) == 0)
        #expect(g.contains(.init(latitude: 0, longitude: 0.0005)))
        let outside = g.distanceToEdge(from: .init(latitude: 0, longitude: 0.01))
        #expect(abs(outside - (1_111.95 - 100)) < 1)
    }

    @Test func eventTypeValidation() {
        let bad = EventType(id: ids.next(), name: "", color: "blue", icon: "")
        let error = validationError { () throws(ValidationError) in try bad.validate() }
        #expect(error?.issues.map(\.field) == ["name", "color", "icon"])
        #expect(EventType.isHexColor("#a1B2c3"))
        #expect(!EventType.isHexColor("#a1B2c"))
    }

    @Test func eventValidationNamesEachField() {
        let now = Date()
        let e = Event(
            id: ids.next(), eventTypeId: ids.next(), timestamp: now, endDate: now.addingTimeInterval(-1),
            notes: String(repeating: "x", count: 10_001), sourceType: .healthkit,
            location: Coordinate(latitude: 100, longitude: 0),
            properties: ["mood": .number(.infinity), "": .text("x"), "kind": .select(" ")])
        let error = validationError { () throws(ValidationError) in try e.validate() }
        let fields = error?.issues.map(\.field) ?? []
        #expect(fields.contains("end_date"))
        #expect(fields.contains("notes"))
        #expect(fields.contains("external_id"))
        #expect(fields.contains("location.latitude"))
        #expect(fields.contains("properties.mood"))
        #expect(fields.contains("properties.kind"))
        #expect(fields.contains("properties"))
    }

    @Test func geofenceEventsNeedTheirGeofence() {
        let e = Event(id: ids.next(), eventTypeId: ids.next(), timestamp: Date(), sourceType: .geofence)
        let error = validationError { () throws(ValidationError) in try e.validate() }
        #expect(error?.issues == [FieldIssue(field: "geofence_id", reason: "is required for geofence events")])
    }

    @Test func validEventPassesAndKnowsItsDuration() throws {
        let start = Date()
        let e = Event(
            id: ids.next(), eventTypeId: ids.next(), timestamp: start, endDate: start.addingTimeInterval(90),
            properties: ["reps": .number(10), "link": .url("https://example.com")])
        try e.validate()
        #expect(e.duration == 90)
    }
}
