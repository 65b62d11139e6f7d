import Foundation
import TrendyModels

/// The Trendy API v1 as the app uses it. Every call either returns the decoded answer or throws
/// a ``TrendyAPIError``.
///
/// ```swift
/// let api: any TrendyAPIClient = ...           // built by the composition root
/// let page = try await api.changes(since: cursor, limit: 500)
/// ```
///
/// Threading: implementations are `Sendable` and may be called from any task concurrently.
/// Creates and updates take an optional idempotency key; reuse the same key for every retry of
/// the same mutation.
public protocol TrendyAPIClient: Sendable {
    /// `GET /health` (no auth), answered within `budget` or failed with
    /// ``TransportFailure/notResponding(server:seconds:)`` (a refused connection fails at once).
    func health(within budget: Duration) async throws(TrendyAPIError) -> HealthStatus

    /// `GET /event-types`.
    func listEventTypes() async throws(TrendyAPIError) -> [Timestamped<EventType>]
    /// `POST /event-types`.
    func createEventType(_ body: EventTypeCreate, idempotencyKey: String?) async throws(TrendyAPIError)
        -> Timestamped<EventType>
    /// `GET /event-types/{id}`.
    func eventType(id: UUIDv7) async throws(TrendyAPIError) -> Timestamped<EventType>
    /// `PATCH /event-types/{id}`.
    func updateEventType(id: UUIDv7, _ body: EventTypeUpdate, idempotencyKey: String?) async throws(TrendyAPIError)
        -> Timestamped<EventType>
    /// `DELETE /event-types/{id}` (deletes its events too).
    func deleteEventType(id: UUIDv7) async throws(TrendyAPIError)

    /// `GET /events?limit=&offset=`, newest first.
    func listEvents(limit: Int, offset: Int) async throws(TrendyAPIError) -> ListPage<Timestamped<Event>>
    /// `GET /events?limit=&after=`, newest first, continuing after the page whose `next` is
    /// `after` (nil: the first page). Every page costs the server the same, and no event is
    /// skipped when others are added or removed meanwhile (offset paging skips one per removal).
    func listEvents(limit: Int, after: String?) async throws(TrendyAPIError) -> ListPage<Timestamped<Event>>
    /// `GET /events/{id}`.
    func event(id: UUIDv7) async throws(TrendyAPIError) -> Timestamped<Event>
    /// `POST /events`; `created` is false when the event already existed.
    func createEvent(_ event: Event, idempotencyKey: String?) async throws(TrendyAPIError) -> (
        event: Timestamped<Event>, created: Bool
    )
    /// `POST /events/batch` (at most 500).
    func createEvents(_ events: [Event], idempotencyKey: String?) async throws(TrendyAPIError) -> EventBatchResponse
    /// `POST /events/batch` with events already in wire JSON (the outbox stores them that way),
    /// so the push path does not decode and re-encode every event.
    func createEvents(encoded: [String], idempotencyKey: String?) async throws(TrendyAPIError) -> EventBatchResponse
    /// `PATCH /events/{id}`.
    func updateEvent(id: UUIDv7, _ body: EventUpdate, idempotencyKey: String?) async throws(TrendyAPIError)
        -> Timestamped<Event>
    /// `DELETE /events/{id}`.
    func deleteEvent(id: UUIDv7) async throws(TrendyAPIError)
    /// `POST /events/edits` (at most 500): patches and deletes of events, each with its own
    /// base, applied in order, each answered on its own. Safe to send again: a patch applied
    /// twice sets the same values, a delete sent again answers `not_found`.
    func editEvents(_ edits: [EventEditItem], idempotencyKey: String?) async throws(TrendyAPIError)
        -> EventEditResponse

    /// `GET /geofences[?active=]`.
    func listGeofences(active: Bool?) async throws(TrendyAPIError) -> [Timestamped<Geofence>]
    /// `POST /geofences`.
    func createGeofence(_ geofence: Geofence, idempotencyKey: String?) async throws(TrendyAPIError)
        -> Timestamped<Geofence>
    /// `GET /geofences/{id}`.
    func geofence(id: UUIDv7) async throws(TrendyAPIError) -> Timestamped<Geofence>
    /// `PATCH /geofences/{id}`.
    func updateGeofence(id: UUIDv7, _ body: GeofenceUpdate, idempotencyKey: String?) async throws(TrendyAPIError)
        -> Timestamped<Geofence>
    /// `DELETE /geofences/{id}`.
    func deleteGeofence(id: UUIDv7) async throws(TrendyAPIError)

    /// `GET /property-definitions`: every property definition of the user.
    func listPropertyDefinitions() async throws(TrendyAPIError) -> [Timestamped<PropertyDefinition>]
    /// `GET /event-types/{id}/properties`.
    func propertyDefinitions(ofType id: UUIDv7) async throws(TrendyAPIError) -> [Timestamped<PropertyDefinition>]
    /// `POST /event-types/{id}/properties`.
    func createPropertyDefinition(_ definition: PropertyDefinition, idempotencyKey: String?)
        async throws(TrendyAPIError) -> Timestamped<PropertyDefinition>
    /// `GET /property-definitions/{id}`.
    func propertyDefinition(id: UUIDv7) async throws(TrendyAPIError) -> Timestamped<PropertyDefinition>
    /// `PATCH /property-definitions/{id}`.
    func updatePropertyDefinition(id: UUIDv7, _ body: PropertyDefinitionUpdate, idempotencyKey: String?)
        async throws(TrendyAPIError) -> Timestamped<PropertyDefinition>
    /// `DELETE /property-definitions/{id}`.
    func deletePropertyDefinition(id: UUIDv7) async throws(TrendyAPIError)

    /// `GET /users/onboarding`.
    func onboardingStatus() async throws(TrendyAPIError) -> OnboardingStatus
    /// `PATCH /users/onboarding`.
    func updateOnboarding(_ body: OnboardingUpdate, idempotencyKey: String?) async throws(TrendyAPIError)
        -> OnboardingStatus
    /// `DELETE /users/onboarding` (soft reset).
    func resetOnboarding() async throws(TrendyAPIError) -> OnboardingStatus

    /// `GET /changes?since=&since_at=&limit=&omit_device=`: `at` is the `next_cursor_at` that came
    /// with `cursor` (the server checks its change is still that one, D59; nil: not checked);
    /// `device`'s own changes it holds are left out (nil: every change; D57).
    func changes(since cursor: Int64, at: String?, limit: Int, omitting device: String?)
        async throws(TrendyAPIError) -> ChangesPage
    /// `GET /changes/latest-cursor`.
    func latestCursor() async throws(TrendyAPIError) -> LatestCursor
    /// `GET /me/sync`.
    func syncSummary() async throws(TrendyAPIError) -> SyncSummary
    /// `GET /conflicts`: every conflict the server kept for the user (a new device's download
    /// includes them: the feed before its cursor is never read).
    func conflicts() async throws(TrendyAPIError) -> [SyncConflict]
    /// `DELETE /conflicts/{id}`: resolves a conflict for every device (idempotent).
    func resolveConflict(id: String) async throws(TrendyAPIError)
    /// The newest feed change a successful write's answer named (`Trendy-Cursor`, D60) since the
    /// last call, which forgets it; nil when none did (no write, or a server that does not say).
    func takeWriteMark() -> LatestCursor?
}

extension TrendyAPIClient {
    /// A client that does not read the write answers' headers has no mark.
    public func takeWriteMark() -> LatestCursor? { nil }

    /// One request per item (``EventEditResponse/oneByOne(_:update:delete:)``), for clients
    /// without the batch route.
    public func editEvents(_ edits: [EventEditItem], idempotencyKey: String?) async throws(TrendyAPIError)
        -> EventEditResponse
    {
        try await EventEditResponse.oneByOne(
            edits,
            update: { _, id, fields throws(TrendyAPIError) in
                _ = try await updateEvent(id: id, fields, idempotencyKey: nil)
            },
            delete: { id throws(TrendyAPIError) in try await deleteEvent(id: id) })
    }

    /// `GET /changes?since=&limit=`: every change, this device's own too.
    public func changes(since cursor: Int64, limit: Int) async throws(TrendyAPIError) -> ChangesPage {
        try await changes(since: cursor, at: nil, limit: limit, omitting: nil)
    }

    /// `GET /changes?since=&limit=&omit_device=`, the cursor unchecked.
    public func changes(since cursor: Int64, limit: Int, omitting device: String?) async throws(TrendyAPIError)
        -> ChangesPage
    {
        try await changes(since: cursor, at: nil, limit: limit, omitting: device)
    }

    /// `GET /health` within the standard budget (``NetworkBudget/respond``).
    public func health() async throws(TrendyAPIError) -> HealthStatus {
        try await health(within: NetworkBudget.standard.respond)
    }

    /// Decodes and sends through ``createEvents(_:idempotencyKey:)`` (for clients without a raw path).
    public func createEvents(encoded: [String], idempotencyKey: String?) async throws(TrendyAPIError)
        -> EventBatchResponse
    {
        var events: [Event] = []
        let decoder = TrendyJSON.decoder()
        for text in encoded {
            do { events.append(try decoder.decode(Event.self, from: Data(text.utf8))) } catch {
                throw .decoding("an outbox payload is not an event: \(error)")
            }
        }
        return try await createEvents(events, idempotencyKey: idempotencyKey)
    }
}

/// Supplies the bearer token for each API request.
///
/// Implemented by Auth (refreshing ahead of expiry); `nil` means "not signed in".
public protocol AccessTokenProvider: Sendable {
    /// A valid access token, or nil when there is no session.
    func accessToken() async throws -> String?
    /// The server refused `token` (401): get a new one if possible. The client then retries once.
    func accessTokenRejected(_ token: String) async
}

extension AccessTokenProvider {
    /// Nothing to do by default.
    public func accessTokenRejected(_ token: String) async {}
}

/// A fixed token (for tests and scripts).
public struct StaticTokenProvider: AccessTokenProvider {
    let token: String?
    /// Always supplies `token`.
    public init(_ token: String?) { self.token = token }
    /// The fixed token.
    public func accessToken() async throws -> String? { token }
}

/// An item list (`{"items": [...]}`), for collections that are not paged.
public struct ItemList<Item: Codable & Sendable & Hashable>: Codable, Sendable, Hashable {
    /// The items.
    public var items: [Item]
    /// Creates a list.
    public init(items: [Item]) { self.items = items }
}
