import Foundation
import TrendyAPI
import TrendyModels

/// The one question reachability asks the server.
public protocol ServerHealthCheck: Sendable {
    /// `GET /health` (no auth), answered within `budget` or failed with
    /// ``TransportFailure/notResponding(server:seconds:)`` (a refused connection fails at once).
    func health(within budget: Duration) async throws(TrendyAPIError) -> HealthStatus
}

/// The server calls the sync engine makes, and only those: Sync's own port (22 calls instead of
/// the whole API client's 32). The live HTTP client conforms (TrendyAPILive), as does the
/// recording wrapper in TrendyAPITesting.
public protocol SyncRemote: ServerHealthCheck {
    /// `GET /event-types`.
    func listEventTypes() async throws(TrendyAPIError) -> [Timestamped<EventType>]
    /// `POST /event-types`.
    func createEventType(_ body: EventTypeCreate, idempotencyKey: String?) async throws(TrendyAPIError)
        -> Timestamped<EventType>
    /// `PATCH /event-types/{id}`.
    func updateEventType(id: UUIDv7, _ body: EventTypeUpdate, idempotencyKey: String?) async throws(TrendyAPIError)
        -> Timestamped<EventType>
    /// `GET /event-types/{id}` (a create a full download did not list is read back, D70).
    func eventType(id: UUIDv7) async throws(TrendyAPIError) -> Timestamped<EventType>
    /// `DELETE /event-types/{id}` (deletes its events too).
    func deleteEventType(id: UUIDv7) async throws(TrendyAPIError)

    /// `GET /events?limit=&after=`, newest first (a new device's download).
    func listEvents(limit: Int, after: String?) async throws(TrendyAPIError) -> ListPage<Timestamped<Event>>
    /// `GET /events/{id}` (an event this device deleted with its type, whose server copy the
    /// cascade did not take, is read back).
    func event(id: UUIDv7) async throws(TrendyAPIError) -> Timestamped<Event>
    /// `POST /events`; `created` is false when the event already existed.
    func createEvent(_ event: Event, idempotencyKey: String?) async throws(TrendyAPIError) -> (
        event: Timestamped<Event>, created: Bool
    )
    /// `POST /events/batch` with events already in wire JSON (as the outbox stores them).
    func createEvents(encoded: [String], idempotencyKey: String?) async throws(TrendyAPIError) -> EventBatchResponse
    /// `PATCH /events/{id}`.
    func updateEvent(id: UUIDv7, _ body: EventUpdate, idempotencyKey: String?) async throws(TrendyAPIError)
        -> Timestamped<Event>
    /// `DELETE /events/{id}`.
    func deleteEvent(id: UUIDv7) async throws(TrendyAPIError)
    /// `POST /events/edits`: patches and deletes in one request, each answered on its own.
    func editEvents(_ edits: [EventEditItem], idempotencyKey: String?) async throws(TrendyAPIError)
        -> EventEditResponse

    /// `GET /geofences[?active=]`.
    func listGeofences(active: Bool?) async throws(TrendyAPIError) -> [Timestamped<Geofence>]
    /// `POST /geofences`.
    func createGeofence(_ geofence: Geofence, idempotencyKey: String?) async throws(TrendyAPIError)
        -> Timestamped<Geofence>
    /// `PATCH /geofences/{id}`.
    func updateGeofence(id: UUIDv7, _ body: GeofenceUpdate, idempotencyKey: String?) async throws(TrendyAPIError)
        -> Timestamped<Geofence>
    /// `GET /geofences/{id}` (read back, D70).
    func geofence(id: UUIDv7) async throws(TrendyAPIError) -> Timestamped<Geofence>
    /// `DELETE /geofences/{id}`.
    func deleteGeofence(id: UUIDv7) async throws(TrendyAPIError)

    /// `GET /property-definitions`.
    func listPropertyDefinitions() async throws(TrendyAPIError) -> [Timestamped<PropertyDefinition>]
    /// `POST /event-types/{id}/properties`.
    func createPropertyDefinition(_ definition: PropertyDefinition, idempotencyKey: String?)
        async throws(TrendyAPIError) -> Timestamped<PropertyDefinition>
    /// `PATCH /property-definitions/{id}`.
    func updatePropertyDefinition(id: UUIDv7, _ body: PropertyDefinitionUpdate, idempotencyKey: String?)
        async throws(TrendyAPIError) -> Timestamped<PropertyDefinition>
    /// `GET /property-definitions/{id}` (read back, D70).
    func propertyDefinition(id: UUIDv7) async throws(TrendyAPIError) -> Timestamped<PropertyDefinition>
    /// `DELETE /property-definitions/{id}`.
    func deletePropertyDefinition(id: UUIDv7) async throws(TrendyAPIError)

    /// `GET /changes?since=&since_at=&limit=&omit_device=`: `at` is the `next_cursor_at` that
    /// came with `cursor` (the server checks its change is still that one, D59); `device`'s own
    /// changes it holds are left out (nil: every change; D57).
    func changes(since cursor: Int64, at: String?, limit: Int, omitting device: String?)
        async throws(TrendyAPIError) -> ChangesPage
    /// `GET /changes/latest-cursor`.
    func latestCursor() async throws(TrendyAPIError) -> LatestCursor
    /// `GET /conflicts`: every conflict the server kept for the user.
    func conflicts() async throws(TrendyAPIError) -> [SyncConflict]
    /// `DELETE /conflicts/{id}`: this device restored or dismissed it; closed for every device.
    func resolveConflict(id: String) async throws(TrendyAPIError)
    /// The newest feed change a successful write's answer named since the last call (D60).
    func takeWriteMark() -> LatestCursor?
    /// Asks whether the server still has feed change `cursor`, written at `at`: throws
    /// `409 cursor_ahead` when it does not (it lost changes, D59). A one-change page.
    func checkCursor(_ cursor: Int64, at: String?) async throws(TrendyAPIError)
}

extension SyncRemote {
    public func checkCursor(_ cursor: Int64, at: String?) async throws(TrendyAPIError) {
        _ = try await changes(since: cursor, at: at, limit: 1, omitting: nil)
    }
}
