import Foundation
import TrendyAPI

/// Where a kept conflict stands on this install.
public enum ConflictState: String, Sendable, Hashable, Codable {
    /// Waiting for the person.
    case open
    /// Closed without a change.
    case dismissed
    /// Its losing value was made current again.
    case restored
    /// Restored or dismissed on another device.
    case resolvedElsewhere = "resolved_elsewhere"
}

/// A conflict as this install keeps it.
public struct StoredConflict: Sendable, Hashable, Codable {
    /// The conflict, as the server (or a pull) recorded it.
    public var conflict: SyncConflict
    /// Where it stands here.
    public var state: ConflictState

    /// Creates a value.
    public init(conflict: SyncConflict, state: ConflictState) {
        self.conflict = conflict
        self.state = state
    }
}

/// One outbox entry, as `sync explain` shows it.
public struct ExplainedChange: Sendable, Hashable, Codable {
    /// Position in the queue.
    public var seq: Int64
    /// Create, update or delete.
    public var kind: MutationKind
    /// The fields an update sends (wire names); empty for creates and deletes.
    public var fields: [String]
    /// The payload as stored.
    public var payload: String?
    /// The idempotency key it is sent with.
    public var idempotencyKey: String
    /// Pending, in flight or failed.
    public var state: OutboxState
    /// Failed attempts so far.
    public var attempts: Int
    /// Whether it was ever handed to the network (and not refused).
    public var sent: Bool
    /// The cursor it was made on (nil: sent without a base).
    public var baseVersion: Int64?
    /// The last error.
    public var lastError: String?
    /// Not before this time (backing off).
    public var nextAttemptAt: Date?

    /// Creates a value.
    public init(
        seq: Int64, kind: MutationKind, fields: [String], payload: String?, idempotencyKey: String, state: OutboxState,
        attempts: Int, sent: Bool, baseVersion: Int64?, lastError: String?, nextAttemptAt: Date?
    ) {
        self.seq = seq
        self.kind = kind
        self.fields = fields
        self.payload = payload
        self.idempotencyKey = idempotencyKey
        self.state = state
        self.attempts = attempts
        self.sent = sent
        self.baseVersion = baseVersion
        self.lastError = lastError
        self.nextAttemptAt = nextAttemptAt
    }

    enum CodingKeys: String, CodingKey {
        case seq, kind, fields, payload, state, attempts, sent
        case idempotencyKey = "idempotency_key"
        case baseVersion = "base_version"
        case lastError = "last_error"
        case nextAttemptAt = "next_attempt_at"
    }
}

/// Everything one install knows about one entity's sync (`trendy sync explain`).
public struct SyncExplanation: Sendable, Hashable, Codable {
    /// The entity id asked about.
    public var entityId: String
    /// Its kind, when anything here names it.
    public var entity: SyncEntity?
    /// Its local copy (JSON), nil when there is none.
    public var local: String?
    /// Its local sync status.
    public var syncStatus: EntitySyncStatus?
    /// Whether a local delete stops the server's copy from coming back.
    public var tombstoned: Bool
    /// The event type this event was deleted with here (a type's cascade): only a server copy
    /// still of that type is held back; one another device moved to another type comes back.
    public var deletedWithType: String?
    /// The event the server de-duplicated this one into (same type and time, logged or imported
    /// on another device first); this device's fields were sent as edits of that event.
    public var mergedInto: String?
    /// The id this event went again under: the server had deleted it before this device first
    /// sent its create (an archive imported again after the delete).
    public var revivedAs: String?
    /// Its outbox entries, in queue order.
    public var changes: [ExplainedChange]
    /// The change-feed cursor this install has applied: every server change up to it is here,
    /// except fields a waiting local change keeps.
    public var cursor: Int64?
    /// Conflicts about it.
    public var conflicts: [StoredConflict]
    /// What the next pass will do with it, in words.
    public var nextStep: String

    /// Creates a value.
    public init(
        entityId: String, entity: SyncEntity?, local: String?, syncStatus: EntitySyncStatus?, tombstoned: Bool,
        changes: [ExplainedChange], cursor: Int64?, conflicts: [StoredConflict], nextStep: String,
        deletedWithType: String? = nil, mergedInto: String? = nil, revivedAs: String? = nil
    ) {
        self.deletedWithType = deletedWithType
        self.mergedInto = mergedInto
        self.revivedAs = revivedAs
        self.entityId = entityId
        self.entity = entity
        self.local = local
        self.syncStatus = syncStatus
        self.tombstoned = tombstoned
        self.changes = changes
        self.cursor = cursor
        self.conflicts = conflicts
        self.nextStep = nextStep
    }

    enum CodingKeys: String, CodingKey {
        case entity, local, tombstoned, changes, cursor, conflicts
        case entityId = "entity_id"
        case syncStatus = "sync_status"
        case nextStep = "next_step"
        case deletedWithType = "deleted_with_type"
        case mergedInto = "merged_into"
        case revivedAs = "revived_as"
    }
}
