import Foundation
import TrendyGeofence
import TrendyModels
import TrendySync

/// The event-type use cases `trendy types` and the app's Types tab share, written once: each
/// writes to the local store and tells the sync engine. Store refusals (a name taken, an invalid
/// name) come back as `LocalStoreError` for the caller to word.
struct TypeActions {
    let env: AppEnvironment

    /// Gets or creates (D39): a type that exists — perhaps just made by another process — is kept
    /// as it is; `created` says which.
    func add(name: String, color: String = "#3B82F6", icon: String = "circle") async throws -> (
        type: EventType, created: Bool
    ) {
        let wanted = EventType(id: env.ids.next(), name: name.trimmingWhiteSpace, color: color, icon: icon)
        let result = try await env.store.findOrCreateEventType(wanted)
        if result.created { await env.sync.localWriteHappened() }
        return result
    }

    /// Renames the type `id`; the type as saved, or nil when it is not here.
    func rename(_ id: UUIDv7, to name: String) async throws -> EventType? {
        try await edit(id, name: name)
    }

    /// Changes the given fields of the type `id` (a field-level edit that syncs); the type as
    /// saved, or nil when it is not here.
    func edit(_ id: UUIDv7, name: String? = nil, color: String? = nil, icon: String? = nil) async throws -> EventType? {
        guard var type = try await env.store.eventType(id: id)?.value else { return nil }
        if let name { type.name = name.trimmingWhiteSpace }
        if let color { type.color = color }
        if let icon { type.icon = icon }
        try await env.store.updateEventType(type)
        await env.sync.localWriteHappened()
        return type
    }

    /// Deletes the type `id` with its events; how many events went with it.
    func remove(_ id: UUIDv7) async throws -> Int {
        let events = try await env.store.eventCountsByType(from: .distantPast, to: .distantFuture)[id] ?? 0
        try await env.store.deleteEventType(id: id)
        await env.sync.localWriteHappened()
        return events
    }
}

/// The place (geofence) use cases `trendy geofence add|rm` and the app's Places tab share: the
/// store first, then the monitored regions follow the saved places.
struct PlaceActions {
    let env: AppEnvironment

    struct Added {
        let place: Geofence
        /// Watched now (one of the monitored regions).
        let monitored: Bool
        /// Location access, when this add asked for it the first time.
        let accessAsked: LocationAuthorization?
    }

    func add(
        name: String, center: Coordinate, radius: Double, logs entry: UUIDv7, exit: UUIDv7? = nil, active: Bool = true
    ) async throws -> Added {
        let place = Geofence(
            id: env.ids.next(), name: name.trimmingWhiteSpace, center: center, radius: radius,
            entryEventTypeId: entry, exitEventTypeId: exit, isActive: active)
        try await env.store.createGeofence(place)
        await env.sync.localWriteHappened()
        let (service, location) = try env.requireGeofence()
        var asked: LocationAuthorization?
        if await location.authorization() == .notDetermined { asked = await service.requestAuthorization() }
        let report = await service.reconcile(.geofencesChanged)
        // Another process (a running app) reads the device's regions from the file.
        await location.flush()
        let id = place.id.description
        let monitored = report.added.contains { $0.hasSuffix(id) } || report.kept.contains { $0.hasSuffix(id) }
        return Added(place: place, monitored: monitored, accessAsked: asked)
    }

    /// Changes the place `id` with `edit` (a field-level edit that syncs); a moved, resized,
    /// paused or resumed place is planned again at once. The place as saved, or nil when it is
    /// not here.
    func edit(_ id: UUIDv7, _ edit: (inout Geofence) -> Void) async throws -> Geofence? {
        guard var place = try await env.store.geofences().first(where: { $0.value.id == id })?.value else {
            return nil
        }
        edit(&place)
        try await env.store.updateGeofence(place)
        await env.sync.localWriteHappened()
        let (service, location) = try env.requireGeofence()
        await service.reconcile(.geofencesChanged)
        await location.flush()
        return place
    }

    func remove(_ id: UUIDv7) async throws {
        try await env.store.deleteGeofence(id: id)
        await env.sync.localWriteHappened()
        let (service, location) = try env.requireGeofence()
        await service.reconcile(.geofencesChanged)
        await location.flush()
    }
}
