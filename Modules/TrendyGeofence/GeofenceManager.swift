import Foundation
import Logging
import TrendyLogging
import TrendyModels

/// Geofencing as the app uses it: keeps the platform's monitored regions in line with the saved
/// geofences, turns crossings into events exactly once, and reports its health.
public protocol GeofenceService: Sendable {
    /// Starts listening to the monitor, handles crossings captured before start-up (background
    /// launches), then reconciles. Idempotent.
    func start() async
    /// Stops listening.
    func stop() async
    /// Brings the monitored regions in line with the plan.
    @discardableResult func reconcile(_ reason: ReconcileReason) async -> ReconcileReport
    /// Reconciles when the saved geofences differ from the ones last planned (after a sync).
    func geofencesMayHaveChanged() async
    /// Asks for location access in two steps (while in use, then always); returns the result.
    func requestAuthorization() async -> LocationAuthorization
    /// Handles one crossing exactly once.
    func deliver(_ crossing: RegionCrossing) async throws -> CrossingOutcome
    /// Returns once the monitor's events up to `sequence` have been handled.
    func waitUntilProcessed(_ sequence: UInt64) async
    /// Monitored against saved, missing, orphaned, authorization, last crossing per geofence.
    func health() async -> GeofenceHealth
    /// The crossings this manager handled since it was created, in order.
    func handledThisRun() async -> [HandledCrossing]
}

/// The live ``GeofenceService``.
///
/// Threading: an actor. Monitor events are handled one at a time in delivery order; the geofence source
/// and ledger do their work off this actor.
public actor GeofenceManager: GeofenceService {
    let monitor: any RegionMonitor
    let saved: any GeofenceSource
    let ledger: any GeofenceVisitLedger
    let inbox: any RegionEventInbox
    let planner: GeofencePlanner
    let logger: Logger
    let localWriteHappened: @Sendable () async -> Void
    let now: @Sendable () -> Date

    var listener: Task<Void, Never>?
    var processed: UInt64 = 0
    var waiters: [(sequence: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
    var started = false
    var handled: [HandledCrossing] = []
    /// The saved geofences the last successful reconcile planned with, prepared for planning.
    /// Re-read for every reconcile except a refresh-region exit (the device moved; the geofences
    /// did not change); ``geofencesMayHaveChanged()`` compares against it.
    var planned: (geofences: [Geofence], prepared: [PlannerGeofence])?

    /// Creates a manager.
    /// - Parameters:
    ///   - localWriteHappened: called after a crossing wrote an event (tells Sync).
    public init(
        monitor: any RegionMonitor, geofences saved: any GeofenceSource, ledger: any GeofenceVisitLedger,
        inbox: any RegionEventInbox, namespace: RegionNamespace = RegionNamespace(), logger: Logger,
        now: @escaping @Sendable () -> Date = Date.init, localWriteHappened: @escaping @Sendable () async -> Void = {}
    ) {
        self.now = now
        self.monitor = monitor
        self.saved = saved
        self.ledger = ledger
        self.inbox = inbox
        planner = GeofencePlanner(capacity: monitor.capacity, namespace: namespace)
        self.logger = logger
        self.localWriteHappened = localWriteHappened
    }

    public func start() async {
        guard !started else { return }
        started = true
        let stream = monitor.events()
        listener = Task { [weak self] in
            for await event in stream {
                guard let self else { return }
                await self.handle(event)
            }
        }
        await drainInbox()
        await reconcile(.launch)
    }

    public func stop() async {
        listener?.cancel()
        listener = nil
        for waiter in waiters { waiter.continuation.resume() }
        waiters.removeAll()
    }

    // MARK: Crossings

    /// Handles crossings captured before start-up, oldest first; each leaves the inbox only after
    /// the ledger recorded it (a crash in between replays it, and the ledger ignores the replay).
    func drainInbox() async {
        let pending: [RegionCrossing]
        do { pending = try inbox.pending() } catch {
            logger.error("Cannot read the region event inbox", metadata: ["error": .error(error)])
            return
        }
        for crossing in pending {
            do {
                _ = try await deliver(crossing)
                try inbox.remove(id: crossing.id)
            } catch {
                logger.error(
                    "Cannot handle a captured crossing; kept for the next start",
                    metadata: ["crossing_id": .string(crossing.id), "error": .error(error)])
            }
        }
    }

    public func deliver(_ crossing: RegionCrossing) async throws -> CrossingOutcome {
        let outcome = try await ledger.record(crossing)
        handled.append(HandledCrossing(crossing: crossing, outcome: outcome.kind, handledAt: now()))
        var metadata: Logger.Metadata = [
            "geofence_id": .string(crossing.geofenceId.description), "kind": .string(crossing.kind.rawValue),
            "source": .string(crossing.source.rawValue), "outcome": .string(outcome.name),
            "occurred_at": .string(ISO8601.format(crossing.occurredAt)),
        ]
        if let id = outcome.eventId { metadata["event_id"] = .string(id.description) }
        if case .ignored(let why) = outcome { metadata["reason"] = .string(why) }
        logger.info("Crossing handled", metadata: metadata)
        if outcome.eventId != nil || outcome == .recorded { await localWriteHappened() }
        return outcome
    }

    func handle(_ event: RegionMonitorEvent) async {
        defer { markProcessed(event.sequence) }
        let ns = planner.namespace
        do {
            switch event.kind {
            case .entered(let identifier):
                guard let id = ns.geofenceId(from: identifier) else { return }
                _ = try await deliver(
                    RegionCrossing(
                        geofenceId: id, kind: .enter, occurredAt: event.at, location: event.location, source: .monitor))
            case .exited(let identifier):
                if identifier == ns.refreshIdentifier {
                    await reconcile(.refreshExit)
                    return
                }
                guard let id = ns.geofenceId(from: identifier) else { return }
                _ = try await deliver(
                    RegionCrossing(
                        geofenceId: id, kind: .exit, occurredAt: event.at, location: event.location, source: .monitor))
            case .determined(let identifier, let state):
                guard let id = ns.geofenceId(from: identifier), state != .unknown else { return }
                let recorded = try await ledger.state(of: id)?.inside ?? false
                if (state == .inside) != recorded {
                    // A crossing the app missed (it was registered while the device was already
                    // inside, or a delivery was lost): record it now.
                    _ = try await deliver(
                        RegionCrossing(
                            geofenceId: id, kind: state == .inside ? .enter : .exit, occurredAt: event.at,
                            location: event.location, source: .state))
                }
            case .authorizationChanged(let status):
                logger.notice("Location authorization changed", metadata: ["authorization": .string(status.rawValue)])
                await reconcile(.authorization)
            }
        } catch {
            logger.error(
                "Cannot handle a region event",
                metadata: ["sequence": .stringConvertible(event.sequence), "error": .error(error)])
        }
    }

    func markProcessed(_ sequence: UInt64) {
        processed = max(processed, sequence)
        var still: [(sequence: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
        for waiter in waiters {
            if waiter.sequence <= processed { waiter.continuation.resume() } else { still.append(waiter) }
        }
        waiters = still
    }

    public func waitUntilProcessed(_ sequence: UInt64) async {
        guard sequence > processed, listener != nil else { return }
        await withCheckedContinuation { waiters.append((sequence, $0)) }
    }

    public func handledThisRun() -> [HandledCrossing] { handled }

    // MARK: Reconcile

    @discardableResult
    public func reconcile(_ reason: ReconcileReason) async -> ReconcileReport {
        var report = ReconcileReport(
            reason: reason, authorized: false, added: [], removed: [], kept: [], overCapacity: 0, error: nil)
        let authorization = await monitor.authorization()
        guard authorization.allowsMonitoring else {
            logger.notice(
                "Not reconciling: geofencing needs \"always\" location access",
                metadata: ["reason": .string(reason.rawValue), "authorization": .string(authorization.rawValue)])
            return report
        }
        report.authorized = true
        do {
            let geofences: [Geofence]
            let prepared: [PlannerGeofence]
            if reason == .refreshExit, let planned {
                (geofences, prepared) = planned
            } else {
                geofences = try await saved.geofences()
                prepared = geofences.map(PlannerGeofence.init)
            }
            let inside = try await closeVisitsWithoutAGeofence(geofences)
            let plan = planner.plan(
                geofences: prepared, location: await monitor.lastKnownLocation(),
                monitored: await monitor.monitoredRegions(), inside: inside)
            for identifier in plan.remove { await monitor.stopMonitoring(identifier: identifier) }
            for region in plan.add { try await monitor.startMonitoring(region) }
            planned = (geofences, prepared)
            report.added = plan.add.map(\.identifier)
            report.removed = plan.remove
            report.kept = plan.keep
            report.overCapacity = plan.unmonitored.count
            logger.info(
                "Reconciled",
                metadata: [
                    "reason": .string(reason.rawValue), "added": .stringConvertible(plan.add.count),
                    "removed": .stringConvertible(plan.remove.count), "kept": .stringConvertible(plan.keep.count),
                    "over_capacity": .stringConvertible(plan.unmonitored.count),
                ])
            // A region registered while the device is already inside reports no entry; ask.
            for region in plan.add where planner.namespace.geofenceId(from: region.identifier) != nil {
                await monitor.requestState(identifier: region.identifier)
            }
        } catch {
            report.error = String(describing: error)
            logger.error("Reconcile failed", metadata: ["reason": .string(reason.rawValue), "error": .error(error)])
        }
        return report
    }

    /// A visit recorded as in progress whose geofence was switched off or deleted can never see
    /// its exit (the region is no longer monitored): it ends now. Returns the geofences the
    /// device is still recorded inside (one read of the visit states serves both).
    func closeVisitsWithoutAGeofence(_ geofences: [Geofence]) async throws -> Set<UUIDv7> {
        let active = Set(geofences.filter(\.isActive).map(\.id))
        var inside = Set<UUIDv7>()
        for state in try await ledger.states().values where state.inside {
            if active.contains(state.geofenceId) {
                inside.insert(state.geofenceId)
            } else {
                _ = try await deliver(
                    RegionCrossing(geofenceId: state.geofenceId, kind: .exit, occurredAt: now(), source: .state))
            }
        }
        return inside
    }

    static func fingerprint(_ geofences: [Geofence]) -> Int {
        var hasher = Hasher()
        for g in geofences.sorted(by: { $0.id < $1.id }) {
            hasher.combine(g.id)
            hasher.combine(g.center)
            hasher.combine(g.radius)
            hasher.combine(g.isActive)
        }
        return hasher.finalize()
    }

    public func geofencesMayHaveChanged() async {
        guard let geofences = try? await saved.geofences(),
            Self.fingerprint(geofences) != planned.map({ Self.fingerprint($0.geofences) })
        else { return }
        await reconcile(.geofencesChanged)
    }

    // MARK: Authorization

    /// Asks for "while in use" first, then the
    /// upgrade to "always", as the platform requires.
    public func requestAuthorization() async -> LocationAuthorization {
        var status = await monitor.authorization()
        if status == .notDetermined { status = await monitor.requestWhenInUseAuthorization() }
        if status == .whenInUse { status = await monitor.requestAlwaysAuthorization() }
        logger.notice("Location authorization requested", metadata: ["authorization": .string(status.rawValue)])
        return status
    }

    // MARK: Health

    public func health() async -> GeofenceHealth {
        let ns = planner.namespace
        let authorization = await monitor.authorization()
        let monitored = await monitor.monitoredRegions()
        let geofences = (try? await saved.geofences()) ?? []
        let states = (try? await ledger.states()) ?? [:]
        let last = (try? await ledger.lastCrossings()) ?? [:]
        let inside = Set(states.values.filter(\.inside).map(\.geofenceId))
        let plan = planner.plan(
            geofences: geofences.map(PlannerGeofence.init), location: await monitor.lastKnownLocation(),
            monitored: monitored, inside: inside)
        let active = Set(geofences.filter(\.isActive).map(\.id))
        let ours = monitored.filter { ns.owns($0.identifier) }
        let monitoredIds = Set(ours.compactMap { ns.geofenceId(from: $0.identifier) })
        let orphaned = ours.map(\.identifier).filter { identifier in
            guard identifier != ns.refreshIdentifier else { return false }
            guard let id = ns.geofenceId(from: identifier) else { return true }
            return !active.contains(id)
        }
        let missing = plan.add.compactMap { ns.geofenceId(from: $0.identifier) }
        var advice: [String] = []
        if let a = GeofenceHealth.advice(for: authorization) { advice.append(a) }
        if authorization.allowsMonitoring, !missing.isEmpty {
            advice.append("\(missing.count) geofence(s) are not monitored yet: reconcile (open the app).")
        }
        if !orphaned.isEmpty {
            advice.append("\(orphaned.count) monitored region(s) have no saved geofence: reconcile to remove them.")
        }
        let pendingInbox = (try? inbox.pending().count) ?? 0
        let regions = geofences.sorted { ($0.name, $0.id) < ($1.name, $1.id) }.map { g in
            GeofenceHealth.Region(
                id: g.id, name: g.name, active: g.isActive, monitored: monitoredIds.contains(g.id),
                inside: states[g.id]?.inside ?? false, openEventId: states[g.id]?.openEventId, lastCrossing: last[g.id])
        }
        return GeofenceHealth(
            ok: authorization.allowsMonitoring && missing.isEmpty && orphaned.isEmpty && pendingInbox == 0,
            authorization: authorization, advice: advice, capacity: planner.capacity, saved: active.count,
            savedTotal: geofences.count, monitored: ours.map(\.identifier).sorted(),
            foreign: monitored.count - ours.count, missing: missing, orphaned: orphaned,
            overCapacity: plan.unmonitored.count,
            refreshRegion: ours.first { $0.identifier == ns.refreshIdentifier }, inboxPending: pendingInbox,
            regions: regions)
    }
}
