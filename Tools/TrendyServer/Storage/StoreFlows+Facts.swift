import Foundation
import TrendyAPI
import TrendyModels

// What the write flows read (D50): each store fills these in its own dialect and transaction.

/// An entity's last content kept at its delete (a `deleted_entities` row with a body; a row
/// without one marks an id deleted that the user never had here, and reads as none).
struct Tombstone: Sendable {
    /// The entity's JSON with timestamps.
    var body: String
    /// The device that deleted it.
    var device: String
    /// When, in seconds since 1970.
    var deletedAt: Double
}

/// What a create of an event type or a geofence reads.
struct CreateFacts<Entity: Codable & Sendable & Hashable> {
    /// Whether any user's entity holds the id.
    var taken: Bool
    /// The user's own entity under the id.
    var stored: Timestamped<Entity>?
    /// Whether the user deleted an entity under the id.
    var deleted = false
    /// The user's latest change-feed cursor when it was deleted (nil: deleted before it was kept).
    var deletedVersion: Int64? = nil
}

/// An id the user deleted (a `deleted_entities` row), and their change-feed cursor then (nil:
/// deleted before it was kept).
struct DeletedId: Sendable {
    var version: Int64?
}

/// What an edit or a delete of one entity reads.
struct EditFacts<Entity: Codable & Sendable & Hashable> {
    /// The entity, if it is there.
    var stored: Timestamped<Entity>?
    /// Its tombstone, read when it is not there.
    var tombstone: Tombstone?
    /// The fields other devices set after the change's base, oldest first (none without a base).
    var changed: [FieldVersion]
}

/// The events an event type's delete takes with it, and the geofences that name it.
struct TypeDeleteFacts {
    /// One event of the type: its JSON, create time and the changes its deleting device had not seen.
    struct Member {
        var id: String
        var body: String
        var createdAt: Double
        var changed: [FieldVersion]
    }

    var type: EditFacts<EventType>
    var events: [Member]
    /// The events created after the deleting device's base (the feed's creates after its cursor).
    var unseen: Set<String>
    /// Every geofence of the user, as id and JSON.
    var geofences: [(id: String, body: String)]
    /// The type's property definitions, as id and JSON (they go with it).
    var definitions: [(id: String, body: String)] = []
}

/// The de-duplication key of an event: manual and imported events by type and time, HealthKit
/// samples by their external id, geofence events by none.
enum DedupKey: Hashable {
    case manual(typeId: String, timestampMs: Int64)
    case healthkit(externalId: String)

    init?(_ event: Event) {
        switch event.sourceType {
        case .manual, .imported:
            self = .manual(typeId: event.eventTypeId.description, timestampMs: StoreRules.milliseconds(event.timestamp))
        case .healthkit:
            guard let external = event.externalId else { return nil }
            self = .healthkit(externalId: external)
        case .geofence:
            return nil
        }
    }
}

/// What a batch of event creates reads, in a few set queries: the batch's ids (taken, and by
/// whom), deleted ids, the user's types and geofences it names, and stored duplicates by key.
struct BatchFacts {
    var taken: [String: (userId: String, body: String)] = [:]
    var deleted: [String: DeletedId] = [:]
    var types: Set<String> = []
    /// The named geofences the user has or had (an event logged before a delete synced names it).
    var geofences: Set<String> = []
    var duplicates: [DedupKey: String] = [:]
    /// The property definitions of the batch's types that events with properties name.
    var definitions: [String: [PropertyDefinition]] = [:]
}

/// What an event's edit must ask the store about the edited event (nil: nothing to ask).
struct EventQuestions {
    /// A geofence the edit newly names: is it the user's, or was it?
    var geofence: UUIDv7?
    /// A type the edit moves the event to: is it the user's?
    var type: String?
    /// The edited event: which stored event has its de-duplication key?
    var duplicateOf: Event?
    /// The properties the edit leaves (and had), checked against the definitions of the type.
    var properties: (typeId: String, after: [String: PropertyValue], before: [String: PropertyValue])?
}

/// The store's answers to ``EventQuestions``.
struct EventAnswers {
    var geofenceKnown = true
    var typeKnown = true
    var duplicateId: String?
    /// The issues of the edit's new or changed property values.
    var propertyIssues: [FieldIssue] = []
}

/// A new event of a batch: where its outcome is, and its JSON.
struct NewEvent {
    var index: Int
    var event: Event
    var body: String
    /// The device whose feed leaves the create out (D57): the sender's, unless a later item
    /// of the batch merged into it.
    var echo: String? = nil
}
