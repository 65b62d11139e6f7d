import Foundation
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyModels
import TrendyTestSupport

/// Two users, every route: nothing of one is visible to or changeable by the other.
@Suite(.timeLimit(.minutes(5)))
struct IsolationTests {
    @Test func noCrossUserReadOrWrite() async throws {
        try await ServerHarness.with { h in
            let (alice, _) = try await h.newUserClient()
            let (bob, _) = try await h.newUserClient()
            let type = try await h.makeType(alice)
            let event = try await alice.createEvent(h.event(type), idempotencyKey: nil).event.value
            let fence = Geofence(id: h.ids.next(), name: "A", center: .init(latitude: 0, longitude: 0), radius: 100)
            _ = try await alice.createGeofence(fence, idempotencyKey: nil)
            _ = try await alice.updateOnboarding(OnboardingUpdate(completed: true), idempotencyKey: nil)

            func expect404(_ body: () async throws(TrendyAPIError) -> Void, _ what: String) async {
                let error = await apiError(body)
                #expect(error?.problem?.status == 404, "\(what) leaked: \(String(describing: error))")
            }
            await expect404({ () throws(TrendyAPIError) in _ = try await bob.eventType(id: type.id) }, "get type")
            await expect404(
                { () throws(TrendyAPIError) in
                    _ = try await bob.updateEventType(id: type.id, EventTypeUpdate(name: "x"), idempotencyKey: nil)
                }, "update type")
            await expect404({ () throws(TrendyAPIError) in try await bob.deleteEventType(id: type.id) }, "delete type")
            await expect404({ () throws(TrendyAPIError) in _ = try await bob.event(id: event.id) }, "get event")
            await expect404(
                { () throws(TrendyAPIError) in
                    _ = try await bob.updateEvent(id: event.id, EventUpdate(), idempotencyKey: nil)
                }, "update event")
            await expect404({ () throws(TrendyAPIError) in try await bob.deleteEvent(id: event.id) }, "delete event")
            await expect404({ () throws(TrendyAPIError) in _ = try await bob.geofence(id: fence.id) }, "get geofence")
            await expect404(
                { () throws(TrendyAPIError) in
                    _ = try await bob.updateGeofence(id: fence.id, GeofenceUpdate(), idempotencyKey: nil)
                }, "update geofence")
            await expect404(
                { () throws(TrendyAPIError) in try await bob.deleteGeofence(id: fence.id) }, "delete geofence")

            #expect(try await bob.listEventTypes().isEmpty)
            #expect(try await bob.listEvents(limit: 50, offset: 0).items.isEmpty)
            #expect(try await bob.listGeofences(active: nil).isEmpty)
            #expect(try await bob.changes(since: 0, limit: 500).changes.isEmpty)
            #expect(try await bob.latestCursor().cursor == 0)
            #expect(try await bob.syncSummary().eventCount == 0)
            #expect(try await bob.onboardingStatus().completed == false)
            // Bob cannot attach events to Alice's type, nor take over her ids.
            let stolenType = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: h.clock.now)
            let typeError = await apiError { () throws(TrendyAPIError) in
                _ = try await bob.createEvent(stolenType, idempotencyKey: nil)
            }
            #expect(typeError?.problem?.errors?.first?.field == "event_type_id")
            let bobType = try await h.makeType(bob, "Bob's")
            var stolenId = event
            stolenId.eventTypeId = bobType.id
            let idError = await apiError { () throws(TrendyAPIError) in
                _ = try await bob.createEvent(stolenId, idempotencyKey: nil)
            }
            #expect(idError?.problem?.status == 409)
            // And Alice's data is untouched.
            #expect(try await alice.event(id: event.id).value == event)
            #expect(try await alice.eventType(id: type.id).value.name == "Coffee")
            #expect(try await alice.onboardingStatus().completed)
        }
    }
}
