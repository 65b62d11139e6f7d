import Foundation
import HTTPTypes
import Hummingbird
import TrendyAPI
import TrendyModels

/// One registered route: its method, OpenAPI path and handler.
struct RouteEntry: Sendable {
    let method: HTTPRequest.Method
    let path: String
    let handler: @Sendable (Request, ServerRequestContext) async throws -> Response

    /// `/api/v1/events/{id}` → `/api/v1/events/:id`.
    var hummingbirdPath: String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { part in
            part.hasPrefix("{") && part.hasSuffix("}") ? ":" + part.dropFirst().dropLast() : String(part)
        }.joined(separator: "/")
    }
}

extension TrendyServer {
    /// The single list of routes: registered from here and checked against docs/api/openapi.yaml.
    func routeTable() -> [RouteEntry] {
        let guardian = APIGuard(store: store, tokens: tokens, limiter: apiLimiter, now: now)
        let api = APIRoutes(
            store: store, guardian: guardian,
            idempotency: Idempotency(
                store: store, now: now, patience: configuration.idempotencyPatience,
                latest: { [store] in try await store.latestCursor(userId: $0) }), now: now,
            version: Self.version, ids: UUIDv7Generator(now: now), metrics: metrics)
        let passwords = Passwords(cost: configuration.bcryptCost)
        // The unknown-user dummy hash is made in the background now, so the first login with an
        // unknown email does not take twice as long as one with a known email.
        Task(priority: .utility) { [dummy = passwords.dummy] in _ = await dummy.value() }
        let auth = AuthRoutes(
            store: store, tokens: tokens, passwords: passwords, limiter: authLimiter,
            faults: faults, configuration: configuration, now: now, logger: logger)
        let admin = AdminRoutes(server: self)
        let v1 = APIPaths.api
        let a = APIPaths.auth
        return [
            RouteEntry(method: .get, path: "\(v1)/health", handler: api.health),
            RouteEntry(method: .get, path: APIPaths.ready, handler: api.ready),
            RouteEntry(method: .get, path: APIPaths.metrics, handler: admin.metrics),
            RouteEntry(method: .get, path: "\(v1)/event-types", handler: api.listEventTypes),
            RouteEntry(method: .post, path: "\(v1)/event-types", handler: api.createEventType),
            RouteEntry(method: .get, path: "\(v1)/event-types/{id}", handler: api.getEventType),
            RouteEntry(method: .patch, path: "\(v1)/event-types/{id}", handler: api.updateEventType),
            RouteEntry(method: .delete, path: "\(v1)/event-types/{id}", handler: api.deleteEventType),
            RouteEntry(method: .get, path: "\(v1)/events", handler: api.listEvents),
            RouteEntry(method: .post, path: "\(v1)/events", handler: api.createEvent),
            RouteEntry(method: .post, path: "\(v1)/events/batch", handler: api.createEventBatch),
            RouteEntry(method: .post, path: "\(v1)/events/edits", handler: api.editEventBatch),
            RouteEntry(method: .get, path: "\(v1)/events/export", handler: api.exportEvents),
            RouteEntry(method: .get, path: "\(v1)/events/{id}", handler: api.getEvent),
            RouteEntry(method: .patch, path: "\(v1)/events/{id}", handler: api.updateEvent),
            RouteEntry(method: .delete, path: "\(v1)/events/{id}", handler: api.deleteEvent),
            RouteEntry(method: .get, path: "\(v1)/geofences", handler: api.listGeofences),
            RouteEntry(method: .post, path: "\(v1)/geofences", handler: api.createGeofence),
            RouteEntry(method: .get, path: "\(v1)/geofences/{id}", handler: api.getGeofence),
            RouteEntry(method: .patch, path: "\(v1)/geofences/{id}", handler: api.updateGeofence),
            RouteEntry(method: .delete, path: "\(v1)/geofences/{id}", handler: api.deleteGeofence),
            RouteEntry(method: .get, path: "\(v1)/event-types/{id}/properties", handler: api.listPropertiesOfType),
            RouteEntry(method: .post, path: "\(v1)/event-types/{id}/properties", handler: api.createPropertyDefinition),
            RouteEntry(method: .get, path: "\(v1)/property-definitions", handler: api.listPropertyDefinitions),
            RouteEntry(method: .get, path: "\(v1)/property-definitions/{id}", handler: api.getPropertyDefinition),
            RouteEntry(method: .patch, path: "\(v1)/property-definitions/{id}", handler: api.updatePropertyDefinition),
            RouteEntry(method: .put, path: "\(v1)/property-definitions/{id}", handler: api.updatePropertyDefinition),
            RouteEntry(method: .delete, path: "\(v1)/property-definitions/{id}", handler: api.deletePropertyDefinition),
            RouteEntry(method: .get, path: "\(v1)/users/onboarding", handler: api.getOnboarding),
            RouteEntry(method: .patch, path: "\(v1)/users/onboarding", handler: api.updateOnboarding),
            RouteEntry(method: .delete, path: "\(v1)/users/onboarding", handler: api.resetOnboarding),
            RouteEntry(method: .get, path: "\(v1)/insights", handler: api.insights),
            RouteEntry(method: .get, path: "\(v1)/insights/streaks", handler: api.insightStreaks),
            RouteEntry(method: .get, path: "\(v1)/insights/weekly-summary", handler: api.insightWeeks),
            RouteEntry(method: .get, path: "\(v1)/insights/correlations", handler: api.insightCorrelations),
            RouteEntry(method: .get, path: "\(v1)/analytics/summary", handler: api.analyticsSummary),
            RouteEntry(method: .get, path: "\(v1)/analytics/trends", handler: api.analyticsTrends),
            RouteEntry(method: .get, path: "\(v1)/changes", handler: api.changes),
            RouteEntry(method: .get, path: "\(v1)/changes/latest-cursor", handler: api.latestCursor),
            RouteEntry(method: .get, path: "\(v1)/me/sync", handler: api.syncSummary),
            RouteEntry(method: .get, path: "\(v1)/conflicts", handler: api.conflicts),
            RouteEntry(method: .delete, path: "\(v1)/conflicts/{id}", handler: api.resolveConflict),
            RouteEntry(method: .post, path: "\(a)/signup", handler: auth.signup),
            RouteEntry(method: .post, path: "\(a)/token", handler: auth.token),
            RouteEntry(method: .get, path: "\(a)/user", handler: auth.user),
            RouteEntry(method: .put, path: "\(a)/user", handler: auth.updateUser),
            RouteEntry(method: .get, path: "\(a)/reauthenticate", handler: auth.reauthenticate),
            RouteEntry(method: .get, path: "\(a)/settings", handler: auth.settings),
            RouteEntry(method: .get, path: "\(a)/health", handler: auth.health),
            RouteEntry(method: .post, path: "\(a)/logout", handler: auth.logout),
            RouteEntry(method: .get, path: "/admin/v1/faults", handler: admin.getFaults),
            RouteEntry(method: .put, path: "/admin/v1/faults", handler: admin.putFaults),
        ]
    }
}
