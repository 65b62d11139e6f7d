import Foundation
import NIOHTTP1
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyModels
import TrendyServerTestSupport
import TrendyTestSupport

@Suite(.timeLimit(.minutes(5)))
struct EntityRouteTests {
    @Test func eventTypeCrud() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let created = try await api.createEventType(
                EventTypeCreate(name: "Coffee", color: "#112233"), idempotencyKey: nil)
            #expect(created.value.name == "Coffee")
            #expect(created.value.icon == "circle")
            #expect(try await api.eventType(id: created.value.id) == created)
            let renamed = try await api.updateEventType(
                id: created.value.id, EventTypeUpdate(name: "Espresso"), idempotencyKey: nil)
            #expect(renamed.value.name == "Espresso")
            #expect(renamed.value.color == "#112233")
            #expect(try await api.listEventTypes().map(\.value.name) == ["Espresso"])
            try await api.deleteEventType(id: created.value.id)
            let gone = await apiError { () throws(TrendyAPIError) in _ = try await api.eventType(id: created.value.id) }
            #expect(gone?.problem?.status == 404)
        }
    }

    @Test func duplicateTypeNamesConflict() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            _ = try await h.makeType(api, "Run")
            let error = await apiError { () throws(TrendyAPIError) in
                _ = try await api.createEventType(EventTypeCreate(name: "run"), idempotencyKey: nil)
            }
            guard case .conflict(let p) = error else {
                Issue.record("expected conflict, got \(String(describing: error))")
                return
            }
            #expect(p.status == 409)
            let invalid = await apiError { () throws(TrendyAPIError) in
                _ = try await api.createEventType(EventTypeCreate(name: " ", color: "red"), idempotencyKey: nil)
            }
            guard case .validation(let issues, _) = invalid else {
                Issue.record("expected validation")
                return
            }
            #expect(issues.map(\.field) == ["name", "color"])
        }
    }

    /// Type names are unique ignoring ASCII case only (SQLite's `NOCASE`), on every store and in
    /// either order: PostgreSQL once folded `É` to `é` in the name being checked but not in the
    /// stored one, so `émile` then `Émile` was 409 while `Ölfass` then `ölfass` was 201 (found by
    /// an outside tester comparing the stores).
    @Test func typeNamesIgnoreASCIICaseOnlyInEitherOrder() async throws {
        try await ServerHarness.with { h in
            let (api, session) = try await h.newUserClient()
            let auth = [("Authorization", "Bearer \(session.accessToken)")]
            for (first, second) in [("émile", "Émile"), ("Ölfass", "ölfass"), ("izmit", "İzmit"), ("İzmir", "izmir")] {
                for name in [first, second] {
                    let created = try await h.raw(
                        .POST, "/api/v1/event-types", body: #"{"name":"\#(name)"}"#, headers: auth)
                    #expect(created.status == 201, "\(name) after \(first): \(created.status)")
                }
            }
            // ASCII letters do fold: ÉMILE is Émile, éMILE is émile.
            for name in ["ÉMILE", "éMILE"] {
                let taken = try await h.raw(.POST, "/api/v1/event-types", body: #"{"name":"\#(name)"}"#, headers: auth)
                #expect(taken.status == 409, "\(name)")
            }
            // A rename is checked the same way.
            _ = try await h.makeType(api, "ärger")
            let other = try await h.makeType(api, "Other")
            let renamed = try await api.updateEventType(
                id: other.id, EventTypeUpdate(name: "Ärger"), idempotencyKey: nil)
            #expect(renamed.value.name == "Ärger")
        }
    }

    @Test func deletingATypeDeletesItsEventsAndClearsGeofences() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let keep = try await h.makeType(api, "Other")
            let e1 = try await api.createEvent(h.event(type), idempotencyKey: nil).event
            let e2 = try await api.createEvent(h.event(keep), idempotencyKey: nil).event
            let fence = Geofence(
                id: h.ids.next(), name: "Cafe", center: .init(latitude: 1, longitude: 1), radius: 100,
                entryEventTypeId: type.id)
            _ = try await api.createGeofence(fence, idempotencyKey: nil)
            let before = try await api.latestCursor().cursor
            try await api.deleteEventType(id: type.id)
            #expect(try await api.listEvents(limit: 50, offset: 0).items.map(\.value.id) == [e2.value.id])
            #expect(try await api.geofence(id: fence.id).value.entryEventTypeId == nil)
            let feed = try await api.changes(since: before, limit: 100).changes
            #expect(feed.map(\.entityType) == [.event, .geofence, .eventType])
            #expect(feed.map(\.operation) == [.delete, .update, .delete])
            #expect(feed.first?.entityId == e1.value.id.description)
        }
    }

    @Test func eventCreateValidatesAndDeduplicates() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let event = h.event(type)
            let first = try await api.createEvent(event, idempotencyKey: nil)
            #expect(first.created)
            #expect(first.event.value == event)
            let again = try await api.createEvent(event, idempotencyKey: nil)
            #expect(!again.created)
            #expect(again.event == first.event)
            // Same type and time, another id: the stored event comes back.
            var twin = event
            twin.id = h.ids.next()
            let dedup = try await api.createEvent(twin, idempotencyKey: nil)
            #expect(!dedup.created)
            #expect(dedup.event.value.id == event.id)
            // An id whose timestamp is an hour ahead is refused.
            let future = Event(
                id: UUIDv7Generator(now: { h.clock.now.addingTimeInterval(3_600) }).next(), eventTypeId: type.id,
                timestamp: h.clock.now)
            let error = await apiError { () throws(TrendyAPIError) in
                _ = try await api.createEvent(future, idempotencyKey: nil)
            }
            guard case .validation(let issues, _) = error else {
                Issue.record("expected validation")
                return
            }
            #expect(issues.map(\.field) == ["id"])
            let unknownType = Event(id: h.ids.next(), eventTypeId: h.ids.next(), timestamp: h.clock.now)
            let typeError = await apiError { () throws(TrendyAPIError) in
                _ = try await api.createEvent(unknownType, idempotencyKey: nil)
            }
            guard case .validation(let typeIssues, _) = typeError else {
                Issue.record("expected validation")
                return
            }
            #expect(typeIssues.map(\.field) == ["event_type_id"])
        }
    }

    @Test func nonV7IdsAreRejected() async throws {
        try await ServerHarness.with { h in
            let (api, session) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let body =
                #"{"id":"550e8400-e29b-41d4-a716-446655440000","event_type_id":"\#(type.id)","timestamp":"2027-01-15T08:00:00Z"}"#
            let r = try await h.raw(
                .POST, "/api/v1/events", body: body,
                headers: [("Authorization", "Bearer \(session.accessToken)"), ("Content-Type", "application/json")])
            #expect(r.status == 400)
            #expect(r.headers.first(name: "Content-Type") == "application/problem+json")
            #expect((r.json["detail"] as? String)?.contains("version 4") == true)
        }
    }

    @Test func updatesClearWithNullAndKeepWhatIsAbsent() async throws {
        try await ServerHarness.with { h in
            let (api, session) = try await h.newUserClient()
            let type = try await h.makeType(api)
            var event = h.event(type)
            event.notes = "first"
            event.locationName = "Home"
            _ = try await api.createEvent(event, idempotencyKey: nil)
            var update = EventUpdate()
            update.notes = .clear
            update.isAllDay = .set(true)
            let updated = try await api.updateEvent(id: event.id, update, idempotencyKey: nil)
            #expect(updated.value.notes == nil)
            #expect(updated.value.isAllDay)
            #expect(updated.value.locationName == "Home")
            #expect(updated.updatedAt >= updated.createdAt)
            let nullType = try await h.raw(
                .PATCH, "/api/v1/events/\(event.id)", body: #"{"event_type_id":null}"#,
                headers: [("Authorization", "Bearer \(session.accessToken)")])
            #expect(nullType.status == 422)
            var backwards = EventUpdate()
            backwards.endDate = .set(event.timestamp.addingTimeInterval(-10))
            let error = await apiError { () throws(TrendyAPIError) in
                _ = try await api.updateEvent(id: event.id, backwards, idempotencyKey: nil)
            }
            guard case .validation(let issues, _) = error else {
                Issue.record("expected validation")
                return
            }
            #expect(issues.map(\.field) == ["end_date"])
        }
    }

    @Test func listIsNewestFirstAndPaged() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let type = try await h.makeType(api)
            var ids: [UUIDv7] = []
            for i in 0..<5 {
                let e = h.event(type, at: h.clock.now.addingTimeInterval(Double(-1000 + i)))
                _ = try await api.createEvent(e, idempotencyKey: nil)
                ids.append(e.id)
            }
            let page1 = try await api.listEvents(limit: 2, offset: 0)
            let page3 = try await api.listEvents(limit: 2, offset: 4)
            #expect(page1.items.map(\.value.id) == [ids[4], ids[3]])
            #expect(page1.hasMore)
            #expect(page3.items.map(\.value.id) == [ids[0]])
            #expect(!page3.hasMore)
            let bad = await apiError { () throws(TrendyAPIError) in _ = try await api.listEvents(limit: 0, offset: 0) }
            #expect(bad?.problem?.status == 422)
            try await api.deleteEvent(id: ids[0])
            let again = await apiError { () throws(TrendyAPIError) in try await api.deleteEvent(id: ids[0]) }
            #expect(again?.problem?.status == 404)
        }
    }

    @Test func keysetPagesListEveryEventOnceWhileOthersAreRemoved() async throws {
        try await ServerHarness.with { h in
            let (api, session) = try await h.newUserClient()
            let (coffee, tea) = (try await h.makeType(api), try await h.makeType(api, "Tea"))
            // Seven events; two pairs share a timestamp (the id orders them).
            let times = [0, 1, 1, 2, 3, 3, 4].map { h.clock.now.addingTimeInterval(Double(-1000 + $0)) }
            var events: [Event] = []
            for (i, time) in times.enumerated() {
                let e = h.event(i.isMultiple(of: 2) ? coffee : tea, at: time)
                _ = try await api.createEvent(e, idempotencyKey: nil)
                events.append(e)
            }
            let newestFirst = events.sorted { ($0.timestamp, $0.id.description) > ($1.timestamp, $1.id.description) }
            let page1 = try await api.listEvents(limit: 3, after: nil)
            #expect(page1.items.map(\.value.id) == newestFirst.prefix(3).map(\.id))
            #expect(page1.hasMore)
            let token = try #require(page1.next)
            // Offset pages say where they end too.
            #expect(try await api.listEvents(limit: 3, offset: 0).next == token)
            // An event of the first page is removed: the next page still starts right after it.
            try await api.deleteEvent(id: newestFirst[0].id)
            let page2 = try await api.listEvents(limit: 3, after: token)
            #expect(page2.items.map(\.value.id) == newestFirst[3..<6].map(\.id))
            let token2 = try #require(page2.next)
            let page3 = try await api.listEvents(limit: 3, after: token2)
            #expect(page3.items.map(\.value.id) == [newestFirst[6].id])
            #expect(!page3.hasMore)
            #expect(page3.next == nil)

            let auth = [("Authorization", "Bearer \(session.accessToken)")]
            for query in [
                "after=garbage", "after=12_", "after=x_\(events[0].id)", "after=1_ABC",
            ] {
                let r = try await h.raw(.GET, "/api/v1/events?\(query)", headers: auth)
                #expect(r.status == 422, "\(query)")
            }
        }
    }

    @Test func geofencesValidateFilterAndUpdate() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let home = Geofence(id: h.ids.next(), name: "Home", center: .init(latitude: 52, longitude: 13), radius: 100)
            var gym = Geofence(
                id: h.ids.next(), name: "Gym", center: .init(latitude: 52.1, longitude: 13.1), radius: 200)
            gym.isActive = false
            _ = try await api.createGeofence(home, idempotencyKey: nil)
            _ = try await api.createGeofence(gym, idempotencyKey: nil)
            #expect(try await api.listGeofences(active: true).map(\.value.name) == ["Home"])
            #expect(try await api.listGeofences(active: nil).count == 2)
            let tiny = Geofence(id: h.ids.next(), name: "Tiny", center: .init(latitude: 95, longitude: 0), radius: 10)
            let error = await apiError { () throws(TrendyAPIError) in
                _ = try await api.createGeofence(tiny, idempotencyKey: nil)
            }
            guard case .validation(let issues, _) = error else {
                Issue.record("expected validation")
                return
            }
            #expect(issues.map(\.field) == ["latitude", "radius"])
            var update = GeofenceUpdate()
            update.radius = .set(500)
            update.isActive = .set(true)
            let updated = try await api.updateGeofence(id: gym.id, update, idempotencyKey: nil)
            #expect(updated.value.radius == 500)
            #expect(updated.value.name == "Gym")
            #expect(try await api.listGeofences(active: true).count == 2)
            try await api.deleteGeofence(id: home.id)
            #expect(try await api.listGeofences(active: nil).map(\.value.id) == [gym.id])
        }
    }

    @Test func onboardingDefaultsPatchesAndSoftResets() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let initial = try await api.onboardingStatus()
            #expect(initial.completed == false)
            #expect(initial.currentStep == .welcome)
            #expect(initial.locationStatus == .notRequested)
            let moved = try await api.updateOnboarding(
                OnboardingUpdate(currentStep: .permissions, locationStatus: .denied), idempotencyKey: nil)
            #expect(moved.currentStep == .permissions)
            #expect(moved.notificationsStatus == .notRequested)
            #expect(moved.locationStatus == .denied)
            let done = try await api.updateOnboarding(OnboardingUpdate(completed: true), idempotencyKey: nil)
            #expect(done.completed)
            #expect(done.completedAt != nil)
            #expect(done.locationStatus == .denied)
            #expect(try await api.onboardingStatus().completed)
            let reset = try await api.resetOnboarding()
            #expect(!reset.completed)
            #expect(reset.currentStep == .welcome)
        }
    }
}
