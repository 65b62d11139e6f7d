import Foundation
import NIOHTTP1
import TrendyAPI
import TrendyModels

extension LiveTrendyAPIClient {
    public func health(within budget: Duration) async throws(TrendyAPIError) -> HealthStatus {
        try await send(.GET, APIPaths.health, authorized: false, deadline: budget, as: HealthStatus.self).value
    }

    // MARK: Event types

    public func listEventTypes() async throws(TrendyAPIError) -> [Timestamped<EventType>] {
        try await send(.GET, APIPaths.eventTypes, as: ItemList<Timestamped<EventType>>.self).value.items
    }

    public func createEventType(_ body: EventTypeCreate, idempotencyKey: String?) async throws(TrendyAPIError)
        -> Timestamped<EventType>
    {
        try await send(
            .POST, APIPaths.eventTypes, body: encode(body), idempotencyKey: idempotencyKey,
            as: Timestamped<EventType>.self
        ).value
    }

    public func eventType(id: UUIDv7) async throws(TrendyAPIError) -> Timestamped<EventType> {
        try await send(.GET, "\(APIPaths.eventTypes)/\(id)", as: Timestamped<EventType>.self).value
    }

    public func updateEventType(id: UUIDv7, _ body: EventTypeUpdate, idempotencyKey: String?)
        async throws(TrendyAPIError) -> Timestamped<EventType>
    {
        try await send(
            .PATCH, "\(APIPaths.eventTypes)/\(id)", body: encode(body), idempotencyKey: idempotencyKey,
            as: Timestamped<EventType>.self
        ).value
    }

    public func deleteEventType(id: UUIDv7) async throws(TrendyAPIError) {
        _ = try await send(.DELETE, "\(APIPaths.eventTypes)/\(id)", as: Empty.self)
    }

    // MARK: Events

    public func listEvents(limit: Int, offset: Int) async throws(TrendyAPIError) -> ListPage<Timestamped<Event>> {
        try await send(
            .GET, APIPaths.events, query: [("limit", String(limit)), ("offset", String(offset))],
            as: ListPage<Timestamped<Event>>.self, fastDecode: ListPage.fastRead
        ).value
    }

    public func listEvents(limit: Int, after: String?) async throws(TrendyAPIError) -> ListPage<Timestamped<Event>> {
        try await send(
            .GET, APIPaths.events, query: [("limit", String(limit))] + (after.map { [("after", $0)] } ?? []),
            as: ListPage<Timestamped<Event>>.self, fastDecode: ListPage.fastRead
        ).value
    }

    public func event(id: UUIDv7) async throws(TrendyAPIError) -> Timestamped<Event> {
        try await send(.GET, "\(APIPaths.events)/\(id)", as: Timestamped<Event>.self).value
    }

    public func createEvent(_ event: Event, idempotencyKey: String?) async throws(TrendyAPIError) -> (
        event: Timestamped<Event>, created: Bool
    ) {
        let (value, status) = try await send(
            .POST, APIPaths.events, body: encode(event), idempotencyKey: idempotencyKey, as: Timestamped<Event>.self)
        return (value, status == 201)
    }

    public func createEvents(_ events: [Event], idempotencyKey: String?) async throws(TrendyAPIError)
        -> EventBatchResponse
    {
        // Written directly: JSONEncoder cost more than the request itself for 500 events.
        try await createEvents(encoded: events.map { $0.wireJSON() }, idempotencyKey: idempotencyKey)
    }

    /// The body is spliced
    /// from the events' wire JSON.
    public func createEvents(encoded: [String], idempotencyKey: String?) async throws(TrendyAPIError)
        -> EventBatchResponse
    {
        let body = Data(("{\"events\":[" + encoded.joined(separator: ",") + "]}").utf8)
        // A 400 carrying per-item results means "every item failed": an answer, not an error.
        return try await send(
            .POST, APIPaths.eventsBatch, body: body,
            idempotencyKey: idempotencyKey, answersOn: [400], as: EventBatchResponse.self,
            fastDecode: EventBatchResponse.fastRead
        ).value
    }

    public func updateEvent(id: UUIDv7, _ body: EventUpdate, idempotencyKey: String?) async throws(TrendyAPIError)
        -> Timestamped<Event>
    {
        try await send(
            .PATCH, "\(APIPaths.events)/\(id)", body: encode(body), idempotencyKey: idempotencyKey,
            as: Timestamped<Event>.self
        ).value
    }

    public func deleteEvent(id: UUIDv7) async throws(TrendyAPIError) {
        _ = try await send(.DELETE, "\(APIPaths.events)/\(id)", as: Empty.self)
    }

    /// The body is spliced from the items' wire JSON (patches stay as the outbox keeps them).
    public func editEvents(_ edits: [EventEditItem], idempotencyKey: String?) async throws(TrendyAPIError)
        -> EventEditResponse
    {
        let body = Data(("{\"edits\":[" + edits.map(\.wireJSON).joined(separator: ",") + "]}").utf8)
        return try await send(
            .POST, APIPaths.eventEdits, body: body, idempotencyKey: idempotencyKey, as: EventEditResponse.self
        ).value
    }

    // MARK: Geofences

    public func listGeofences(active: Bool?) async throws(TrendyAPIError) -> [Timestamped<Geofence>] {
        try await send(
            .GET, APIPaths.geofences, query: active.map { [("active", String($0))] } ?? [],
            as: ItemList<Timestamped<Geofence>>.self
        ).value.items
    }

    public func createGeofence(_ geofence: Geofence, idempotencyKey: String?) async throws(TrendyAPIError)
        -> Timestamped<Geofence>
    {
        try await send(
            .POST, APIPaths.geofences, body: encode(geofence), idempotencyKey: idempotencyKey,
            as: Timestamped<Geofence>.self
        ).value
    }

    public func geofence(id: UUIDv7) async throws(TrendyAPIError) -> Timestamped<Geofence> {
        try await send(.GET, "\(APIPaths.geofences)/\(id)", as: Timestamped<Geofence>.self).value
    }

    public func updateGeofence(id: UUIDv7, _ body: GeofenceUpdate, idempotencyKey: String?)
        async throws(TrendyAPIError) -> Timestamped<Geofence>
    {
        try await send(
            .PATCH, "\(APIPaths.geofences)/\(id)", body: encode(body), idempotencyKey: idempotencyKey,
            as: Timestamped<Geofence>.self
        ).value
    }

    public func deleteGeofence(id: UUIDv7) async throws(TrendyAPIError) {
        _ = try await send(.DELETE, "\(APIPaths.geofences)/\(id)", as: Empty.self)
    }

    // MARK: Onboarding

    public func onboardingStatus() async throws(TrendyAPIError) -> OnboardingStatus {
        try await send(.GET, APIPaths.onboarding, as: OnboardingStatus.self).value
    }

    public func updateOnboarding(_ body: OnboardingUpdate, idempotencyKey: String?) async throws(TrendyAPIError)
        -> OnboardingStatus
    {
        try await send(
            .PATCH, APIPaths.onboarding, body: encode(body), idempotencyKey: idempotencyKey, as: OnboardingStatus.self
        ).value
    }

    public func resetOnboarding() async throws(TrendyAPIError) -> OnboardingStatus {
        try await send(.DELETE, APIPaths.onboarding, as: OnboardingStatus.self).value
    }

    // MARK: Change feed

    public func changes(since cursor: Int64, at: String?, limit: Int, omitting device: String?)
        async throws(TrendyAPIError) -> ChangesPage
    {
        var query = [("since", String(cursor)), ("limit", String(limit))]
        if let at { query.append((APIPaths.sinceAtQuery, at)) }
        if let device { query.append((APIPaths.omitDeviceQuery, device)) }
        return try await send(
            .GET, APIPaths.changes, query: query, as: ChangesPage.self, fastDecode: ChangesPage.fastRead
        )
        .value
    }

    public func latestCursor() async throws(TrendyAPIError) -> LatestCursor {
        try await send(.GET, APIPaths.latestCursor, as: LatestCursor.self).value
    }

    public func conflicts() async throws(TrendyAPIError) -> [SyncConflict] {
        try await send(.GET, APIPaths.conflicts, as: ItemList<SyncConflict>.self).value.items
    }

    public func resolveConflict(id: String) async throws(TrendyAPIError) {
        let safe = id.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(["-"])) ?? id
        _ = try await send(.DELETE, "\(APIPaths.conflicts)/\(safe)", as: Empty.self)
    }

    public func syncSummary() async throws(TrendyAPIError) -> SyncSummary {
        try await send(.GET, APIPaths.syncSummary, as: SyncSummary.self).value
    }
}
