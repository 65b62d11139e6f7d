import Foundation
import TrendyModels

/// Entering or leaving.
public enum CrossingKind: String, Sendable, Hashable, Codable {
    /// The device entered the geofence.
    case enter
    /// The device left it.
    case exit
}

/// Where a crossing came from.
public enum CrossingSource: String, Sendable, Hashable, Codable {
    /// Delivered by the monitor while the app ran.
    case monitor
    /// Captured when the system launched the app in the background for it.
    case background
    /// Inferred from a state request that disagreed with the recorded state (a missed crossing).
    case state
}

/// One crossing of one geofence, with an id that makes handling it idempotent: a crossing whose id
/// was handled before is never handled again (a background launch replayed after a crash).
public struct RegionCrossing: Sendable, Hashable, Codable {
    /// Unique per delivery.
    public var id: String
    /// The geofence crossed.
    public var geofenceId: UUIDv7
    /// Enter or exit.
    public var kind: CrossingKind
    /// When it happened.
    public var occurredAt: Date
    /// Where the device was, when known.
    public var location: Coordinate?
    /// Where it came from.
    public var source: CrossingSource

    /// Creates a crossing.
    public init(
        id: String = UUID().uuidString.lowercased(), geofenceId: UUIDv7, kind: CrossingKind, occurredAt: Date,
        location: Coordinate? = nil, source: CrossingSource
    ) {
        self.id = id
        self.geofenceId = geofenceId
        self.kind = kind
        self.occurredAt = occurredAt
        self.location = location
        self.source = source
    }

    enum CodingKeys: String, CodingKey {
        case id, kind, location, source
        case geofenceId = "geofence_id"
        case occurredAt = "occurred_at"
    }
}

/// What the app remembers about one geofence between runs.
public struct RegionVisitState: Sendable, Hashable, Codable {
    /// The geofence.
    public var geofenceId: UUIDv7
    /// Whether the device is inside, as far as the app recorded.
    public var inside: Bool
    /// The entry event waiting for its exit.
    public var openEventId: UUIDv7?
    /// When the last crossing that changed the state happened.
    public var lastTransitionAt: Date?
    /// The last crossing that changed the state.
    public var lastKind: CrossingKind?

    /// Creates a state.
    public init(
        geofenceId: UUIDv7, inside: Bool = false, openEventId: UUIDv7? = nil, lastTransitionAt: Date? = nil,
        lastKind: CrossingKind? = nil
    ) {
        self.geofenceId = geofenceId
        self.inside = inside
        self.openEventId = openEventId
        self.lastTransitionAt = lastTransitionAt
        self.lastKind = lastKind
    }

    enum CodingKeys: String, CodingKey {
        case inside
        case geofenceId = "geofence_id"
        case openEventId = "open_event_id"
        case lastTransitionAt = "last_transition_at"
        case lastKind = "last_kind"
    }
}

/// What handling a crossing did.
public enum CrossingOutcome: Sendable, Hashable {
    /// An entry (or exit-type) event was created.
    case created(eventId: UUIDv7)
    /// The open entry event got its end time.
    case closed(eventId: UUIDv7)
    /// The state changed but no event was written (the geofence has no event type for it, or
    /// the open event is gone).
    case recorded
    /// Nothing changed: the device was already inside (or outside).
    case duplicate
    /// Nothing changed: this exact crossing was handled before.
    case alreadyHandled
    /// Nothing changed, for the reason given (unknown or inactive geofence, out of order).
    case ignored(String)

    /// Which outcome, without its details: what the ledger keeps and JSON shows.
    public enum Kind: String, Sendable, Hashable, CaseIterable, StoredEnum {
        /// ``CrossingOutcome/created(eventId:)``.
        case created
        /// ``CrossingOutcome/closed(eventId:)``.
        case closed
        /// ``CrossingOutcome/recorded``.
        case recorded
        /// ``CrossingOutcome/duplicate``.
        case duplicate
        /// ``CrossingOutcome/alreadyHandled``.
        case alreadyHandled = "already_handled"
        /// ``CrossingOutcome/ignored(_:)``.
        case ignored

        /// A stored kind a later version wrote reads as ``recorded``.
        public static let unknownValue = Kind.recorded
    }

    /// Which outcome this is.
    public var kind: Kind {
        switch self {
        case .created: .created
        case .closed: .closed
        case .recorded: .recorded
        case .duplicate: .duplicate
        case .alreadyHandled: .alreadyHandled
        case .ignored: .ignored
        }
    }

    /// A short name for logs and JSON (the kind's raw value).
    public var name: String { kind.rawValue }

    /// The event written, if any.
    public var eventId: UUIDv7? {
        switch self {
        case .created(let id), .closed(let id): id
        default: nil
        }
    }
}

/// What to write for a crossing, decided from the recorded state alone (pure). The ledger runs
/// this inside the transaction that reads the state and writes the result, so concurrent
/// deliveries of the same crossing serialize and only the first one writes.
public enum VisitRules {
    /// The decision.
    public enum Decision: Sendable, Hashable {
        /// Write nothing.
        case nothing(CrossingOutcome)
        /// Record `state`; create `event` if given.
        case enter(state: RegionVisitState, event: Event?)
        /// Record `state`; close `closeEventId` at `end`, or create `exitEvent`.
        case exit(state: RegionVisitState, closeEventId: UUIDv7?, end: Date, exitEvent: Event?)
    }

    /// Decides what `crossing` means given the recorded `state` and the `geofence` (nil when it is
    /// not stored here). `newId` makes the id of an event to create.
    public static func decide(
        _ crossing: RegionCrossing, state: RegionVisitState?, geofence: Geofence?, newId: () -> UUIDv7
    ) -> Decision {
        // A visit in progress can always end, even when its geofence was switched off or deleted
        // meanwhile (the manager closes such visits when it reconciles); nothing new starts there.
        if crossing.kind == .exit, let state, state.inside, geofence == nil || geofence?.isActive == false {
            guard state.lastTransitionAt.map({ crossing.occurredAt >= $0 }) ?? true else {
                return .nothing(.ignored("older than the last recorded crossing"))
            }
            return .exit(
                state: RegionVisitState(
                    geofenceId: crossing.geofenceId, inside: false, lastTransitionAt: crossing.occurredAt,
                    lastKind: .exit),
                closeEventId: state.openEventId, end: crossing.occurredAt, exitEvent: nil)
        }
        guard let geofence else { return .nothing(.ignored("unknown geofence \(crossing.geofenceId)")) }
        guard geofence.isActive else { return .nothing(.ignored("geofence \(geofence.name) is inactive")) }
        let current = state ?? RegionVisitState(geofenceId: geofence.id)
        if let last = current.lastTransitionAt, crossing.occurredAt < last {
            return .nothing(.ignored("older than the last recorded crossing"))
        }
        switch crossing.kind {
        case .enter:
            guard !current.inside else { return .nothing(.duplicate) }
            let event = geofence.entryEventTypeId.map { type in
                Event(
                    id: newId(), eventTypeId: type, timestamp: crossing.occurredAt,
                    notes: "Arrived at \(geofence.name)",
                    sourceType: .geofence, geofenceId: geofence.id, location: crossing.location ?? geofence.center,
                    locationName: geofence.name)
            }
            let next = RegionVisitState(
                geofenceId: geofence.id, inside: true, openEventId: event?.id, lastTransitionAt: crossing.occurredAt,
                lastKind: .enter)
            return .enter(state: next, event: event)
        case .exit:
            guard current.inside else { return .nothing(.duplicate) }
            let next = RegionVisitState(
                geofenceId: geofence.id, inside: false, openEventId: nil, lastTransitionAt: crossing.occurredAt,
                lastKind: .exit)
            if let exitType = geofence.exitEventTypeId {
                let event = Event(
                    id: newId(), eventTypeId: exitType, timestamp: crossing.occurredAt, notes: "Left \(geofence.name)",
                    sourceType: .geofence, geofenceId: geofence.id, location: crossing.location ?? geofence.center,
                    locationName: geofence.name)
                return .exit(state: next, closeEventId: nil, end: crossing.occurredAt, exitEvent: event)
            }
            return .exit(state: next, closeEventId: current.openEventId, end: crossing.occurredAt, exitEvent: nil)
        }
    }
}
