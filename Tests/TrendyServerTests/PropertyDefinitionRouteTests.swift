import Foundation
import NIOHTTP1
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyModels
import TrendyServerTestSupport
import TrendyTestSupport

/// Property definitions on the server (issue 33): Trendy's routes, the key rule, the values an
/// event may hold, the feed and the cascade of a type's delete — on whichever store the run uses.
@Suite(.timeLimit(.minutes(5)))
struct PropertyDefinitionRouteTests {
    func definition(
        _ h: ServerHarness, _ type: EventType, _ key: String, _ kind: PropertyKind, options: [String]? = nil
    )
        -> PropertyDefinition
    {
        PropertyDefinition(id: h.ids.next(), eventTypeId: type.id, key: key, propertyType: kind, options: options)
    }

    @Test func definitionsAreMadeListedChangedAndDeleted() async throws {
        try await ServerHarness.with { h in
            let (api, session) = try await h.newUserClient()
            let coffee = try await h.makeType(api)
            var shots = definition(h, coffee, "shots", .number)
            shots.defaultValue = .number(2)
            shots.displayOrder = 1
            let created = try await api.createPropertyDefinition(shots, idempotencyKey: nil)
            #expect(created.value == shots)
            let milk = definition(h, coffee, "milk", .select, options: ["oat", "whole", "none"])
            _ = try await api.createPropertyDefinition(milk, idempotencyKey: nil)
            // A retry of the same create answers the stored definition.
            #expect(try await api.createPropertyDefinition(shots, idempotencyKey: nil).value == shots)
            #expect(try await api.propertyDefinitions(ofType: coffee.id).map(\.value.key) == ["milk", "shots"])
            #expect(try await api.listPropertyDefinitions().count == 2)
            var update = PropertyDefinitionUpdate()
            update.label = .set("Shots of espresso")
            update.defaultValue = .set(.number(3))
            let changed = try await api.updatePropertyDefinition(id: shots.id, update, idempotencyKey: nil)
            #expect(changed.value.label == "Shots of espresso")
            #expect(changed.value.defaultValue == .number(3))
            #expect(changed.value.key == "shots")
            // Trendy's PUT is the same partial update.
            let put = try await h.raw(
                .PUT, "/api/v1/property-definitions/\(milk.id)", body: #"{"options": ["oat", "whole", "soy"]}"#,
                headers: [("Authorization", "Bearer \(session.accessToken)")])
            #expect(put.status == 200)
            #expect(try await api.propertyDefinition(id: milk.id).value.options == ["oat", "whole", "soy"])
            try await api.deletePropertyDefinition(id: milk.id)
            #expect(try await api.propertyDefinitions(ofType: coffee.id).map(\.value.key) == ["shots"])
            let gone = await apiError { () throws(TrendyAPIError) in _ = try await api.propertyDefinition(id: milk.id) }
            #expect(gone?.problem?.status == 404)
        }
    }

    @Test func aKeyIsOncePerTypeInAnyCaseAndNeverChanges() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let coffee = try await h.makeType(api)
            let run = try await h.makeType(api, "Run")
            let shots = definition(h, coffee, "shots", .number)
            _ = try await api.createPropertyDefinition(shots, idempotencyKey: nil)
            let twin = await apiError { () throws(TrendyAPIError) in
                _ = try await api.createPropertyDefinition(definition(h, coffee, "Shots", .text), idempotencyKey: nil)
            }
            #expect(twin?.problem?.status == 409)
            // Another type may have the same key.
            _ = try await api.createPropertyDefinition(definition(h, run, "shots", .number), idempotencyKey: nil)
            var rename = PropertyDefinitionUpdate()
            rename.key = .set("espresso_shots")
            let renamed = await apiError { () throws(TrendyAPIError) in
                _ = try await api.updatePropertyDefinition(id: shots.id, rename, idempotencyKey: nil)
            }
            guard case .validation(let issues, _) = renamed else {
                Issue.record("expected 422, got \(String(describing: renamed))")
                return
            }
            #expect(issues.map(\.field) == ["key"])
            // The same key is accepted (a client sending every field).
            rename.key = .set("shots")
            _ = try await api.updatePropertyDefinition(id: shots.id, rename, idempotencyKey: nil)
        }
    }

    @Test func badDefinitionsAreRefusedWithTheirField() async throws {
        try await ServerHarness.with { h in
            let (api, session) = try await h.newUserClient()
            let coffee = try await h.makeType(api)
            let auth = [("Authorization", "Bearer \(session.accessToken)")]
            let path = "/api/v1/event-types/\(coffee.id)/properties"
            let cases: [(String, Int, String)] = [
                (#"{"key": "milk", "property_type": "select"}"#, 422, "options"),
                (#"{"key": "shots", "property_type": "number", "options": ["a"]}"#, 422, "options"),
                (#"{"key": "shots", "property_type": "number", "default_value": "two"}"#, 422, "default_value"),
                (
                    #"{"key": "milk", "property_type": "select", "options": ["oat"], "default_value": "soy"}"#, 422,
                    "default_value"
                ),
                (#"{"key": "2shots", "property_type": "number"}"#, 422, "key"),
                (#"{"key": "Notes", "property_type": "text"}"#, 422, "key"),
                (#"{"key": "shots", "property_type": "colour"}"#, 400, ""),
                (#"{"key": "shots", "property_type": "number", "default_value": {"a": 1}}"#, 400, ""),
                (#"{"key": "link", "property_type": "url", "default_value": "ftp://x"}"#, 422, "default_value"),
                (#"{"key": "a", "property_type": "select", "options": ["Oat", "oat"]}"#, 422, "options"),
            ]
            for (body, status, field) in cases {
                let r = try await h.raw(.POST, path, body: body, headers: auth)
                #expect(r.status == status, "\(body): \(r.status)")
                if !field.isEmpty {
                    let fields = ((r.json["errors"] as? [[String: Any]]) ?? []).compactMap { $0["field"] as? String }
                    #expect(fields.contains(field), "\(body): \(r.json)")
                }
            }
            let unknownType = try await h.raw(
                .POST, "/api/v1/event-types/\(h.ids.next())/properties",
                body: #"{"key": "a", "property_type": "text"}"#,
                headers: auth)
            #expect(unknownType.status == 404)
            #expect(try await api.propertyDefinitions(ofType: coffee.id).isEmpty)
        }
    }

    @Test func anEventsValuesAreCheckedAgainstItsTypesDefinitions() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let coffee = try await h.makeType(api)
            let shots = definition(h, coffee, "shots", .number)
            _ = try await api.createPropertyDefinition(shots, idempotencyKey: nil)
            _ = try await api.createPropertyDefinition(
                definition(h, coffee, "milk", .select, options: ["oat", "whole"]), idempotencyKey: nil)
            var wrong = h.event(coffee)
            wrong.properties = ["shots": .text("two")]
            let refused = await apiError { () throws(TrendyAPIError) in
                _ = try await api.createEvent(wrong, idempotencyKey: nil)
            }
            guard case .validation(let issues, _) = refused else {
                Issue.record("expected 422, got \(String(describing: refused))")
                return
            }
            #expect(issues.map(\.field) == ["properties.shots"])
            #expect(issues.first?.reason.contains("a number") == true)
            var notAnOption = h.event(coffee, at: h.clock.now.addingTimeInterval(-120))
            notAnOption.properties = ["milk": .select("soy")]
            let batch = try await api.createEvents([wrong, notAnOption], idempotencyKey: nil)
            #expect(batch.results.map(\.status) == [.failed, .failed])
            // A key no definition has is kept (another device's or an older client's value).
            var good = h.event(coffee, at: h.clock.now.addingTimeInterval(-180))
            good.properties = ["shots": .number(2), "milk": .select("oat"), "barista": .text("Sam")]
            _ = try await api.createEvent(good, idempotencyKey: nil)
            #expect(try await api.event(id: good.id).value.properties == good.properties)
            var badEdit = EventUpdate()
            badEdit.properties = .set(["shots": .boolean(true)])
            let editRefused = await apiError { () throws(TrendyAPIError) in
                _ = try await api.updateEvent(id: good.id, badEdit, idempotencyKey: nil)
            }
            #expect(editRefused?.problem?.status == 422)
            // The definition changes kind: the old value stays, and an edit of the note still goes.
            var kind = PropertyDefinitionUpdate()
            kind.propertyType = .set(.text)
            _ = try await api.updatePropertyDefinition(id: shots.id, kind, idempotencyKey: nil)
            var note = EventUpdate()
            note.notes = .set("with Sam")
            let noted = try await api.updateEvent(id: good.id, note, idempotencyKey: nil)
            #expect(noted.value.properties["shots"] == .number(2))
            // Deleting the definition keeps every value under its key.
            try await api.deletePropertyDefinition(id: shots.id)
            #expect(try await api.event(id: good.id).value.properties["shots"] == .number(2))
        }
    }

    @Test func theFeedCarriesDefinitionsAndATypesDeleteTakesThem() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let coffee = try await h.makeType(api)
            let shots = definition(h, coffee, "shots", .number)
            _ = try await api.createPropertyDefinition(shots, idempotencyKey: nil)
            var update = PropertyDefinitionUpdate()
            update.label = .set("Shots")
            _ = try await api.updatePropertyDefinition(id: shots.id, update, idempotencyKey: nil)
            try await api.deleteEventType(id: coffee.id)
            let feed = try await api.changes(since: 0, limit: 100).changes.filter {
                $0.entityType == .propertyDefinition
            }
            #expect(feed.map(\.operation) == [.create, .update, .delete])
            if case .propertyDefinition(let d)? = feed[1].data { #expect(d.value.label == "Shots") }
            #expect(try await api.listPropertyDefinitions().isEmpty)
            // A retried create of the deleted definition never brings it back: 410.
            let retried = await #expect(throws: TrendyAPIError.self) {
                try await api.createPropertyDefinition(shots, idempotencyKey: nil)
            }
            if case .server(status: let status, _) = retried {
                #expect(status == 410)
            } else {
                Issue.record("\(String(describing: retried))")
            }
            #expect(try await api.listPropertyDefinitions().isEmpty)
        }
    }

    /// Found by the outside attack: keys in two cases or named like a column were stored and lost
    /// on the way back through a file; 55 definitions with defaults made a type unloggable.
    @Test func keysAreOnceInAnyCaseNotColumnsAndATypeHasAtMostFiftyProperties() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let coffee = try await h.makeType(api)
            for properties in [["Dist": PropertyValue.number(5), "dist": .number(6)], ["notes": .text("x")]] {
                var event = h.event(coffee)
                event.properties = properties
                let refused = await apiError { () throws(TrendyAPIError) in
                    _ = try await api.createEvent(event, idempotencyKey: nil)
                }
                #expect(refused?.problem?.status == 422, "\(properties)")
            }
            for i in 0..<PropertyDefinition.maximumPerType {
                _ = try await api.createPropertyDefinition(definition(h, coffee, "p\(i)", .number), idempotencyKey: nil)
            }
            let more = await apiError { () throws(TrendyAPIError) in
                _ = try await api.createPropertyDefinition(
                    definition(h, coffee, "one_more", .number), idempotencyKey: nil)
            }
            #expect(more?.problem?.status == 422)
        }
    }

    /// `GET /events/export` (Trendy's): every event, newest first, between two dates (both
    /// included, both or neither) and of some types; bad dates and lists are 400.
    @Test func theExportStreamsEveryEventAndFiltersByDatesAndTypes() async throws {
        try await ServerHarness.with { h in
            let (api, session) = try await h.newUserClient()
            let coffee = try await h.makeType(api)
            let tea = try await h.makeType(api, "Tea")
            let day = 86_400.0
            let base = Date(timeIntervalSince1970: 1_800_000_000)
            var events: [Event] = []
            for i in 0..<2_500 {
                events.append(h.event(i % 2 == 0 ? coffee : tea, at: base.addingTimeInterval(Double(i) * day / 100)))
            }
            for chunk in stride(from: 0, to: events.count, by: 500) {
                _ = try await api.createEvents(Array(events[chunk..<chunk + 500]), idempotencyKey: nil)
            }
            let auth = [("Authorization", "Bearer \(session.accessToken)")]
            func export(_ query: String) async throws -> (Int, [[String: Any]]) {
                let r = try await h.raw(.GET, "/api/v1/events/export\(query)", headers: auth)
                let items = (try? JSONSerialization.jsonObject(with: r.body)) as? [[String: Any]] ?? []
                return (r.status, items)
            }
            let (status, all) = try await export("")
            #expect(status == 200 && all.count == 2_500, "three pages streamed as one array")
            let times = all.compactMap { $0["timestamp"] as? String }
            #expect(times == times.sorted(by: >), "newest first")
            let from = ISO8601.format(base.addingTimeInterval(day))
            let to = ISO8601.format(base.addingTimeInterval(2 * day))
            let (_, ranged) = try await export("?start_date=\(from)&end_date=\(to)")
            #expect(ranged.count == 101, "both ends included")
            let (_, teas) = try await export("?start_date=\(from)&end_date=\(to)&event_type_ids=\(tea.id)")
            #expect(teas.count == 50 && teas.allSatisfy { $0["event_type_id"] as? String == tea.id.description })
            let (_, both) = try await export("?event_type_ids=\(tea.id),\(coffee.id)")
            #expect(both.count == 2_500)
            for bad in [
                "?start_date=\(from)", "?start_date=yesterday&end_date=\(to)", "?start_date=\(to)&end_date=\(from)",
                "?event_type_ids=x", "?event_type_ids=\(tea.id),,\(coffee.id)",
            ] {
                #expect(try await export(bad).0 == 400, "\(bad)")
            }
            let stranger = try await h.newUserClient()
            let theirs = try await h.raw(
                .GET, "/api/v1/events/export", headers: [("Authorization", "Bearer \(stranger.session.accessToken)")])
            #expect(String(decoding: theirs.body, as: UTF8.self) == "[]", "another user's export is their own")
        }
    }
}
