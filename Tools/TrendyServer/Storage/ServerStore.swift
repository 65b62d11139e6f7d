import Foundation
import TrendyAPI
import TrendyModels

/// A user as the server stores it.
public struct StoredUser: Sendable, Equatable {
    /// The user id (UUID text).
    public var id: String
    /// The email address.
    public var email: String
    /// The bcrypt hash of the password.
    public var passwordHash: String
    /// When the user signed up.
    public var createdAt: Date
    /// When the user last changed.
    public var updatedAt: Date
    /// When the user last signed in.
    public var lastSignInAt: Date?
    /// GoTrue's `user_metadata`: what the user's apps keep about them (`PUT /user` `data`).
    public var userMetadata: [String: JSONValue] = [:]

    /// The GoTrue user object.
    public var goTrueUser: GoTrueUser {
        var user = GoTrueUser(
            id: id, email: email, emailConfirmedAt: createdAt, lastSignInAt: lastSignInAt, createdAt: createdAt,
            updatedAt: updatedAt)
        user.userMetadata = userMetadata
        return user
    }
}

/// What asking for a reauthentication code led to.
public enum ReauthenticationStart: Sendable, Equatable {
    /// A new code is stored (any earlier one is replaced).
    case started
    /// A code was sent moments ago; ask again after this many seconds.
    case tooSoon(retryAfter: Int)
}

/// What presenting a refresh token led to.
public enum RefreshOutcome: Sendable, Equatable {
    /// The token was current: it is now revoked and `newToken` replaces it.
    case rotated(sessionId: String, userId: String, newToken: String)
    /// The token was rotated moments ago (within the reuse window): the current token is returned.
    case reused(sessionId: String, userId: String, currentToken: String)
    /// The token was rotated long ago: the session has been revoked.
    case alreadyUsed
    /// No such token, or its session is gone.
    case notFound
}

/// Which sessions `POST /logout` ends.
public enum LogoutScope: String, Sendable {
    /// Every session of the user.
    case global
    /// Only this session.
    case local
    /// Every session except this one.
    case others
}

/// Why a store operation was refused.
public enum StoreError: Error, Sendable, Equatable {
    /// The entity does not exist for this user.
    case notFound(String)
    /// The operation conflicts with stored data.
    case conflict(String)
    /// Fields are invalid (e.g. a referenced event type does not exist).
    case validation([FieldIssue])
    /// The email is taken.
    case emailTaken
    /// The entity was deleted (an edit of it is kept as a conflict).
    case gone(String)
    /// A create of an id this user deleted: nothing is created, and nothing kept (410; D37). The
    /// id, and the user's cursor when it was deleted.
    case deletedId(String, version: Int64?)
    /// The database does not answer now (503: retry shortly; nothing was changed, or the
    /// transaction was rolled back).
    case unavailable(String)
}

/// The outcome of creating one event.
public enum EventCreateOutcome: Sendable, Equatable {
    /// Stored now.
    case created(Timestamped<Event>)
    /// Already stored (same id, or a duplicate by the de-duplication key).
    case existing(Timestamped<Event>)
    /// The id was this user's and was deleted: nothing is created (a late resend must not bring
    /// it back), and the sender learns it (a create it never sent before, such as an archive
    /// imported again, goes again under a new id). The id, and the user's cursor when it was
    /// deleted.
    case deleted(String, version: Int64?)
    /// Refused.
    case failed(StoreError)
}

/// One item of a batch of event edits (`POST /events/edits`): a field-level patch, or (nil) the
/// event's delete, with what it was based on.
public struct EventEdit: Sendable {
    /// The event's id.
    public var id: String
    /// The patch; nil deletes the event.
    public var update: EventUpdate?
    /// What the change was based on.
    public var base: ChangeBase?

    /// Creates an edit.
    public init(id: String, update: EventUpdate?, base: ChangeBase?) {
        self.id = id
        self.update = update
        self.base = base
    }
}

/// The outcome of one event edit of a batch.
public enum EventEditOutcome: Sendable, Equatable {
    /// The patch is applied; the event as it is now.
    case updated(Timestamped<Event>)
    /// The event is deleted.
    case deleted
    /// Not applied (`notFound`, `gone` with the edit kept as a conflict, a refusal).
    case failed(StoreError)

    /// An edit's answer.
    init(_ result: Result<Timestamped<Event>, StoreError>) {
        switch result {
        case .success(let event): self = .updated(event)
        case .failure(let error): self = .failed(error)
        }
    }
}

/// An event's place in the newest-first listing (timestamp, then id, both descending). Its
/// text form is the opaque page token of `GET /events` (`next` in a page, `after` in a request).
public struct EventPageKey: Sendable, Hashable {
    /// The event's timestamp in milliseconds.
    public var timestampMs: Int64
    /// The event's id.
    public var id: String

    /// Creates a key.
    public init(timestampMs: Int64, id: String) {
        self.timestampMs = timestampMs
        self.id = id
    }

    /// Reads a token; nil when it is not one this server wrote.
    public init?(token: String) {
        guard let separator = token.firstIndex(of: "_") else { return nil }
        // `-?[0-9]{1,18}`: the pattern the API description gives (every Int64 of 18 digits).
        let number = token[..<separator]
        let digits = number.hasPrefix("-") ? number.dropFirst() : number
        guard (1...18).contains(digits.utf8.count), digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let ms = Int64(number)
        else { return nil }
        let id = token[token.index(after: separator)...]
        guard (1...64).contains(id.utf8.count),
            id.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) })
        else { return nil }
        self.init(timestampMs: ms, id: String(id))
    }

    /// The token: `<timestamp_ms>_<id>`.
    public var token: String { "\(timestampMs)_\(id)" }
}

/// Where a page of `GET /events` starts.
public enum EventPageStart: Sendable, Equatable {
    /// Skips this many events. Each page costs the events it skips, and an event removed from
    /// an earlier page meanwhile shifts the rest, so one is never listed.
    case offset(Int)
    /// Continues after this event, skipping `skipping` more: served from the user/time index,
    /// and stable while events are added or removed (the skipped ones cost what they skip).
    case after(EventPageKey, skipping: Int = 0)
}

/// A page of events as their stored wire JSON.
public struct EventListing: Sendable, Equatable {
    /// Each event's stored JSON, newest first.
    public var bodies: [String]
    /// Where the next page starts; nil on the last page.
    public var next: EventPageKey?
}

/// What claiming an idempotency key led to.
public enum IdempotencyClaim: Sendable, Equatable {
    /// This request holds the key: run it, then store its answer or release the key.
    case claimed
    /// A request with this key was answered: replay this (when the body matches).
    case stored(StoredResponse)
    /// A request with this key is running now (here or on another instance).
    case busy
}

/// A `GET /changes` page: its body, and what the metrics record of it.
public struct FeedPage: Sendable {
    /// The JSON body.
    public var body: [UInt8]
    /// How many changes it carries.
    public var count: Int
    /// When the newest of them was written; nil for an empty page.
    public var newestChangeAt: Date?
    /// How many changes after `since` it read, those left out for the device (D57) included.
    public var scanned: Int
    /// When the change the request's `since` names was written; nil when `since` is 0 or this
    /// server has no such change (D59).
    public var sinceChangeAt: Double?

    /// Ends a page's body: `next_cursor`, `next_cursor_at` (the time of the change it names,
    /// when known: the device sends it back as `since_at`, D59) and `has_more`.
    static func appendEnd(to out: inout [UInt8], next: Int64, at: Double?, hasMore: Bool) {
        out.append(contentsOf: #"],"next_cursor":"#.utf8)
        out.append(contentsOf: String(next).utf8)
        if let at {
            out.append(contentsOf: #","next_cursor_at":""#.utf8)
            out.append(contentsOf: ISO8601.format(Date(timeIntervalSince1970: at)).utf8)
            out.append(UInt8(ascii: "\""))
        }
        out.append(contentsOf: #","has_more":"#.utf8)
        out.append(contentsOf: (hasMore ? "true}" : "false}").utf8)
    }
}

/// Writes a `GET /changes` page's body from the rows of the page query, whichever store reads
/// them (each store once wrote its own copy of this loop). The query reads from `seq >= since`
/// and one row past the page: the change `since` names comes first (its time checks the
/// device's cursor, D59), then the page, then one more that only tells whether more follow. A
/// change left out for the device (D57) still counts toward the page and moves `next_cursor`.
struct FeedPageWriter {
    let since: Int64
    let limit: Int
    private var out: [UInt8] = []
    private var scanned = 0
    private var count = 0
    private var last: Int64
    private var hasMore = false
    private var newest: Double?
    private var sinceAt: Double?
    private var lastAt: Double?

    init(since: Int64, limit: Int) {
        self.since = since
        self.limit = limit
        last = since
        out.reserveCapacity(limit * 480 + 64)
        out.append(contentsOf: #"{"changes":["#.utf8)
    }

    /// True once a row past the page was offered: the caller stops reading.
    var isFull: Bool { hasMore }

    /// Offers the next row; answers whether the caller writes it now, by ``text(_:_:)`` for
    /// `entity_type`, `entity_id` and `operation` in that order, then ``finish(data:)``.
    mutating func start(seq: Int64, createdAt: Double, omitted: Bool) -> Bool {
        if seq == since {
            sinceAt = createdAt
            return false
        }
        guard scanned < limit else {
            hasMore = true
            return false
        }
        scanned += 1
        last = seq
        lastAt = createdAt
        if omitted { return false }
        if count > 0 { out.append(UInt8(ascii: ",")) }
        count += 1
        newest = createdAt
        out.append(contentsOf: #"{"cursor":"#.utf8)
        out.append(contentsOf: String(seq).utf8)
        return true
    }

    /// The JSON that leads each text column of a change, in the order they are written.
    static let textKeys = [#","entity_type":"#, #","entity_id":"#, #","operation":"#]

    /// Writes text column `index` (0 to 2) of the change started last.
    mutating func text(_ index: Int, _ bytes: UnsafeRawBufferPointer) {
        out.append(contentsOf: Self.textKeys[index].utf8)
        WireText.appendString(bytes, to: &out)
    }

    /// Ends the change started last with its time and its stored JSON (nil: `null`).
    mutating func finish(data: UnsafeRawBufferPointer?) {
        out.append(contentsOf: #","created_at":""#.utf8)
        out.append(contentsOf: ISO8601.format(Date(timeIntervalSince1970: lastAt ?? 0)).utf8)
        out.append(contentsOf: #"","data":"#.utf8)
        if let data { out.append(contentsOf: data) } else { out.append(contentsOf: "null".utf8) }
        out.append(UInt8(ascii: "}"))
    }

    /// The finished page.
    consuming func page() -> FeedPage {
        FeedPage.appendEnd(to: &out, next: last, at: lastAt ?? sinceAt, hasMore: hasMore)
        return FeedPage(
            body: out, count: count, newestChangeAt: newest.map(Date.init(timeIntervalSince1970:)),
            scanned: scanned, sinceChangeAt: sinceAt)
    }
}

/// A stored response for idempotent replay.
public struct StoredResponse: Sendable, Equatable {
    /// Hash of the request body that produced it.
    public var bodyHash: String
    /// HTTP status.
    public var status: Int
    /// Response body.
    public var body: Data

    /// Creates a stored response.
    public init(bodyHash: String, status: Int, body: Data) {
        self.bodyHash = bodyHash
        self.status = status
        self.body = body
    }
}

/// Everything the dev server keeps, as the roles its routes use: accounts, the synced entities,
/// onboarding, the change feed, idempotency claims, and the store's own operation. Implemented
/// over SQLite (``SQLiteServerStore``) and PostgreSQL (``PostgresServerStore``). Every write
/// appends its change-log entries in the same transaction.
public typealias ServerStore = AccountStore & EntityStore & PropertyStore & OnboardingStore & FeedStore
    & IdempotencyStore & StoreOperations

/// Users, sessions, refresh tokens and reauthentication codes (the auth gateway's store).
public protocol AccountStore: Sendable {
    /// Creates a user with its initial metadata; throws ``StoreError/emailTaken``.
    func createUser(
        id: String, email: String, passwordHash: String, userMetadata: [String: JSONValue], now: Date
    ) async throws -> StoredUser
    /// Merges `data` into the user's metadata as GoTrue does: a key set to `null` is removed,
    /// every other key replaces its value. Returns the updated user; throws
    /// ``StoreError/validation(_:)`` when the merged metadata would exceed `maximumBytes` of JSON.
    func updateUserMetadata(userId: String, _ data: [String: JSONValue], maximumBytes: Int, now: Date)
        async throws -> StoredUser?
    /// When the session started; nil when there is no such session.
    func sessionStart(_ sessionId: String) async throws -> Date?
    /// Stores the hash of a new reauthentication code, unless one was stored less than
    /// `minimumInterval` seconds ago.
    func startReauthentication(userId: String, codeHash: String, now: Date, minimumInterval: TimeInterval)
        async throws -> ReauthenticationStart
    /// Forgets the user's current code and when it was sent (the mail carrying it failed).
    func cancelReauthentication(userId: String) async throws
    /// Whether `codeHash` is the user's current code, stored less than `lifetime` seconds ago.
    /// A matching code is used up; so is the code after `maximumFailures` wrong ones.
    func consumeReauthentication(
        userId: String, codeHash: String, now: Date, lifetime: TimeInterval, maximumFailures: Int
    ) async throws -> Bool
    /// Replaces a user's password hash; returns the updated user.
    func updatePassword(userId: String, passwordHash: String, now: Date) async throws -> StoredUser?
    /// Looks a user up by email (case-insensitive).
    func user(email: String) async throws -> StoredUser?
    /// Looks a user up by id.
    func user(id: String) async throws -> StoredUser?
    /// Records a sign-in.
    func recordSignIn(userId: String, now: Date) async throws
    /// Starts a session with its first refresh token; returns the session id.
    func createSession(userId: String, refreshToken: String, now: Date) async throws -> String
    /// Exchanges a refresh token (rotation, reuse window, revocation on late reuse).
    func rotateRefreshToken(_ token: String, newToken: String, reuseInterval: TimeInterval, now: Date) async throws
        -> RefreshOutcome
    /// Whether the session exists, belongs to `userId` and is not revoked.
    func isSessionActive(_ sessionId: String, userId: String) async throws -> Bool
    /// Ends sessions per `scope`.
    func revokeSessions(userId: String, scope: LogoutScope, currentSession: String, now: Date) async throws
}

/// The synced entities: event types, events and geofences, each write with its change-feed
/// entry, conflicts and deleted-entity memory.
public protocol EntityStore: Sendable {
    /// Every event type of the user, by name.
    func listEventTypes(userId: String) async throws -> [Timestamped<EventType>]
    /// Creates an event type; an identical re-post of the same id returns the stored one.
    func createEventType(userId: String, _ type: EventType, now: Date) async throws -> (Timestamped<EventType>, Bool)
    /// One event type.
    func eventType(userId: String, id: String) async throws -> Timestamped<EventType>?
    /// Updates an event type.
    func updateEventType(userId: String, id: String, _ update: EventTypeUpdate, base: ChangeBase?, now: Date)
        async throws
        -> Timestamped<EventType>
    /// Deletes an event type, its events, and clears geofence references to it.
    func deleteEventType(userId: String, id: String, base: ChangeBase?, now: Date) async throws

    /// A page of events as their stored wire JSON, newest first (served without re-encoding).
    func listEvents(userId: String, limit: Int, from start: EventPageStart) async throws -> EventListing
    /// A page of `GET /events/export`: the user's events newest first, after `key` (nil: the
    /// newest), within `range` (milliseconds, both ends included) and of `typeIds` (empty: every
    /// type), as their stored wire JSON.
    func exportPage(
        userId: String, after key: EventPageKey?, limit: Int, range: ClosedRange<Int64>?, typeIds: [String]
    ) async throws -> EventListing
    /// One event.
    func event(userId: String, id: String) async throws -> Timestamped<Event>?
    /// Creates events in one transaction, each with its own outcome (`device`: the sender, D57).
    func createEvents(userId: String, _ events: [Event], device: String?, now: Date) async throws
        -> [EventCreateOutcome]
    /// Updates an event.
    func updateEvent(userId: String, id: String, _ update: EventUpdate, base: ChangeBase?, now: Date) async throws
        -> Timestamped<Event>
    /// Deletes an event.
    func deleteEvent(userId: String, id: String, base: ChangeBase?, now: Date) async throws
    /// Applies `edits` in order in one transaction, each on its own: one item's refusal (thrown
    /// before it writes anything) is its outcome and changes nothing for the others; an edit of
    /// a deleted event is kept as a conflict, as a single edit's is.
    func editEvents(userId: String, _ edits: [EventEdit], now: Date) async throws -> [EventEditOutcome]

    /// The user's geofences, optionally only (in)active ones.
    func listGeofences(userId: String, active: Bool?) async throws -> [Timestamped<Geofence>]
    /// Creates a geofence; a re-post of the same id returns the stored one.
    func createGeofence(userId: String, _ geofence: Geofence, now: Date) async throws -> (Timestamped<Geofence>, Bool)
    /// One geofence.
    func geofence(userId: String, id: String) async throws -> Timestamped<Geofence>?
    /// Updates a geofence.
    func updateGeofence(userId: String, id: String, _ update: GeofenceUpdate, base: ChangeBase?, now: Date) async throws
        -> Timestamped<Geofence>
    /// Deletes a geofence.
    func deleteGeofence(userId: String, id: String, base: ChangeBase?, now: Date) async throws
}

/// The custom properties of event types: the fourth synced entity, each write with its
/// change-feed entry, conflicts and deleted-entity memory like the others.
public protocol PropertyStore: Sendable {
    /// The user's property definitions, of one type when `typeId` is given, in display order.
    func listPropertyDefinitions(userId: String, typeId: String?) async throws -> [Timestamped<PropertyDefinition>]
    /// Creates a definition; a re-post of the same id returns the stored one. The type must be
    /// the user's; a key its type has already (in any case) is a conflict.
    func createPropertyDefinition(userId: String, _ definition: PropertyDefinition, now: Date) async throws
        -> (Timestamped<PropertyDefinition>, Bool)
    /// One definition.
    func propertyDefinition(userId: String, id: String) async throws -> Timestamped<PropertyDefinition>?
    /// Updates a definition (never its key or type).
    func updatePropertyDefinition(
        userId: String, id: String, _ update: PropertyDefinitionUpdate, base: ChangeBase?, now: Date
    ) async throws -> Timestamped<PropertyDefinition>
    /// Deletes a definition; the values events hold under its key stay.
    func deletePropertyDefinition(userId: String, id: String, base: ChangeBase?, now: Date) async throws
}

/// Each user's onboarding status.
public protocol OnboardingStore: Sendable {
    /// The status, creating the defaults for a new user (never resetting an existing one).
    func onboarding(userId: String, now: Date) async throws -> OnboardingStatus
    /// Applies a partial update.
    func updateOnboarding(userId: String, _ update: OnboardingUpdate, now: Date) async throws -> OnboardingStatus
    /// Soft reset: back to the initial status, row kept.
    func resetOnboarding(userId: String, now: Date) async throws -> OnboardingStatus
}

/// The change feed and what is read from it.
public protocol FeedStore: Sendable {
    /// The `GET /changes` body: changes after `since`, oldest first, at most `limit`, with
    /// `next_cursor`, `next_cursor_at` and `has_more`. Written by the store from the stored JSON,
    /// so serving the feed decodes and re-encodes nothing (the feed is the hottest read). `omitting`: the device
    /// whose own changes are left out where it holds them (D57); `next_cursor` still passes them.
    func changesPage(userId: String, since: Int64, limit: Int, omitting device: String?) async throws -> FeedPage
    /// The newest cursor of the user's feed (0 when empty) and when its change was written.
    func latestCursor(userId: String) async throws -> LatestCursor
    /// Counts and the newest cursor.
    func syncSummary(userId: String) async throws -> SyncSummary
    /// Every conflict kept for the user and not yet resolved, as JSON objects, oldest first.
    func conflicts(userId: String) async throws -> [String]
    /// Closes a conflict for every device (one restored or dismissed it): it leaves the list and
    /// the feed says so (a `delete` of the conflict). Resolving it again changes nothing; a
    /// conflict the user does not have is ``StoreError/notFound(_:)``.
    func resolveConflict(userId: String, id: String, now: Date) async throws
}

/// `Idempotency-Key` claims and stored answers, shared by every instance.
public protocol IdempotencyStore: Sendable {
    /// Claims a key for one request, across every instance sharing the database: `.claimed`
    /// when this request is to run (no answer younger than `maxAge` is stored, and no other
    /// request holds the key, or its claim is older than `lease`: its instance died), else the
    /// stored answer, else `.busy`.
    /// The claim carries `token`: only its holder may release it or store its answer, so a
    /// request whose claim was taken over (it ran past the lease) cannot end the new holder's.
    func claimIdempotencyKey(
        userId: String, method: String, path: String, key: String, bodyHash: String, token: String, now: Date,
        maxAge: TimeInterval, lease: TimeInterval
    ) async throws -> IdempotencyClaim
    /// Gives up a claim whose request ended without an answer to keep (it failed), so a retry
    /// runs; nothing when the claim is no longer `token`'s.
    func releaseIdempotencyKey(userId: String, method: String, path: String, key: String, token: String) async throws
    /// Stores the answer of the request holding the claim `token`; nothing when the claim was
    /// taken over meanwhile (the request that took it stores its own).
    func storeIdempotentResponse(
        userId: String, method: String, path: String, key: String, token: String, response: StoredResponse, now: Date
    ) async throws
}

/// Settings, readiness, the pool, shutdown.
public protocol StoreOperations: Sendable {
    /// A stored server setting.
    func setting(_ key: String) async throws -> String?
    /// Whether the database answers (the readiness check asks before each answer).
    func isReady() async -> Bool
    /// Connections in use and the pool's size; nil when the store has no pool.
    var poolUsage: (inUse: Int, capacity: Int)? { get }
    /// Releases the database (the pool's connections); the store is not used after.
    func close() async

    /// Stores `value` under `key` unless a value is stored already; answers the stored one. Several
    /// instances starting at once agree on one value (the first stored).
    func initialSetting(_ key: String, value: String) async throws -> String
}
