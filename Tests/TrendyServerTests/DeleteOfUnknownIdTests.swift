import Foundation
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyModels

/// The outsider's B3: a device deletes what a server restored from a backup never had (`404`),
/// then another device, recovering, sends it again as lost — and it came back everywhere, while
/// the deleting device, whose tombstone blocked it, never showed it again. A delete of an id the
/// user does not have now marks it deleted: still `404`, but a later create of it is answered
/// `deleted` (`410` alone), as for any deleted id. Nothing else of the id is touched: another
/// user's entity under it stays whole. On both stores.
@Suite(.timeLimit(.minutes(5)))
struct DeleteOfUnknownIdTests {
    /// The `deleted_version` of a `410` answer (nil for anything else).
    func goneVersion(_ body: () async throws(TrendyAPIError) -> Void) async -> Int64? {
        guard case .server(410, let problem?) = await apiError(body) else { return nil }
        return problem.deletedVersion
    }

    @Test func aDeletedUnknownIdIsAnsweredDeletedWhenItIsCreatedLater() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let event = h.event(type)
            let place = Geofence(
                id: h.ids.next(), name: "Park", center: Coordinate(latitude: 52.5, longitude: 13.4), radius: 150,
                entryEventTypeId: type.id)
            let property = PropertyDefinition(id: h.ids.next(), eventTypeId: type.id, key: "cup", propertyType: .text)
            let otherType = EventType(id: h.ids.next(), name: "Run")
            // Deleted here before they ever reached this server: 404 each, as before.
            let deletes = [
                await apiError { () throws(TrendyAPIError) in try await api.deleteEvent(id: event.id) },
                await apiError { () throws(TrendyAPIError) in try await api.deleteGeofence(id: place.id) },
                await apiError { () throws(TrendyAPIError) in try await api.deletePropertyDefinition(id: property.id) },
                await apiError { () throws(TrendyAPIError) in try await api.deleteEventType(id: otherType.id) },
            ]
            for error in deletes {
                guard case .notFound = error else {
                    Issue.record("expected 404, got \(String(describing: error))")
                    continue
                }
            }
            let edits = try await api.editEvents([EventEditItem(delete: event.id, base: nil)], idempotencyKey: nil)
            #expect(edits.results.map(\.status) == [.notFound], "a batch says the same, and marks nothing twice")
            // Sent later (a recovering device): answered deleted, not stored.
            let batch = try await api.createEvents([event], idempotencyKey: nil)
            #expect(batch.results.map(\.status) == [.deleted])
            #expect(batch.results.first?.deletedVersion == 1, "the feed's cursor at the delete")
            let eventGone = await goneVersion { () throws(TrendyAPIError) in
                _ = try await api.createEvent(event, idempotencyKey: nil)
            }
            #expect(eventGone == 1)
            let placeGone = await goneVersion { () throws(TrendyAPIError) in
                _ = try await api.createGeofence(place, idempotencyKey: nil)
            }
            #expect(placeGone == 1)
            let propertyGone = await goneVersion { () throws(TrendyAPIError) in
                _ = try await api.createPropertyDefinition(property, idempotencyKey: nil)
            }
            #expect(propertyGone == 1)
            let typeGone = await goneVersion { () throws(TrendyAPIError) in
                _ = try await api.createEventType(
                    EventTypeCreate(id: otherType.id, name: otherType.name), idempotencyKey: nil)
            }
            #expect(typeGone == 1)
            #expect(try await api.listEvents(limit: 10, after: nil).items.isEmpty)
            #expect(try await api.listGeofences(active: nil).isEmpty)
            // An edit of a marked id is what it was before: not found (there is nothing to keep).
            var note = EventUpdate()
            note.notes = .set("x")
            let edit = await apiError { () throws(TrendyAPIError) in
                _ = try await api.updateEvent(id: event.id, note, idempotencyKey: nil)
            }
            guard case .notFound = edit else {
                Issue.record("expected 404, got \(String(describing: edit))")
                return
            }
        }
    }

    @Test func anotherUsersEntityUnderTheIdStaysWhole() async throws {
        try await ServerHarness.with { h in
            let (owner, _) = try await h.newUserClient()
            let (stranger, _) = try await h.newUserClient()
            let type = try await h.makeType(owner)
            let event = h.event(type)
            _ = try await owner.createEvents([event], idempotencyKey: nil)
            let seen = try await owner.latestCursor().cursor
            let strangers = await apiError { () throws(TrendyAPIError) in try await stranger.deleteEvent(id: event.id) }
            #expect(strangers != nil)
            // The owner's event, its field versions and its own delete are untouched: an edit from
            // an older base still meets the newer one as a conflict, and its delete keeps a body.
            var first = EventUpdate()
            first.notes = .set("mine")
            try await ChangeBase.$current.withValue(ChangeBase(version: seen, deviceId: "A")) {
                _ = try await owner.updateEvent(id: event.id, first, idempotencyKey: nil)
            }
            var second = EventUpdate()
            second.notes = .set("theirs")
            try await ChangeBase.$current.withValue(ChangeBase(version: seen, deviceId: "B")) {
                _ = try await owner.updateEvent(id: event.id, second, idempotencyKey: nil)
            }
            #expect(try await owner.conflicts().count == 1)
            try await owner.deleteEvent(id: event.id)
            // The stranger's mark, again after the owner's delete, never replaces the tombstone:
            // the owner's late edit still meets the deleted event, kept as a conflict (a mark in
            // its place would answer 404 and keep nothing).
            let again = await apiError { () throws(TrendyAPIError) in try await stranger.deleteEvent(id: event.id) }
            #expect(again != nil)
            let late = await apiError { () throws(TrendyAPIError) in
                _ = try await owner.updateEvent(id: event.id, first, idempotencyKey: nil)
            }
            guard case .server(410, _) = late else {
                Issue.record(
                    "an edit after the owner's delete is kept as a conflict and answered gone, got \(String(describing: late))"
                )
                return
            }
            #expect(try await owner.conflicts().count == 2, "the late edit kept")
        }
    }
}
