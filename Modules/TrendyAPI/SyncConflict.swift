import Foundation
import TrendyModels

/// What a change was based on: the change-feed cursor the device had applied when the person
/// made it, and the device that made it. Sent with updates and deletes
/// (``APIPaths/baseVersionHeader``, ``APIPaths/deviceIdHeader``) so the server can tell a
/// concurrent change (one the device had not seen) from a later one, field by field.
///
/// It travels as a task-local value around a client call (the way a trace context does), so
/// every `TrendyAPIClient` — the live one and any wrapper — carries it without a parameter:
/// `ChangeBase.$current.withValue(base) { try await api.updateEvent(...) }`.
public struct ChangeBase: Sendable, Hashable {
    /// The feed cursor the change was made on (0: the device had seen nothing).
    public var version: Int64
    /// The device that made the change.
    public var deviceId: String

    /// Creates a base.
    public init(version: Int64, deviceId: String) {
        self.version = version
        self.deviceId = deviceId
    }

    /// The base of the change being sent by the current task, if any.
    @TaskLocal public static var current: ChangeBase?
}

/// Which kind of conflict was recorded.
public enum ConflictKind: String, Codable, Sendable, Hashable {
    /// Two devices changed the same field concurrently; the later to reach the server won.
    case field
    /// The entity was deleted while another device's edits were not seen by the deleter (or an
    /// edit arrived after the delete): the delete won, the edits are kept here.
    case deleted
}

/// A concurrent change that lost, kept so nothing a person entered disappears without a trace.
/// Values are JSON texts (`"\"from A\""`, `"null"`), exactly as the field is sent in a `PATCH`.
public struct SyncConflict: Codable, Sendable, Hashable {
    /// The conflict's id.
    public var id: String
    /// The kind of conflict.
    public var kind: ConflictKind
    /// The kind of entity.
    public var entityType: ChangeEntity
    /// The entity's id.
    public var entityId: String
    /// The field (`field` conflicts), by its wire name.
    public var field: String?
    /// The value that is current (JSON text); nil for `deleted` (the entity is gone).
    public var keptValue: String?
    /// The value that lost (JSON text); for `deleted`, the lost edits as a patch object.
    public var lostValue: String
    /// The device whose change won ("unknown" when it did not say).
    public var keptBy: String
    /// When the winning change reached the server.
    public var keptAt: Date
    /// The device whose change lost.
    public var lostBy: String
    /// When the losing change reached the server.
    public var lostAt: Date
    /// When the server detected the conflict.
    public var detectedAt: Date
    /// For `deleted`: the entity's last content with the lost edits applied (JSON text), from
    /// which it can be restored.
    public var entity: String?

    /// Creates a conflict.
    public init(
        id: String, kind: ConflictKind, entityType: ChangeEntity, entityId: String, field: String?,
        keptValue: String?, lostValue: String, keptBy: String, keptAt: Date, lostBy: String, lostAt: Date,
        detectedAt: Date, entity: String? = nil
    ) {
        self.id = id
        self.kind = kind
        self.entityType = entityType
        self.entityId = entityId
        self.field = field
        self.keptValue = keptValue
        self.lostValue = lostValue
        self.keptBy = keptBy
        self.keptAt = keptAt
        self.lostBy = lostBy
        self.lostAt = lostAt
        self.detectedAt = detectedAt
        self.entity = entity
    }

    enum CodingKeys: String, CodingKey {
        case id, kind, field, entity
        case entityType = "entity_type"
        case entityId = "entity_id"
        case keptValue = "kept_value"
        case lostValue = "lost_value"
        case keptBy = "kept_by"
        case keptAt = "kept_at"
        case lostBy = "lost_by"
        case lostAt = "lost_at"
        case detectedAt = "detected_at"
    }
}
