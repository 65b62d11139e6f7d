import Foundation

/// The kind of entity a local change is about.
public enum SyncEntity: String, Sendable, Hashable, Codable, CaseIterable {
    /// An event type.
    case eventType = "event_type"
    /// An event.
    case event
    /// A geofence.
    case geofence
    /// A custom property of an event type.
    case propertyDefinition = "property_definition"
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
/// flight, or that was ever handed to the network (its idempotency key may have reached the
/// server with its old body), is never changed: the new change gets its own entry. An entry the
/// server refused was never applied, so a new change to its entity revives it with the latest
/// data (the way to fix a refused change is to edit it); a refused create followed by a delete
/// sends nothing.
public enum OutboxCoalescing {
    /// The decision.
    public enum Decision: Sendable, Hashable {
        /// Add a new entry.
        case append(MutationKind)
        /// Replace the waiting entry's kind and payload (its idempotency key is kept: it was never sent).
        case replace(MutationKind)
        /// Put a refused entry back in the queue with this kind, the latest payload and a new
        /// idempotency key (the old one went with a body the server refused and did not apply).
        case revive(MutationKind)
        /// Remove the waiting entry; send nothing.
        case dropExisting
    }

    /// The entry already there for the entity: its kind, its state, and whether it was ever
    /// handed to the network without being refused (so the server may have applied it).
    public typealias Existing = (kind: MutationKind, state: OutboxState, sent: Bool)

    /// Decides how `incoming` combines with `existing` (nil when nothing is waiting). A `failed`
    /// entry that was not `sent` is one the server refused.
    public static func decide(existing: Existing?, incoming: MutationKind) -> Decision {
        guard let existing, !existing.sent, existing.state != .inFlight else { return .append(incoming) }
        let refused = existing.state == .failed
        let merged: MutationKind
        switch (existing.kind, incoming) {
        case (.create, .delete): return .dropExisting
        case (.delete, _): return .append(incoming)
        case (.create, .update), (.create, .create), (.update, .create): merged = existing.kind
        case (.update, .update): merged = .update
        case (.update, .delete): merged = .delete
        }
        return refused ? .revive(merged) : .replace(merged)
    }
}
