import Foundation

/// The kind of entity a local change is about.
public enum SyncEntity: String, Sendable, Hashable, Codable, CaseIterable {
    /// An event type.
    case eventType = "event_type"
    /// An event.
    case event
    /// A geofence.
    case geofence
}

/// A local change waiting to reach the server.
public enum MutationKind: String, Sendable, Hashable, Codable {
    /// Create the entity (payload: the whole entity).
    case create
    /// Update the entity (payload: the whole entity as it is now).
    case update
    /// Delete the entity (no payload).
    case delete
}

/// Where an outbox entry stands.
public enum OutboxState: String, Sendable, Hashable, Codable {
    /// Waiting to be sent.
    case pending
    /// Being sent right now (its payload must not change).
    case inFlight = "in_flight"
    /// Refused by the server or out of retries; surfaced to the person, not retried by itself.
    case failed
}

/// What to do with a new local change, given the entry already waiting for the same entity.
///
/// Coalescing keeps meaning: create+update → one create with the latest data; update+update →
/// one update; create+delete → nothing is sent; update+delete → delete. An entry that is in
/// flight, or that was already attempted (its idempotency key may have reached the server with
/// its old body), is never changed: the new change gets its own entry.
public enum OutboxCoalescing {
    /// The decision.
    public enum Decision: Sendable, Hashable {
        /// Add a new entry.
        case append(MutationKind)
        /// Replace the waiting entry's kind and payload (its idempotency key is kept: it was never sent).
        case replace(MutationKind)
        /// Remove the waiting entry; send nothing.
        case dropExisting
    }

    /// Decides how `incoming` combines with `existing` (nil when nothing is waiting).
    public static func decide(
        existing: (kind: MutationKind, state: OutboxState, attempts: Int)?, incoming: MutationKind
    ) -> Decision {
        guard let existing, existing.state == .pending, existing.attempts == 0 else { return .append(incoming) }
        switch (existing.kind, incoming) {
        case (.create, .update): return .replace(.create)
        case (.create, .delete): return .dropExisting
        case (.update, .update): return .replace(.update)
        case (.update, .delete): return .replace(.delete)
        case (.create, .create), (.update, .create): return .replace(existing.kind)
        case (.delete, _): return .append(incoming)
        }
    }
}
