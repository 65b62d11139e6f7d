import Foundation
import NIOHTTP1
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyModels
import TrendyServerTestSupport
import TrendyTestSupport

@Suite(.timeLimit(.minutes(5)))
struct BatchAndFeedTests {
    @Test func batchReportsEachItem() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let existing = h.event(type, at: h.clock.now.addingTimeInterval(-500))
            _ = try await api.createEvent(existing, idempotencyKey: nil)
            var duplicateByKey = h.event(type, at: existing.timestamp)
            duplicateByKey.notes = "same type and time"
            let fresh = (0..<3).map { h.event(type, at: h.clock.now.addingTimeInterval(Double(-100 - $0))) }
            let orphan = Event(id: h.ids.next(), eventTypeId: h.ids.next(), timestamp: h.clock.now)
            let response = try await api.createEvents(fresh + [existing, duplicateByKey, orphan], idempotencyKey: nil)
            #expect(response.created == 3)
            #expect(response.existing == 2)
            #expect(response.failed == 1)
            #expect(response.results.map(\.index) == Array(0..<6))
            #expect(response.results[4].id == existing.id.description)
            #expect(response.results[5].error?.errors?.map(\.field) == ["event_type_id"])
            #expect(try await api.syncSummary().eventCount == 4)
        }
    }

    @Test func batchStatusCodes() async throws {
        try await ServerHarness.with { h in
            let (api, session) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let auth = [("Authorization", "Bearer \(session.accessToken)")]
            func post(_ events: [String]) async throws -> ServerHarness.Raw {
                try await h.raw(
                    .POST, "/api/v1/events/batch", body: #"{"events":[\#(events.joined(separator: ","))]}"#,
                    headers: auth)
            }
            func json(_ e: Event) throws -> String {
                String(decoding: try TrendyJSON.encoder().encode(e), as: UTF8.self)
            }
            let all = try await post([
                try json(h.event(type)), try json(h.event(type, at: h.clock.now.addingTimeInterval(-5))),
            ])
            #expect(all.status == 201)
            let partial = try await post([
                try json(h.event(type, at: h.clock.now.addingTimeInterval(-9))), #"{"id":"bad"}"#,
            ])
            #expect(partial.status == 207)
            let results = partial.json["results"] as? [[String: Any]]
            #expect(results?[1]["status"] as? String == "failed")
            #expect(((results?[1]["error"] as? [String: Any])?["code"] as? String) == "malformed_request")
            let none = try await post([#"{"id":"bad"}"#])
            #expect(none.status == 400)
            #expect((none.json["failed"] as? Int) == 1)
            let empty = try await post([])
            #expect(empty.status == 422)
            let tooMany = try await post(Array(repeating: try json(h.event(type)), count: 501))
            #expect(tooMany.status == 422)
            // A whole batch re-posted (a retry) creates nothing new.
            let events = (0..<3).map { h.event(type, at: h.clock.now.addingTimeInterval(Double(-300 - $0))) }
            _ = try await api.createEvents(events, idempotencyKey: nil)
            let cursor = try await api.latestCursor().cursor
            let retry = try await api.createEvents(events, idempotencyKey: nil)
            #expect(retry.existing == 3)
            #expect(try await api.latestCursor().cursor == cursor)
        }
    }

    @Test func healthkitEventsDeduplicateOnTheSampleId() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let type = try await h.makeType(api, "Steps")
            let a = h.event(type, at: h.clock.now.addingTimeInterval(-50), source: .healthkit, externalId: "sample-1")
            let b = h.event(type, at: h.clock.now.addingTimeInterval(-40), source: .healthkit, externalId: "sample-1")
            let c = h.event(type, at: h.clock.now.addingTimeInterval(-50), source: .healthkit, externalId: "sample-2")
            let r = try await api.createEvents([a, b, c], idempotencyKey: nil)
            #expect(r.results.map(\.status) == [.created, .existing, .created])
            #expect(r.results[1].id == a.id.description)
        }
    }

    /// The feed body is written byte by byte from stored rows: it must stay strict JSON that
    /// `JSONDecoder` reads exactly as the client's fast reader does, for every kind of change
    /// and for text that needs escaping.
    @Test func changeFeedBodyIsStrictJSONForEveryKindOfChange() async throws {
        try await ServerHarness.with { h in
            let (api, session) = try await h.newUserClient()
            let type = try await api.createEventType(
                EventTypeCreate(id: h.ids.next(), name: #"Tea "green" \ 🍵"#), idempotencyKey: nil
            ).value
            var event = h.event(type)
            event.notes = "line\nbreak\ttab \r \"quoted\""
            _ = try await api.createEvent(event, idempotencyKey: nil)
            let fence = Geofence(
                id: h.ids.next(), name: "Home \"base\"", center: Coordinate(latitude: 52.5, longitude: 13.4),
                radius: 120)
            _ = try await api.createGeofence(fence, idempotencyKey: nil)
            _ = try await api.updateOnboarding(OnboardingUpdate(currentStep: .auth), idempotencyKey: nil)
            try await api.deleteEvent(id: event.id)
            let r = try await h.raw(
                .GET, "/api/v1/changes?since=0&limit=100", headers: [("Authorization", "Bearer \(session.accessToken)")]
            )
            #expect(r.status == 200)
            let decoded = try TrendyJSON.decoder().decode(ChangesPage.self, from: r.body)
            #expect(decoded.changes.map(\.entityType) == [.eventType, .event, .geofence, .onboarding, .event])
            #expect(decoded.changes.last?.data == nil)
            if case .event(let stored) = decoded.changes[1].data {
                #expect(stored.value.notes == event.notes)
            } else {
                Issue.record("no event data")
            }
            #expect(try await api.changes(since: 0, limit: 100) == decoded)
            // Without the geofence and onboarding changes the fast reader takes the page itself.
            let events = try #require(
                ChangesPage.fastRead(
                    try await h.raw(
                        .GET, "/api/v1/changes?since=0&limit=2",
                        headers: [("Authorization", "Bearer \(session.accessToken)")]
                    ).body))
            #expect(events.changes == Array(decoded.changes.prefix(2)))
        }
    }

    @Test func changeFeedIsOrderedPagedAndScoped() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let (other, _) = try await h.newUserClient()
            #expect(try await api.latestCursor().cursor == 0)
            let type = try await h.makeType(api)
            _ = try await h.makeType(other, "Not yours")
            let events = (0..<5).map { h.event(type, at: h.clock.now.addingTimeInterval(Double(-100 + $0))) }
            _ = try await api.createEvents(events, idempotencyKey: nil)
            var update = EventUpdate()
            update.notes = .set("edited")
            _ = try await api.updateEvent(id: events[0].id, update, idempotencyKey: nil)
            try await api.deleteEvent(id: events[1].id)
            var all: [Change] = []
            var cursor: Int64 = 0
            var pages = 0
            while true {
                let page = try await api.changes(since: cursor, limit: 3)
                all += page.changes
                #expect(page.nextCursor >= cursor)
                cursor = page.nextCursor
                pages += 1
                if !page.hasMore { break }
            }
            #expect(pages == 3)
            #expect(all.count == 8)
            #expect(all.map(\.cursor) == all.map(\.cursor).sorted())
            #expect(Set(all.map(\.cursor)).count == all.count)
            #expect(all.first?.entityType == .eventType)
            #expect(all[6].operation == .update)
            if case .event(let stored) = all[6].data {
                #expect(stored.value.notes == "edited")
            } else {
                Issue.record("no data")
            }
            #expect(all[7].operation == .delete)
            #expect(all[7].data == nil)
            #expect(try await api.latestCursor().cursor == cursor)
            let empty = try await api.changes(since: cursor, limit: 100)
            #expect(empty.changes.isEmpty)
            #expect(empty.nextCursor == cursor)
            #expect(!empty.hasMore)
            let summary = try await api.syncSummary()
            #expect(summary.eventCount == 4)
            #expect(summary.eventTypeCount == 1)
            #expect(summary.latestCursor == cursor)
            #expect(summary.lastChangeAt != nil)
            let bad = await apiError { () throws(TrendyAPIError) in
                _ = try await api.changes(since: 0, limit: APIPaths.maxChangesLimit + 1)
            }
            #expect(bad?.problem?.errors?.first?.field == "limit")
        }
    }
}
