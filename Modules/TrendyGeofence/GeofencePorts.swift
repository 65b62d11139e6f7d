import Foundation
import TrendyModels

/// The saved geofences, as the manager plans with them: the one call Geofence needs from the
/// install's storage (its caller-owned port; the live one reads Sync's local store).
public protocol GeofenceSource: Sendable {
    /// Every saved geofence, active or not.
    func geofences() async throws -> [Geofence]
}

/// Records crossings and the per-geofence visit state, together with the events they create, in
/// one transaction each (the live ledger shares the install database with Sync, so events go
/// through the outbox in the same commit). Handling a crossing id twice does nothing the second
/// time; two deliveries at once serialize.
public protocol GeofenceVisitLedger: Sendable {
    /// The recorded state of every geofence that has one.
    func states() async throws -> [UUIDv7: RegionVisitState]
    /// The recorded state of one geofence.
    func state(of geofence: UUIDv7) async throws -> RegionVisitState?
    /// Handles one crossing exactly once (see ``VisitRules``).
    func record(_ crossing: RegionCrossing) async throws -> CrossingOutcome
    /// The last handled crossing per geofence, with its outcome name.
    func lastCrossings() async throws -> [UUIDv7: HandledCrossing]
}

/// A crossing the ledger handled.
public struct HandledCrossing: Sendable, Hashable, Codable {
    /// The crossing.
    public var crossing: RegionCrossing
    /// What handling it did.
    public var outcome: CrossingOutcome.Kind
    /// When it was handled.
    public var handledAt: Date

    /// Creates a value.
    public init(crossing: RegionCrossing, outcome: CrossingOutcome.Kind, handledAt: Date) {
        self.crossing = crossing
        self.outcome = outcome
        self.handledAt = handledAt
    }

    enum CodingKeys: String, CodingKey {
        case crossing, outcome
        case handledAt = "handled_at"
    }
}

/// A durable buffer for crossings that arrive before the app is up (a background launch): written
/// first thing, read when the manager starts, each entry removed once the ledger has it.
public protocol RegionEventInbox: Sendable {
    /// Stores `crossing` durably (it survives a crash right after this returns).
    func append(_ crossing: RegionCrossing) throws
    /// Everything stored, oldest first; unreadable entries are reported, not returned.
    func pending() throws -> [RegionCrossing]
    /// Forgets a handled crossing.
    func remove(id: String) throws
}
