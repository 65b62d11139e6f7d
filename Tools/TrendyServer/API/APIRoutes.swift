import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOFoundationEssentialsCompat
import TrendyAPI
import TrendyInsights
import TrendyModels

/// The Trendy API v1 handlers.
struct APIRoutes: Sendable {
    let store: any ServerStore
    let guardian: APIGuard
    let idempotency: Idempotency
    let now: @Sendable () -> Date
    let version: String
    /// Ids for event types created without one.
    let ids: UUIDv7Generator
    /// Batch sizes and feed pages are recorded here.
    let metrics: ServerMetrics
    /// Zone offsets for insights, read from the platform once per zone for the server's life.
    var insightZones = ZoneOffsetCache()

    /// An id from the path; anything that is not a UUIDv7 cannot exist, so it is a 404.
    func pathId(_ context: ServerRequestContext, _ what: String) throws -> String {
        guard let text = context.parameters.get("id"), let id = UUIDv7(text) else { throw ProblemError.notFound(what) }
        return id.description
    }

    /// Runs a store call, turning its errors into problems.
    func storeCall<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as StoreError {
            throw ProblemError.from(error)
        }
    }

    /// What an update or delete was based on (``ChangeBase``). Without a base version: plain
    /// last-write-wins, without conflict records. A base without a device id is compared as
    /// the device `unknown` (the one every change without a base is recorded as).
    func changeBase(_ request: Request) throws -> ChangeBase? {
        let version = request.headers[HTTPField.Name(APIPaths.baseVersionHeader)!]
        let device = try deviceId(request)
        guard let version else { return nil }
        guard let number = Int64(version), BaseRules.versionIssue(number) == nil else {
            throw ProblemError.malformed("\(APIPaths.baseVersionHeader) \(BaseRules.versionReason)")
        }
        return BaseRules.base(version: number, device: device)
    }

    /// The sending device (``APIPaths/deviceIdHeader``), 1 to 100 characters, if named.
    func deviceId(_ request: Request) throws -> String? {
        let device = request.headers[HTTPField.Name(APIPaths.deviceIdHeader)!]
        if let issue = BaseRules.deviceIssue(device) {
            throw ProblemError.malformed("\(APIPaths.deviceIdHeader) \(issue)")
        }
        return device
    }

    func intQuery(_ request: Request, _ name: String, default value: Int, range: ClosedRange<Int>) throws -> Int {
        guard let text = request.uri.queryParameters.get(name) else { return value }
        guard let n = Int(text), range.contains(n) else {
            throw ProblemError.validation([
                FieldIssue(field: name, reason: "must be an integer from \(range.lowerBound) to \(range.upperBound)")
            ])
        }
        return n
    }

    /// Refuses a value that breaks its model's rules (422 with every issue).
    func validate(_ value: some Validating) throws {
        do throws(ValidationError) { try value.validate() } catch { throw ProblemError.validation(error.issues) }
    }

    // MARK: Health

    func health(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        try JSONIO.response(HealthStatus(status: "ok", version: version, time: now()))
    }

    /// Readiness: whether this instance can serve requests now — its database answers. 503 when
    /// not, so a load balancer sends traffic elsewhere (`/health` only says the process is up).
    func ready(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let up = await store.isReady()
        return try JSONIO.response(
            Readiness(databaseUp: up),
            status: up ? .ok : .serviceUnavailable)
    }

    // MARK: Event types

    func listEventTypes(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        return try JSONIO.response(ItemList(items: try await store.listEventTypes(userId: user)))
    }

    func createEventType(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let buffer = try await JSONIO.body(request, context: context)
        let body = try JSONIO.decode(EventTypeCreate.self, from: buffer)
        try JSONIO.rejectNulls(in: buffer, for: ["id", "color", "icon"])
        return try await idempotency.run(request, userId: user, body: Data(buffer: buffer)) {
            let type = EventType(
                id: body.id ?? ids.next(), name: body.name.trimmingWhiteSpace,
                color: body.color ?? "#3B82F6", icon: body.icon ?? "circle")
            try validate(type)
            let (stored, created) = try await storeCall {
                try await store.createEventType(userId: user, type, now: now())
            }
            return try APIResult.json(stored, status: created ? 201 : 200)
        }
    }

    func getEventType(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let id = try pathId(context, "event type")
        guard let stored = try await store.eventType(userId: user, id: id) else {
            throw ProblemError.notFound("event type")
        }
        return try JSONIO.response(stored)
    }

    func updateEventType(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let id = try pathId(context, "event type")
        let buffer = try await JSONIO.body(request, context: context)
        let body = try JSONIO.decode(EventTypeUpdate.self, from: buffer)
        try JSONIO.rejectNulls(in: buffer, for: ["name", "color", "icon"])
        let base = try changeBase(request)
        return try await idempotency.run(request, userId: user, body: Data(buffer: buffer)) {
            try APIResult.json(
                try await storeCall {
                    try await store.updateEventType(userId: user, id: id, body, base: base, now: now())
                })
        }
    }

    func deleteEventType(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let id = try pathId(context, "event type")
        try await storeCall {
            try await store.deleteEventType(userId: user, id: id, base: try changeBase(request), now: now())
        }
        return await idempotency.marked(JSONIO.noContent(), userId: user)
    }

    // MARK: Geofences

    func listGeofences(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        var active: Bool?
        if let text = request.uri.queryParameters.get("active") {
            guard let value = Bool(text) else {
                throw ProblemError.validation([FieldIssue(field: "active", reason: "must be true or false")])
            }
            active = value
        }
        return try JSONIO.response(ItemList(items: try await store.listGeofences(userId: user, active: active)))
    }

    func createGeofence(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let buffer = try await JSONIO.body(request, context: context)
        let geofence = try JSONIO.decode(Geofence.self, from: buffer)
        return try await idempotency.run(request, userId: user, body: Data(buffer: buffer)) {
            try validate(geofence)
            let (stored, created) = try await storeCall {
                try await store.createGeofence(userId: user, geofence, now: now())
            }
            return try APIResult.json(stored, status: created ? 201 : 200)
        }
    }

    func getGeofence(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let id = try pathId(context, "geofence")
        guard let stored = try await store.geofence(userId: user, id: id) else {
            throw ProblemError.notFound("geofence")
        }
        return try JSONIO.response(stored)
    }

    func updateGeofence(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let id = try pathId(context, "geofence")
        let buffer = try await JSONIO.body(request, context: context)
        let body = try JSONIO.decode(GeofenceUpdate.self, from: buffer)
        let base = try changeBase(request)
        if !body.clearedRequiredFields.isEmpty {
            throw ProblemError.validation(
                body.clearedRequiredFields.map { FieldIssue(field: $0, reason: "cannot be null") })
        }
        return try await idempotency.run(request, userId: user, body: Data(buffer: buffer)) {
            try APIResult.json(
                try await storeCall {
                    try await store.updateGeofence(userId: user, id: id, body, base: base, now: now())
                })
        }
    }

    func deleteGeofence(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let id = try pathId(context, "geofence")
        try await storeCall {
            try await store.deleteGeofence(userId: user, id: id, base: try changeBase(request), now: now())
        }
        return await idempotency.marked(JSONIO.noContent(), userId: user)
    }

    // MARK: Onboarding

    func getOnboarding(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        return try JSONIO.response(try await store.onboarding(userId: user, now: now()))
    }

    func updateOnboarding(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let buffer = try await JSONIO.body(request, context: context)
        let body = try JSONIO.decode(OnboardingUpdate.self, from: buffer)
        try JSONIO.rejectNulls(
            in: buffer,
            for: [
                "completed", "current_step", "step_completed_at", "notifications_status", "location_status",
                "health_status",
            ])
        return try await idempotency.run(request, userId: user, body: Data(buffer: buffer)) {
            try APIResult.json(try await store.updateOnboarding(userId: user, body, now: now()))
        }
    }

    func resetOnboarding(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        return try JSONIO.response(try await store.resetOnboarding(userId: user, now: now()))
    }

    // MARK: Change feed

    func changes(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let since = try intQuery(request, "since", default: 0, range: 0...Int.max)
        let limit = try intQuery(request, "limit", default: 100, range: 1...APIPaths.maxChangesLimit)
        // The pulling device's own changes it holds are left out (D57).
        let device = request.uri.queryParameters.get(APIPaths.omitDeviceQuery)
        if let issue = BaseRules.deviceIssue(device) {
            throw ProblemError.validation([FieldIssue(field: APIPaths.omitDeviceQuery, reason: issue)])
        }
        // The time of the change `since` names, as this server wrote it on an earlier page.
        let sinceAt = try request.uri.queryParameters.get(APIPaths.sinceAtQuery).map { text in
            guard let date = ISO8601.parse(String(text)) else {
                throw ProblemError.validation([
                    FieldIssue(
                        field: APIPaths.sinceAtQuery, reason: "must be the date-time a page gave as next_cursor_at")
                ])
            }
            return date
        }
        let page = try await store.changesPage(userId: user, since: Int64(since), limit: limit, omitting: device)
        try Self.checkCursor(since: Int64(since), sinceAt: sinceAt, page: page)
        metrics.feedPage(page.count, newest: page.newestChangeAt, now: now())
        return JSONIO.raw(page.body, status: .ok)
    }

    /// Refuses a cursor this server never handed out or no longer means what it did: the server
    /// lost changes (restored from a backup). Answered as a page, the device would skip every
    /// change up to its cursor and keep what the server lost as synced, for good (an outsider's
    /// attack). Without `since_at` (an older client), only a cursor past every change is seen;
    /// with it, also one the server's new changes have overtaken (D59).
    static func checkCursor(since: Int64, sinceAt: Date?, page: FeedPage) throws {
        guard since > 0 else { return }
        let advice = "The server lost changes. Download everything again (a full sync) and send what it lacks."
        guard let at = page.sinceChangeAt else {
            // A client without `since_at` reading a non-empty page keeps the old behaviour: a
            // cursor in a gap of the numbers from before D42 is still served.
            guard sinceAt != nil || page.scanned == 0 else { return }
            throw ProblemError(
                409, ProblemCode.cursorAhead, "Cursor ahead of the change feed",
                detail: "This server has no change \(since). " + advice)
        }
        if let sinceAt, abs(at - sinceAt.timeIntervalSince1970) >= 0.001 {
            throw ProblemError(
                409, ProblemCode.cursorAhead, "Cursor names another change",
                detail: "Change \(since) here was written at \(ISO8601.format(Date(timeIntervalSince1970: at))), "
                    + "not at \(ISO8601.format(sinceAt)) as this device read it. " + advice)
        }
    }

    func latestCursor(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        return try JSONIO.response(try await store.latestCursor(userId: user))
    }

    func conflicts(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        let bodies = try await store.conflicts(userId: user)
        return JSONIO.raw(Data(("{\"items\":[" + bodies.joined(separator: ",") + "]}").utf8), status: .ok)
    }

    /// `DELETE /conflicts/{id}`: a device restored or dismissed the conflict; it is closed for
    /// every device (idempotent).
    func resolveConflict(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        guard let text = context.parameters.get("id"), let id = UUID(uuidString: text) else {
            throw ProblemError.notFound("conflict")
        }
        try await storeCall {
            try await store.resolveConflict(userId: user, id: id.uuidString.lowercased(), now: now())
        }
        return JSONIO.noContent()
    }

    func syncSummary(_ request: Request, _ context: ServerRequestContext) async throws -> Response {
        let user = try await guardian.userId(request)
        return try JSONIO.response(try await store.syncSummary(userId: user))
    }
}
