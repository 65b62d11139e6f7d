import Foundation
import TrendyModels

/// Whether a local entity has reached the server.
public enum EntitySyncStatus: String, Sendable, Hashable, Codable {
    /// Changed locally; waiting to be pushed.
    case pending
    /// The server has it as it is here.
    case synced
    /// The server refused it, or retries ran out; see the outbox entry's error.
    case failed
}

/// An entity as the local store holds it.
public struct LocalRecord<Value: Sendable & Hashable>: Sendable, Hashable {
    /// The entity.
    public var value: Value
    /// Its sync status.
    public var syncStatus: EntitySyncStatus

    /// Creates a record.
    public init(_ value: Value, syncStatus: EntitySyncStatus) {
        self.value = value
        self.syncStatus = syncStatus
    }
}

/// What a bulk insert did.
public struct InsertSummary: Sendable, Hashable, Codable {
    /// Events stored now.
    public var inserted: Int
    /// Events skipped because an identical one (same type and time, or same id) exists.
    public var duplicates: Int

    /// Creates a summary.
    public init(inserted: Int, duplicates: Int) {
        self.inserted = inserted
        self.duplicates = duplicates
    }
}

/// Why a local write was refused.
public enum LocalStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No such entity here.
    case notFound(String)
    /// The value is invalid.
    case invalid(ValidationError)
    /// It conflicts with what is stored (duplicate name).
    case conflict(String)

    /// A readable explanation.
    public var description: String {
        switch self {
        case .notFound(let what): return "no such \(what)"
        case .invalid(let e): return e.description
        case .conflict(let d): return d
        }
    }
}

/// Local-first reads and writes. Every write and its outbox entry commit in one transaction;
/// the caller sees the change at once; nothing waits for the network.
///
/// Threading: all methods run their database work off the caller's actor (GRDB's queues).
public protocol LocalStore: Sendable {
    /// Whether this device has downloaded the account's history once (its first download
    /// finished); false before, and after a sign-in to another account.
    func historyDownloaded() async throws -> Bool
    /// A full download cut short that the next sync goes on with (D69): how many events it has
    /// stored; nil when none waits.
    func downloadCutShort() async throws -> Int?

    /// Event types by name.
    func eventTypes() async throws -> [LocalRecord<EventType>]
    /// One event type by id.
    func eventType(id: UUIDv7) async throws -> LocalRecord<EventType>?
    /// One event type by name (case-insensitive).
    func eventType(named name: String) async throws -> LocalRecord<EventType>?
    /// Creates an event type.
    func createEventType(_ type: EventType) async throws
    /// The type named like `type` (case-insensitive) if there is one, else `type`, created: in
    /// one transaction, so processes creating the same name at once all get the same type.
    func findOrCreateEventType(_ type: EventType) async throws -> (type: EventType, created: Bool)
    /// Replaces an event type's fields.
    func updateEventType(_ type: EventType) async throws
    /// Deletes an event type and its events.
    func deleteEventType(id: UUIDv7) async throws

    /// Newest events first, at most `limit`, optionally only those at or after `since`.
    func events(limit: Int, since: Date?) async throws -> [LocalRecord<Event>]
    /// One page of the newest-first list, of one type when `typeId` is given: `limit` events after
    /// the first `offset` (an index range read; nothing before the page is decoded).
    func eventPage(offset: Int, limit: Int, typeId: UUIDv7?) async throws -> [LocalRecord<Event>]
    /// How many events come before the event `id` in the newest-first list (of one type when
    /// `typeId` is given): where it stands, counted in the time index. Nil when it is not there.
    func eventPosition(id: UUIDv7, typeId: UUIDv7?) async throws -> Int?
    /// One page of the newest-first list of the events `filter` lets through (text, type, source),
    /// walking the time index until the page is full.
    func eventPage(offset: Int, limit: Int, filter: EventFilter) async throws -> [LocalRecord<Event>]
    /// This install's device id (the one the server records with its changes).
    func deviceId() async throws -> String
    /// How many events of each type fall at or after `from` and before `to` (counted, not loaded).
    func eventCountsByType(from: Date, to: Date) async throws -> [UUIDv7: Int]
    /// How many events fall at or after `from` and before `to`: a bounded range of the time index,
    /// so a day's count costs that day's events, whatever the account holds.
    func eventCount(from: Date, to: Date) async throws -> Int
    /// One event.
    func event(id: UUIDv7) async throws -> LocalRecord<Event>?
    /// Creates an event.
    func createEvent(_ event: Event) async throws
    /// Creates many events in chunks; duplicates (same id, or same type and time for manual and
    /// imported events) are skipped, so importing twice adds nothing.
    func insertEvents(_ events: [Event]) async throws -> InsertSummary
    /// Replaces an event's fields.
    func updateEvent(_ event: Event) async throws
    /// Deletes an event.
    func deleteEvent(id: UUIDv7) async throws

    /// Geofences.
    func geofences() async throws -> [LocalRecord<Geofence>]
    /// Creates a geofence.
    func createGeofence(_ geofence: Geofence) async throws
    /// Replaces a geofence's fields.
    func updateGeofence(_ geofence: Geofence) async throws
    /// Deletes a geofence.
    func deleteGeofence(id: UUIDv7) async throws

    /// Property definitions, of one type when `typeId` is given, in display order then key.
    func propertyDefinitions(ofType typeId: UUIDv7?) async throws -> [LocalRecord<PropertyDefinition>]
    /// Creates a property definition; its type must exist and must not have the key (in any case).
    func createPropertyDefinition(_ definition: PropertyDefinition) async throws
    /// Replaces a definition's fields (never its key or type).
    func updatePropertyDefinition(_ definition: PropertyDefinition) async throws
    /// Deletes a definition; the values events hold under its key stay.
    func deletePropertyDefinition(id: UUIDv7) async throws
    /// Every key events (of one type, when given) hold values under, defined or not, sorted:
    /// the columns an export needs.
    func propertyKeysInUse(ofType typeId: UUIDv7?) async throws -> [String]

    /// Local changes not yet on the server, and the ones that failed.
    func outboxCounts() async throws -> (pending: Int, failed: Int)
    /// A mark that grows with every local change queued, by this process or another one of the
    /// install: two readings differ when something was written in between (the running app
    /// learns of `trendy log` in another terminal this way).
    func localChangeMark() async throws -> Int64
    /// Whether the entity `id` was edited or deleted here (by any process of this install) after
    /// the change mark `mark`, whether or not that change was sent since.
    func changedLocally(_ id: String, after mark: Int64) async throws -> Bool
    /// The failed entries with their errors.
    func failedChanges() async throws -> [FailedChange]
    /// Puts failed entries back in the queue (a person asked to retry).
    func retryFailed() async throws -> Int
    /// Hands the local data to `userId`, whose sign-in gave `email` (nil: not known). Another
    /// account's synced data is cleared, its unsynced data is never discarded (throws instead) —
    /// except when that account had the same email: a server that lost the account (restored
    /// from a backup without it) is signed up to again, and every entity here goes to the new
    /// account at the next sync, unsent changes included.
    @discardableResult func claim(for userId: String, email: String?) async throws -> LocalClaim
    /// The account the local data belongs to (nil before the first sign-in claimed it).
    func owner() async throws -> String?
    /// The email the owner's last sign-in gave (nil before one recorded it).
    func ownerEmail() async throws -> String?

    /// Conflicts kept on this install, newest first; closed ones (dismissed, restored) too when asked.
    func conflicts(includeClosed: Bool) async throws -> [StoredConflict]
    /// How many conflicts are open.
    func openConflictCount() async throws -> Int
    /// Closes a conflict without changing anything.
    func dismissConflict(id: String) async throws
    /// Makes a conflict's losing value current again — an ordinary local edit that syncs. A
    /// deleted entity comes back as a new one with `newId` and its last content; a deleted event
    /// comes back in `eventType` when one is given (its own type may be gone with it). Returns the
    /// id of the entity that now holds the value.
    func restoreConflict(id: String, newId: UUIDv7, eventType: UUIDv7?) async throws -> String
    /// Everything this install knows about one entity's sync.
    func explain(entityId: String) async throws -> SyncExplanation
}

/// A local change the server refused or that ran out of retries.
public struct FailedChange: Sendable, Hashable, Codable {
    /// The entity kind.
    public var entity: SyncEntity
    /// The entity id.
    public var entityId: String
    /// What was being sent.
    public var kind: MutationKind
    /// Why it failed.
    public var error: String
    /// How many attempts were made.
    public var attempts: Int

    /// Creates a value.
    public init(entity: SyncEntity, entityId: String, kind: MutationKind, error: String, attempts: Int) {
        self.entity = entity
        self.entityId = entityId
        self.kind = kind
        self.error = error
        self.attempts = attempts
    }

    enum CodingKeys: String, CodingKey {
        case entity
        case entityId = "entity_id"
        case kind, error, attempts
    }
}

/// The sync engine: pushes the outbox and pulls the change feed, one pass at a time.
///
/// Threading: an actor; `status` is a lock read usable from any thread.
public protocol SyncEngine: Sendable {
    /// The status right now.
    var status: SyncStatus { get }
    /// Status changes, starting with the current status.
    func statusUpdates() -> AsyncStream<SyncStatus>
    /// Loads the pending and failed counts and the last sync time into the status (cheap).
    func refreshCounts() async
    /// Runs a pass (or joins the running one and its follow-up); `full` re-downloads everything.
    func sync(full: Bool) async -> SyncRun
    /// Runs a pass that pushes every pending change and then moves the cursor to the server's
    /// latest instead of pulling (its `pulled` is 0: not even the echo of its own pushes).
    func skipToLatest() async -> SyncRun
    /// Tells the engine a local write happened: a running pass schedules a follow-up.
    func localWriteHappened() async
    /// The last passes, newest first.
    func history() async throws -> [SyncRun]
}

/// The priority a sync pass runs at when nobody is waiting for it: below the interactive path,
/// so a keystroke and a screen's read are answered first on a busy machine (D62). On Linux
/// Dispatch gives each priority its own threads and `nice` (`.utility`: 2; `.medium`: 0), so
/// this is CPU priority, not only an order. A pass is escalated to its waiter's priority while
/// someone awaits it (an exit waiting for the last pass), as Swift escalates any awaited task.
public enum SyncPriority {
    /// What an app starts its passes at (`Task(priority: SyncPriority.pass)`).
    public static let pass: TaskPriority = .utility
}

/// What a sign-in did to the local data (``LocalStore/claim(for:email:)``).
public enum LocalClaim: Sendable, Equatable {
    /// Nothing: the data was this account's already, or there was none.
    case unchanged
    /// Another account's synced data was cleared (its server has it).
    case cleared
    /// The data of an earlier account with the same email (`previous`) stays and goes to this one.
    case carriedOver(previous: String)
}

extension LocalStore {
    /// Hands the local data to `userId` without an email (see ``claim(for:email:)``); returns
    /// whether data was cleared.
    @discardableResult public func claim(for userId: String) async throws -> Bool {
        try await claim(for: userId, email: nil) == .cleared
    }

    /// ``restoreConflict(id:newId:eventType:)`` into the event's own type.
    public func restoreConflict(id: String, newId: UUIDv7) async throws -> String {
        try await restoreConflict(id: id, newId: newId, eventType: nil)
    }
}

/// Which events a search lets through; every condition given must hold.
public struct EventFilter: Sendable, Hashable {
    /// Words found, ignoring case, in the note, the place's name or the type's name.
    public var text: String?
    /// Only events of this type.
    public var typeId: UUIDv7?
    /// Only events that came this way (e.g. geofence visits).
    public var source: SourceType?
    /// Only events at or after this time.
    public var since: Date?
    /// Only events before this time.
    public var until: Date?
    /// Only events holding each of these values under its key (the key as written).
    public var properties: [String: PropertyValue] = [:]
    /// Only events listed after this one (older, or as old with a smaller id): a page that
    /// follows another from the time index at once, however deep (an offset walks past every
    /// event before it). Not with `text` (the index's order is its own).
    public var after: Event?

    /// A filter of the conditions given (none: every event).
    public init(
        text: String? = nil, typeId: UUIDv7? = nil, source: SourceType? = nil, since: Date? = nil, until: Date? = nil,
        properties: [String: PropertyValue] = [:]
    ) {
        self.properties = properties
        self.text = text
        self.typeId = typeId
        self.source = source
        self.since = since
        self.until = until
    }
}
