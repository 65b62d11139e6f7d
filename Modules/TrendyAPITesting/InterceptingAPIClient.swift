import Foundation
import Synchronization
import TrendyAPI
import TrendyModels
import TrendyTestSupport

/// Wraps a real ``TrendyAPIClient``: records every call (name, idempotency key, ids sent) and
/// can fail chosen calls with a scripted error before they reach the server, or after the server
/// has answered (the answer lost on the way back). It does not simulate the server itself:
/// unscripted calls go to the wrapped client.
public final class InterceptingAPIClient: TrendyAPIClient {
    /// One recorded call.
    public struct Call: Sendable, Hashable {
        /// The method name (`createEvents`, `updateEvent`, `changes`, ...).
        public var name: String
        /// The idempotency key sent, if any.
        public var idempotencyKey: String?
        /// Entity ids in the request.
        public var ids: [String]
        /// Whether a scripted failure (or an observer's) answered it.
        public var failed: Bool
    }

    struct State {
        var calls: [Call] = []
        var turn = 0
        var script: [(name: String?, error: TrendyAPIError, afterSending: Bool)] = []
        var observers: [String: @Sendable (Int) async -> TrendyAPIError?] = [:]
        /// A scheduled death: calls still let through, then how the fatal call ends, then dead.
        var kill: (remaining: Int, losingAnswer: Bool, error: TrendyAPIError)?
        var dead: TrendyAPIError?
    }

    let inners: [any TrendyAPIClient]
    let state = Mutex(State())
    let gate = CallGate()

    /// Wraps `inner`.
    public init(_ inner: any TrendyAPIClient) { inners = [inner] }

    /// Wraps several clients and sends each call to the next one in turn: a client whose
    /// requests land on any of several server instances, as behind a load balancer.
    public init(rotatingAmong inners: [any TrendyAPIClient]) {
        precondition(!inners.isEmpty, "at least one client")
        self.inners = inners
    }

    /// The client the next call goes to.
    var inner: any TrendyAPIClient {
        guard inners.count > 1 else { return inners[0] }
        return inners[
            state.withLock { s in
                defer { s.turn += 1 }
                return s.turn % inners.count
            }]
    }

    /// Every call so far.
    public var calls: [Call] { state.withLock { $0.calls } }

    /// The newest mark any wrapped client took from a write's answer (D60).
    public func takeWriteMark() -> LatestCursor? {
        inners.compactMap { $0.takeWriteMark() }.max { $0.cursor < $1.cursor }
    }

    /// Calls named `name`.
    public func calls(_ name: String) -> [Call] { calls.filter { $0.name == name } }

    /// Fails the next call named `name` (any call when nil) with `error`; queue several to fail
    /// several calls.
    public func fail(_ name: String?, with error: TrendyAPIError, times: Int = 1) {
        state.withLock { s in for _ in 0..<times { s.script.append((name, error, false)) } }
    }

    /// Sends the next call named `name` to the server and then fails it with `error` as if the
    /// answer had been lost (the server did the work); queue several to lose several answers.
    public func loseAnswer(_ name: String, with error: TrendyAPIError, times: Int = 1) {
        state.withLock { s in for _ in 0..<times { s.script.append((name, error, true)) } }
    }

    /// Kills the client as a process dies mid-pass: `after` more calls go through, the next one
    /// fails with `error` (with `losingAnswer`, after it reached the server: the process died
    /// waiting for the answer), and every call after it fails unsent. Deterministic: a seeded
    /// simulation draws the moment as a call count, not a sleep.
    public func kill(after calls: Int, losingAnswer: Bool, with error: TrendyAPIError) {
        state.withLock { $0.kill = (max(0, calls), losingAnswer, error) }
    }

    /// Forgets the script (and a kill: the client lives again, as a restarted process).
    public func clearScript() {
        state.withLock { s in
            s.script.removeAll()
            s.kill = nil
            s.dead = nil
        }
    }

    /// Runs `body` before each call named `name` is sent, with the call's number among those
    /// calls (from 1); an error it returns fails that call instead.
    public func observe(_ name: String, _ body: @escaping @Sendable (Int) async -> TrendyAPIError?) {
        state.withLock { $0.observers[name] = body }
    }

    /// Holds every call named `name` before it is sent, until ``releaseHeld()``.
    public func hold(_ name: String) { gate.hold(name) }

    /// How many calls are waiting.
    public var heldCount: Int { gate.heldCount }

    /// Lets held calls go and stops holding.
    public func releaseHeld() { gate.releaseHeld() }

    func intercept<T>(
        _ name: String, key: String? = nil, ids: [String] = [], _ body: () async throws(TrendyAPIError) -> T
    )
        async throws(TrendyAPIError) -> T
    {
        // The call's place in the log and its number among calls of its name are taken with the
        // scripted answer, in one step, so calls made concurrently cannot swap them.
        let (scripted, index, number) = state.withLock {
            s -> ((error: TrendyAPIError, afterSending: Bool)?, Int, Int) in
            let number = s.calls.count(where: { $0.name == name }) + 1
            var scripted: (error: TrendyAPIError, afterSending: Bool)?
            if let dead = s.dead {
                scripted = (dead, false)
            } else if let kill = s.kill {
                if kill.remaining > 0 {
                    s.kill?.remaining -= 1
                } else {
                    scripted = (kill.error, kill.losingAnswer)
                    s.dead = kill.error
                }
            } else if let i = s.script.firstIndex(where: { $0.name == nil || $0.name == name }) {
                let entry = s.script.remove(at: i)
                scripted = (entry.error, entry.afterSending)
            }
            s.calls.append(Call(name: name, idempotencyKey: key, ids: ids, failed: scripted != nil))
            return (scripted, s.calls.count - 1, number)
        }
        if let scripted {
            if scripted.afterSending { _ = try? await body() }
            throw scripted.error
        }
        if let observer = state.withLock({ $0.observers[name] }), let error = await observer(number) {
            state.withLock { $0.calls[index].failed = true }
            throw error
        }
        await gate.pass(name)
        return try await body()
    }

    /// Forwards (or fails as scripted).
    public func health(within budget: Duration) async throws(TrendyAPIError) -> HealthStatus {
        try await intercept("health") { () throws(TrendyAPIError) in try await inner.health(within: budget) }
    }
    /// Forwards (or fails as scripted).
    public func listEventTypes() async throws(TrendyAPIError) -> [Timestamped<EventType>] {
        try await intercept("listEventTypes") { () throws(TrendyAPIError) in try await inner.listEventTypes() }
    }
    /// Forwards (or fails as scripted).
    public func createEventType(_ body: EventTypeCreate, idempotencyKey: String?) async throws(TrendyAPIError)
        -> Timestamped<EventType>
    {
        try await intercept("createEventType", key: idempotencyKey, ids: [body.id?.description ?? ""]) {
            () throws(TrendyAPIError) in try await inner.createEventType(body, idempotencyKey: idempotencyKey)
        }
    }
    /// Forwards (or fails as scripted).
    public func eventType(id: UUIDv7) async throws(TrendyAPIError) -> Timestamped<EventType> {
        try await intercept("eventType", ids: [id.description]) { () throws(TrendyAPIError) in
            try await inner.eventType(id: id)
        }
    }
    /// Forwards (or fails as scripted).
    public func updateEventType(id: UUIDv7, _ body: EventTypeUpdate, idempotencyKey: String?)
        async throws(TrendyAPIError) -> Timestamped<EventType>
    {
        try await intercept("updateEventType", key: idempotencyKey, ids: [id.description]) {
            () throws(TrendyAPIError) in
            try await inner.updateEventType(id: id, body, idempotencyKey: idempotencyKey)
        }
    }
    /// Forwards (or fails as scripted).
    public func deleteEventType(id: UUIDv7) async throws(TrendyAPIError) {
        try await intercept("deleteEventType", ids: [id.description]) { () throws(TrendyAPIError) in
            try await inner.deleteEventType(id: id)
        }
    }
    /// Forwards (or fails as scripted).
    public func listEvents(limit: Int, offset: Int) async throws(TrendyAPIError) -> ListPage<Timestamped<Event>> {
        try await intercept("listEvents") { () throws(TrendyAPIError) in
            try await inner.listEvents(limit: limit, offset: offset)
        }
    }
    /// Forwards (or fails as scripted); logged as `listEvents` like the offset form.
    /// The page's `after` token is logged as the call's one id (none for the first page).
    public func listEvents(limit: Int, after: String?) async throws(TrendyAPIError) -> ListPage<Timestamped<Event>> {
        try await intercept("listEvents", ids: after.map { [$0] } ?? []) { () throws(TrendyAPIError) in
            try await inner.listEvents(limit: limit, after: after)
        }
    }
    /// Forwards (or fails as scripted).
    public func event(id: UUIDv7) async throws(TrendyAPIError) -> Timestamped<Event> {
        try await intercept("event", ids: [id.description]) { () throws(TrendyAPIError) in try await inner.event(id: id)
        }
    }
    /// Forwards (or fails as scripted).
    public func createEvent(_ event: Event, idempotencyKey: String?) async throws(TrendyAPIError) -> (
        event: Timestamped<Event>, created: Bool
    ) {
        try await intercept("createEvent", key: idempotencyKey, ids: [event.id.description]) {
            () throws(TrendyAPIError) in
            try await inner.createEvent(event, idempotencyKey: idempotencyKey)
        }
    }
    /// Forwards (or fails as scripted).
    public func createEvents(_ events: [Event], idempotencyKey: String?) async throws(TrendyAPIError)
        -> EventBatchResponse
    {
        try await intercept("createEvents", key: idempotencyKey, ids: events.map(\.id.description)) {
            () throws(TrendyAPIError) in try await inner.createEvents(events, idempotencyKey: idempotencyKey)
        }
    }
    /// Forwards (or fails as scripted); recorded as `createEvents`.
    public func createEvents(encoded: [String], idempotencyKey: String?) async throws(TrendyAPIError)
        -> EventBatchResponse
    {
        let ids = encoded.map { WireJSONReader.parse(Array($0.utf8))?["id"]?.string ?? "" }
        return try await intercept("createEvents", key: idempotencyKey, ids: ids) { () throws(TrendyAPIError) in
            try await inner.createEvents(encoded: encoded, idempotencyKey: idempotencyKey)
        }
    }
    /// Forwards (or fails as scripted).
    public func updateEvent(id: UUIDv7, _ body: EventUpdate, idempotencyKey: String?) async throws(TrendyAPIError)
        -> Timestamped<Event>
    {
        try await intercept("updateEvent", key: idempotencyKey, ids: [id.description]) { () throws(TrendyAPIError) in
            try await inner.updateEvent(id: id, body, idempotencyKey: idempotencyKey)
        }
    }
    /// Forwards (or fails as scripted).
    public func deleteEvent(id: UUIDv7) async throws(TrendyAPIError) {
        try await intercept("deleteEvent", ids: [id.description]) { () throws(TrendyAPIError) in
            try await inner.deleteEvent(id: id)
        }
    }
    /// Forwards (or fails as scripted); recorded as `editEvents`.
    public func editEvents(_ edits: [EventEditItem], idempotencyKey: String?) async throws(TrendyAPIError)
        -> EventEditResponse
    {
        try await intercept("editEvents", key: idempotencyKey, ids: edits.map(\.id.description)) {
            () throws(TrendyAPIError) in try await inner.editEvents(edits, idempotencyKey: idempotencyKey)
        }
    }
    /// Forwards (or fails as scripted).
    public func listGeofences(active: Bool?) async throws(TrendyAPIError) -> [Timestamped<Geofence>] {
        try await intercept("listGeofences") { () throws(TrendyAPIError) in
            try await inner.listGeofences(active: active)
        }
    }
    /// Forwards (or fails as scripted).
    public func createGeofence(_ geofence: Geofence, idempotencyKey: String?) async throws(TrendyAPIError)
        -> Timestamped<Geofence>
    {
        try await intercept("createGeofence", key: idempotencyKey, ids: [geofence.id.description]) {
            () throws(TrendyAPIError) in try await inner.createGeofence(geofence, idempotencyKey: idempotencyKey)
        }
    }
    /// Forwards (or fails as scripted).
    public func geofence(id: UUIDv7) async throws(TrendyAPIError) -> Timestamped<Geofence> {
        try await intercept("geofence", ids: [id.description]) { () throws(TrendyAPIError) in
            try await inner.geofence(id: id)
        }
    }
    /// Forwards (or fails as scripted).
    public func updateGeofence(id: UUIDv7, _ body: GeofenceUpdate, idempotencyKey: String?)
        async throws(TrendyAPIError) -> Timestamped<Geofence>
    {
        try await intercept("updateGeofence", key: idempotencyKey, ids: [id.description]) { () throws(TrendyAPIError) in
            try await inner.updateGeofence(id: id, body, idempotencyKey: idempotencyKey)
        }
    }
    /// Forwards (or fails as scripted).
    public func deleteGeofence(id: UUIDv7) async throws(TrendyAPIError) {
        try await intercept("deleteGeofence", ids: [id.description]) { () throws(TrendyAPIError) in
            try await inner.deleteGeofence(id: id)
        }
    }
    /// Forwards (or fails as scripted).
    public func onboardingStatus() async throws(TrendyAPIError) -> OnboardingStatus {
        try await intercept("onboardingStatus") { () throws(TrendyAPIError) in try await inner.onboardingStatus() }
    }
    /// Forwards (or fails as scripted).
    public func updateOnboarding(_ body: OnboardingUpdate, idempotencyKey: String?) async throws(TrendyAPIError)
        -> OnboardingStatus
    {
        try await intercept("updateOnboarding", key: idempotencyKey) { () throws(TrendyAPIError) in
            try await inner.updateOnboarding(body, idempotencyKey: idempotencyKey)
        }
    }
    /// Forwards (or fails as scripted).
    public func resetOnboarding() async throws(TrendyAPIError) -> OnboardingStatus {
        try await intercept("resetOnboarding") { () throws(TrendyAPIError) in try await inner.resetOnboarding() }
    }
    /// Forwards (or fails as scripted).
    public func changes(since cursor: Int64, at: String?, limit: Int, omitting device: String?)
        async throws(TrendyAPIError) -> ChangesPage
    {
        try await intercept("changes", ids: [String(cursor)]) { () throws(TrendyAPIError) in
            try await inner.changes(since: cursor, at: at, limit: limit, omitting: device)
        }
    }
    /// Forwards as a one-change page (or fails as scripted), logged as `checkCursor`: the check a
    /// pass makes before it pushes or skips is told apart from its pull.
    public func checkCursor(_ cursor: Int64, at: String?) async throws(TrendyAPIError) {
        try await intercept("checkCursor", ids: [String(cursor)]) { () throws(TrendyAPIError) in
            _ = try await inner.changes(since: cursor, at: at, limit: 1, omitting: nil)
        }
    }
    /// Forwards (or fails as scripted).
    public func latestCursor() async throws(TrendyAPIError) -> LatestCursor {
        try await intercept("latestCursor") { () throws(TrendyAPIError) in try await inner.latestCursor() }
    }

    /// Forwards (or fails as scripted).
    public func conflicts() async throws(TrendyAPIError) -> [SyncConflict] {
        try await intercept("conflicts") { () throws(TrendyAPIError) in try await inner.conflicts() }
    }

    /// Forwards (or fails as scripted).
    public func resolveConflict(id: String) async throws(TrendyAPIError) {
        try await intercept("resolveConflict") { () throws(TrendyAPIError) in try await inner.resolveConflict(id: id) }
    }

    /// Forwards `syncSummary`.
    public func syncSummary() async throws(TrendyAPIError) -> SyncSummary {
        try await intercept("syncSummary") { () throws(TrendyAPIError) in try await inner.syncSummary() }
    }
}
