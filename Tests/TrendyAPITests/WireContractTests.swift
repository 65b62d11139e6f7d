import Foundation
import Testing
import TrendyAPI
import TrendyModels

struct WireContractTests {
    let ids = UUIDv7Generator()

    func json(_ value: some Encodable) throws -> String {
        String(decoding: try TrendyJSON.encoder().encode(value), as: UTF8.self)
    }

    /// An error answer that is not a problem document reads as its status and says the server
    /// gave no reason; an outsider saw "400 http_400".
    @Test func anAnswerWithoutAProblemDocumentSaysItsStatusOnce() {
        let plain = TrendyAPIError.from(status: 400, problem: nil, retryAfter: nil)
        #expect(
            plain.description == "HTTP 400: the server gave no reason (its answer was not in this API's error format)")
        let problem = APIProblem(status: 400, code: "malformed_request", title: "Bad", detail: "not JSON")
        #expect(
            TrendyAPIError.from(status: 400, problem: problem, retryAfter: nil).description
                == "400 malformed_request: not JSON")
    }

    @Test func updatesEncodeAbsentNullAndValueDistinctly() throws {
        var update = EventUpdate()
        update.notes = .clear
        update.isAllDay = .set(true)
        #expect(try json(update) == #"{"is_all_day":true,"notes":null}"#)
        let decoded = try TrendyJSON.decoder().decode(
            EventUpdate.self, from: Data(#"{"notes":null,"location_name":"Gym"}"#.utf8))
        #expect(decoded.notes == .clear)
        #expect(decoded.locationName == .set("Gym"))
        #expect(decoded.timestamp == .keep)
        #expect(decoded.clearedRequiredFields.isEmpty)
        let bad = try TrendyJSON.decoder().decode(EventUpdate.self, from: Data(#"{"timestamp":null}"#.utf8))
        #expect(bad.clearedRequiredFields == ["timestamp"])
    }

    @Test func applyingAnUpdateKeepsWhatIsAbsent() {
        let e = Event(id: ids.next(), eventTypeId: ids.next(), timestamp: Date(), notes: "n", locationName: "Home")
        var u = EventUpdate()
        u.notes = .clear
        let out = u.apply(to: e)
        #expect(out.notes == nil)
        #expect(out.locationName == "Home")
        #expect(out.timestamp == e.timestamp)
    }

    @Test func timestampedFlattensIntoOneObject() throws {
        let type = EventType(id: ids.next(), name: "Tea")
        let stored = Timestamped(
            type, createdAt: Date(timeIntervalSince1970: 0), updatedAt: Date(timeIntervalSince1970: 1))
        let text = try json(stored)
        #expect(text.contains(#""name":"Tea""#))
        #expect(text.contains(#""created_at":"1970-01-01T00:00:00.000Z""#))
        #expect(try TrendyJSON.decoder().decode(Timestamped<EventType>.self, from: Data(text.utf8)) == stored)
    }

    @Test func changesDecodeTheirPayloadByEntityType() throws {
        let type = EventType(id: ids.next(), name: "Tea")
        let stored = Timestamped(
            type, createdAt: Date(timeIntervalSince1970: 0), updatedAt: Date(timeIntervalSince1970: 0))
        let change = Change(
            cursor: 7, entityType: .eventType, entityId: type.id.description, operation: .create,
            data: .eventType(stored), createdAt: Date(timeIntervalSince1970: 5))
        let decoded = try TrendyJSON.decoder().decode(Change.self, from: Data(try json(change).utf8))
        #expect(decoded == change)
        let deletion =
            #"{"cursor":8,"entity_type":"event","entity_id":"x","operation":"delete","data":null,"created_at":"2026-01-01T00:00:00Z"}"#
        #expect(try TrendyJSON.decoder().decode(Change.self, from: Data(deletion.utf8)).data == nil)
        let unknown =
            #"{"cursor":8,"entity_type":"planet","entity_id":"x","operation":"delete","created_at":"2026-01-01T00:00:00Z"}"#
        #expect(throws: DecodingError.self) { try TrendyJSON.decoder().decode(Change.self, from: Data(unknown.utf8)) }
    }

    @Test(
        arguments: [
            (
                #"{"code":400,"error_code":"invalid_credentials","msg":"Invalid login credentials"}"#,
                "invalid_credentials", "Invalid login credentials", 400
            ),
            (
                #"{"code":"refresh_token_already_used","message":"Already Used"}"#, "refresh_token_already_used",
                "Already Used", nil
            ),
            (
                #"{"error":"invalid_grant","error_description":"Invalid Refresh Token"}"#, "invalid_grant",
                "Invalid Refresh Token", nil
            ),
        ] as [(String, String, String, Int?)])
    func goTrueErrorsDecodeInEveryShape(body: String, code: String, message: String, http: Int?) throws {
        let e = try JSONDecoder().decode(GoTrueErrorBody.self, from: Data(body.utf8))
        #expect(e.errorCode == code)
        #expect(e.message == message)
        #expect(e.httpCode == http)
    }

    @Test func statusesMapToTypedErrors() {
        let p = APIProblem(
            status: 422, code: "validation_failed", title: "t", errors: [FieldIssue(field: "radius", reason: "r")])
        guard case .validation(let issues, _) = TrendyAPIError.from(status: 422, problem: p, retryAfter: nil) else {
            Issue.record("expected validation")
            return
        }
        #expect(issues.map(\.field) == ["radius"])
        let limited = TrendyAPIError.from(status: 429, problem: nil, retryAfter: 3)
        guard case .rateLimited(let after, _) = limited else {
            Issue.record("expected 429")
            return
        }
        #expect(after == 3)
        #expect(limited.isTransient)
        #expect(TrendyAPIError.from(status: 503, problem: nil, retryAfter: nil).isTransient)
        #expect(!TrendyAPIError.from(status: 404, problem: nil, retryAfter: nil).isTransient)
        let reused = APIProblem(status: 422, code: ProblemCode.idempotencyKeyReused, title: "t")
        guard case .conflict = TrendyAPIError.from(status: 422, problem: reused, retryAfter: nil) else {
            Issue.record("expected conflict")
            return
        }
        guard case .unauthorized = TrendyAPIError.from(status: 401, problem: nil, retryAfter: nil) else {
            Issue.record("expected unauthorized")
            return
        }
    }

    @Test func onboardingUpdatesAreStickyAndPartial() {
        let now = Date(timeIntervalSince1970: 100)
        var s = OnboardingUpdate(currentStep: .permissions).apply(to: .initial, now: now)
        #expect(s.currentStep == .permissions)
        #expect(!s.completed)
        s = OnboardingUpdate(completed: true).apply(to: s, now: now)
        #expect(s.completed && s.completedAt == now && s.currentStep == .finish)
        let later = OnboardingUpdate(completed: true).apply(to: s, now: Date(timeIntervalSince1970: 200))
        #expect(later.completedAt == now)
    }
}

struct FastReadTests {
    let ids = UUIDv7Generator()

    @Test func changePagesReadFastMatchTheDecoder() throws {
        let type = EventType(id: ids.next(), name: "Tea", color: "#123456", icon: "cup")
        let event = Event(
            id: ids.next(), eventTypeId: type.id, timestamp: Date(timeIntervalSince1970: 1_800_000_000.5),
            endDate: Date(timeIntervalSince1970: 1_800_000_100), notes: "a \"note\"", isAllDay: true,
            sourceType: .geofence,
            externalId: "x", geofenceId: ids.next(), location: .init(latitude: 1.5, longitude: -2), locationName: "Home"
        )
        let t0 = Date(timeIntervalSince1970: 1_800_000_200)
        let page = ChangesPage(
            changes: [
                Change(
                    cursor: 1, entityType: .eventType, entityId: type.id.description, operation: .create,
                    data: .eventType(Timestamped(type, createdAt: t0, updatedAt: t0)), createdAt: t0),
                Change(
                    cursor: 2, entityType: .event, entityId: event.id.description, operation: .update,
                    data: .event(Timestamped(event, createdAt: t0, updatedAt: t0)), createdAt: t0),
                Change(cursor: 5, entityType: .event, entityId: "gone", operation: .delete, data: nil, createdAt: t0),
            ], nextCursor: 5, hasMore: true)
        let data = try TrendyJSON.encoder().encode(page)
        let fast = try #require(ChangesPage.fastRead(data))
        #expect(fast == (try TrendyJSON.decoder().decode(ChangesPage.self, from: data)))
        #expect(fast == page)
    }

    @Test func eventListPagesReadFastMatchTheDecoder() throws {
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        let events = (0..<3).map {
            Timestamped(
                Event(
                    id: ids.next(), eventTypeId: ids.next(), timestamp: t0.addingTimeInterval(Double($0)),
                    notes: "n\($0)"),
                createdAt: t0, updatedAt: t0)
        }
        for next in ["1800000000000_\(events[0].value.id)", nil] {
            let page = ListPage(items: events, limit: 3, offset: 6, hasMore: next != nil, next: next)
            let data = try TrendyJSON.encoder().encode(page)
            #expect(ListPage.fastRead(data) == page)
            #expect(try TrendyJSON.decoder().decode(ListPage<Timestamped<Event>>.self, from: data) == page)
        }
        // Each item's text is kept exactly as it came (whitespace around it left out).
        let texts = try events.map { String(decoding: try TrendyJSON.encoder().encode($0), as: UTF8.self) }
        let spaced = #"{"items": [ "# + texts.joined(separator: " ,\n ") + #" ],"limit":3,"offset":0,"has_more":false}"#
        let read = try #require(ListPage.fastRead(Data(spaced.utf8)))
        #expect(read.items == events)
        #expect(read.itemsJSON == texts)
        let nullNext = #"{"items":[],"limit":1,"offset":0,"has_more":false,"next":null}"#
        #expect(ListPage.fastRead(Data(nullNext.utf8)) == ListPage(items: [], limit: 1, offset: 0, hasMore: false))
        #expect(ListPage.fastRead(Data(#"{"items":[],"limit":1,"offset":0,"has_more":false,"next":7}"#.utf8)) == nil)
        #expect(ListPage.fastRead(Data(#"{"items":[{"id":"x"}],"limit":1,"offset":0,"has_more":false}"#.utf8)) == nil)
    }

    @Test func unusualPagesAreLeftToTheDecoder() throws {
        let withProperties = Event(
            id: ids.next(), eventTypeId: ids.next(), timestamp: Date(), properties: ["a": .number(1)])
        let t0 = Date(timeIntervalSince1970: 0)
        let page = ChangesPage(
            changes: [
                Change(
                    cursor: 1, entityType: .event, entityId: "x", operation: .create,
                    data: .event(Timestamped(withProperties, createdAt: t0, updatedAt: t0)), createdAt: t0)
            ],
            nextCursor: 1, hasMore: false)
        #expect(ChangesPage.fastRead(try TrendyJSON.encoder().encode(page)) == nil)
        #expect(ChangesPage.fastRead(Data("{nope".utf8)) == nil)
        #expect(ChangesPage.fastRead(Data(#"{"changes":[{"cursor":1}],"next_cursor":1,"has_more":false}"#.utf8)) == nil)
    }
}

struct BatchResponseWireTests {
    @Test func handWrittenResponseRoundTrips() throws {
        let ok = EventBatchResponse(results: [
            EventBatchItemResult(index: 0, id: "0190b7e4-8f1a-7c2d-9e3f-4a5b6c7d8e9f", status: .created),
            EventBatchItemResult(index: 1, id: "0190b7e4-8f1a-7c2d-9e3f-4a5b6c7d8e90", status: .existing),
        ])
        let data = ok.wireJSON()
        #expect(try TrendyJSON.decoder().decode(EventBatchResponse.self, from: data) == ok)
        #expect(EventBatchResponse.fastRead(data) == ok)
        let mixed = EventBatchResponse(results: [
            EventBatchItemResult(
                index: 0, id: nil, status: .failed,
                error: APIProblem(status: 400, code: "malformed_request", title: "t")),
            EventBatchItemResult(index: 1, id: "0190b7e4-8f1a-7c2d-9e3f-4a5b6c7d8e9f", status: .created),
        ])
        let mixedData = mixed.wireJSON()
        #expect(try TrendyJSON.decoder().decode(EventBatchResponse.self, from: mixedData) == mixed)
        #expect(EventBatchResponse.fastRead(mixedData) == nil)
    }
}
