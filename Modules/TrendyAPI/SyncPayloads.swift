import Foundation
import TrendyModels

/// What kind of entity a change is about.
public enum ChangeEntity: String, Codable, Sendable, CaseIterable {
    /// An event.
    case event
    /// An event type.
    case eventType = "event_type"
    /// A geofence.
    case geofence
    /// A custom property of an event type.
    case propertyDefinition = "property_definition"
    /// The user's onboarding status.
    case onboarding
    /// A conflict the server recorded (``SyncConflict``); only ever created.
    case conflict
}

/// What happened to the entity.
public enum ChangeOperation: String, Codable, Sendable {
    /// Created.
    case create
    /// Changed.
    case update
    /// Deleted.
    case delete
}

/// The entity's state after a create or update.
public enum ChangeData: Sendable, Hashable {
    /// An event.
    case event(Timestamped<Event>)
    /// An event type.
    case eventType(Timestamped<EventType>)
    /// A geofence.
    case geofence(Timestamped<Geofence>)
    /// A property definition.
    case propertyDefinition(Timestamped<PropertyDefinition>)
    /// The onboarding status.
    case onboarding(OnboardingStatus)
    /// A recorded conflict.
    case conflict(SyncConflict)
}

/// One entry of the change feed.
public struct Change: Codable, Sendable, Hashable {
    /// The feed position; strictly increasing.
    public var cursor: Int64
    /// The kind of entity.
    public var entityType: ChangeEntity
    /// The entity's id (the user id for onboarding).
    public var entityId: String
    /// What happened.
    public var operation: ChangeOperation
    /// The entity after the change; nil for deletes.
    public var data: ChangeData?
    /// When the change was recorded.
    public var createdAt: Date
    /// `data` exactly as the server sent it, when the reader kept it (``ChangesPage/fastRead(_:)``
    /// does for events): a store can keep that text instead of encoding the entity again. It
    /// says the same as `data`, so it takes no part in equality or coding.
    public var dataJSON: String?

    /// Creates a change.
    public init(
        cursor: Int64, entityType: ChangeEntity, entityId: String, operation: ChangeOperation, data: ChangeData?,
        createdAt: Date, dataJSON: String? = nil
    ) {
        self.cursor = cursor
        self.entityType = entityType
        self.entityId = entityId
        self.operation = operation
        self.data = data
        self.createdAt = createdAt
        self.dataJSON = dataJSON
    }

    /// Equal when everything but ``dataJSON`` is.
    public static func == (lhs: Change, rhs: Change) -> Bool {
        lhs.cursor == rhs.cursor && lhs.entityType == rhs.entityType && lhs.entityId == rhs.entityId
            && lhs.operation == rhs.operation && lhs.data == rhs.data && lhs.createdAt == rhs.createdAt
    }

    /// Hashes what ``==(_:_:)`` compares (a subset of it).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(cursor)
        hasher.combine(entityId)
        hasher.combine(operation)
        hasher.combine(data)
    }

    enum CodingKeys: String, CodingKey {
        case cursor
        case entityType = "entity_type"
        case entityId = "entity_id"
        case operation, data
        case createdAt = "created_at"
    }

    /// Decodes `data` according to `entity_type`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        cursor = try c.decode(Int64.self, forKey: .cursor)
        entityType = try c.decode(ChangeEntity.self, forKey: .entityType)
        entityId = try c.decode(String.self, forKey: .entityId)
        operation = try c.decode(ChangeOperation.self, forKey: .operation)
        createdAt = try c.decode(Date.self, forKey: .createdAt)
        if try !c.contains(.data) || c.decodeNil(forKey: .data) {
            data = nil
        } else {
            switch entityType {
            case .event: data = .event(try c.decode(Timestamped<Event>.self, forKey: .data))
            case .eventType: data = .eventType(try c.decode(Timestamped<EventType>.self, forKey: .data))
            case .geofence: data = .geofence(try c.decode(Timestamped<Geofence>.self, forKey: .data))
            case .propertyDefinition:
                data = .propertyDefinition(try c.decode(Timestamped<PropertyDefinition>.self, forKey: .data))
            case .onboarding: data = .onboarding(try c.decode(OnboardingStatus.self, forKey: .data))
            case .conflict: data = .conflict(try c.decode(SyncConflict.self, forKey: .data))
            }
        }
    }

    /// Encodes `data` as the entity's own object.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(cursor, forKey: .cursor)
        try c.encode(entityType, forKey: .entityType)
        try c.encode(entityId, forKey: .entityId)
        try c.encode(operation, forKey: .operation)
        try c.encode(createdAt, forKey: .createdAt)
        switch data {
        case .none: try c.encodeNil(forKey: .data)
        case .event(let v): try c.encode(v, forKey: .data)
        case .eventType(let v): try c.encode(v, forKey: .data)
        case .geofence(let v): try c.encode(v, forKey: .data)
        case .propertyDefinition(let v): try c.encode(v, forKey: .data)
        case .onboarding(let v): try c.encode(v, forKey: .data)
        case .conflict(let v): try c.encode(v, forKey: .data)
        }
    }
}

/// `GET /changes`: a page of the feed.
public struct ChangesPage: Codable, Sendable, Hashable {
    /// Changes after the requested cursor, oldest first.
    public var changes: [Change]
    /// The cursor to ask from next (the last change's, or the requested one when empty).
    public var nextCursor: Int64
    /// Whether more changes follow.
    public var hasMore: Bool
    /// When the change `nextCursor` names was written, as the server wrote it; sent back as
    /// `since_at`, it lets the server tell that the change is still the one this device read
    /// (D59). Nil from a server that does not say.
    public var nextCursorAt: String?

    /// Creates a page.
    public init(changes: [Change], nextCursor: Int64, hasMore: Bool, nextCursorAt: String? = nil) {
        self.changes = changes
        self.nextCursor = nextCursor
        self.hasMore = hasMore
        self.nextCursorAt = nextCursorAt
    }

    enum CodingKeys: String, CodingKey {
        case changes
        case nextCursor = "next_cursor"
        case hasMore = "has_more"
        case nextCursorAt = "next_cursor_at"
    }
}

/// `GET /changes/latest-cursor`.
public struct LatestCursor: Codable, Sendable, Hashable {
    /// The newest cursor of this user's feed (0 when empty).
    public var cursor: Int64
    /// When that change was written (nil when the feed is empty, or from a server that does not
    /// say): a device that starts reading at `cursor` sends it as `since_at` (D59).
    public var at: String?
    /// Creates a value.
    public init(cursor: Int64, at: String? = nil) {
        self.cursor = cursor
        self.at = at
    }
}

/// `GET /me/sync`: what the server holds for this user.
public struct SyncSummary: Codable, Sendable, Hashable {
    /// Events stored.
    public var eventCount: Int
    /// Event types stored.
    public var eventTypeCount: Int
    /// Geofences stored.
    public var geofenceCount: Int
    /// The newest cursor.
    public var latestCursor: Int64
    /// When the newest change was recorded.
    public var lastChangeAt: Date?

    /// Creates a summary.
    public init(eventCount: Int, eventTypeCount: Int, geofenceCount: Int, latestCursor: Int64, lastChangeAt: Date?) {
        self.eventCount = eventCount
        self.eventTypeCount = eventTypeCount
        self.geofenceCount = geofenceCount
        self.latestCursor = latestCursor
        self.lastChangeAt = lastChangeAt
    }

    enum CodingKeys: String, CodingKey {
        case eventCount = "event_count"
        case eventTypeCount = "event_type_count"
        case geofenceCount = "geofence_count"
        case latestCursor = "latest_cursor"
        case lastChangeAt = "last_change_at"
    }
}

/// `GET /api/v1/ready`: whether a server instance can serve requests (its database answers).
public struct Readiness: Codable, Sendable, Hashable {
    /// Whether the server takes traffic.
    public enum Status: String, Codable, Sendable, Hashable {
        /// Serving.
        case ready
        /// Not serving (its database does not answer).
        case unavailable
    }

    /// Whether the database answers.
    public enum Database: String, Codable, Sendable, Hashable {
        /// It answered.
        case ok
        /// It did not answer in time.
        case unreachable
    }

    /// `ready` or `unavailable`.
    public var status: Status
    /// `ok` or `unreachable`.
    public var database: Database
    /// Creates a value.
    public init(status: Status, database: Database) {
        self.status = status
        self.database = database
    }

    /// The readiness of a server whose database does (or does not) answer.
    public init(databaseUp up: Bool) {
        self.init(status: up ? .ready : .unavailable, database: up ? .ok : .unreachable)
    }
}

/// `GET /api/v1/health`: the process is up.
public struct HealthStatus: Codable, Sendable, Hashable {
    /// `ok`.
    public var status: String
    /// Server version.
    public var version: String
    /// Server time.
    public var time: Date
    /// Creates a value.
    public init(status: String, version: String, time: Date) {
        self.status = status
        self.version = version
        self.time = time
    }
}
