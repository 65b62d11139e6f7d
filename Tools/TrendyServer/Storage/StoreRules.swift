import Foundation
import TrendyAPI
import TrendyModels

/// Which change last set one field of an entity, and from which device (a `field_versions` row).
struct FieldVersion: Sendable {
    /// The field's wire name.
    var field: String
    /// The device that set it.
    var device: String
    /// When, in seconds since 1970.
    var changedAt: Double
    /// The feed cursor of the change.
    var version: Int64
}

/// A conflict to keep, and the version of the change that lost (it says a retry from a new one).
typealias KeptConflict = (conflict: SyncConflict, lostVersion: Int64)

/// The rules every ``ServerStore`` applies the same way, whatever its database: JSON in and out,
/// field-level conflicts (D37), metadata merges. Each store fetches the rows these read and writes
/// what they answer, in its own dialect and transaction.
enum StoreRules {
    static func encode<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try TrendyJSON.encoder().encode(value), as: UTF8.self)
    }

    /// A stored entity's body; an event's written directly (``Event/wireJSON(createdAt:updatedAt:)``,
    /// the body a create stores), every other kind through `JSONEncoder`.
    static func encodeStored<T>(_ stored: Timestamped<T>) throws -> String {
        if let event = stored.value as? Event {
            return event.wireJSON(createdAt: stored.createdAt, updatedAt: stored.updatedAt)
        }
        return try encode(stored)
    }

    /// A stored event's body, read with the wire format's fast reader (``Event/scan(_:)``) when
    /// it takes it, else `JSONDecoder` (typed properties).
    static func decodeStoredEvent(_ text: String) throws -> Timestamped<Event> {
        var body = text
        let scanned = body.withUTF8 { bytes -> Event.Scanned? in
            var scanner = WireJSONScanner(bytes)
            guard let scanned = Event.scan(&scanner), scanner.atEnd() else { return nil }
            return scanned
        }
        if let scanned, let createdAt = scanned.createdAt, let updatedAt = scanned.updatedAt {
            return Timestamped(scanned.event, createdAt: createdAt, updatedAt: updatedAt)
        }
        return try decode(Timestamped<Event>.self, text)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try TrendyJSON.decoder().decode(T.self, from: Data(text.utf8))
    }

    /// `value` if it keeps its model's rules; else their issues as a store error (422). Every edit
    /// is checked with it, of a live entity and of a deleted one's last content alike.
    static func valid<T: Validating>(_ value: T) throws -> T {
        do throws(ValidationError) { try value.validate() } catch { throw StoreError.validation(error.issues) }
        return value
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// The user's metadata after GoTrue's merge of `data` (a key set to `null` is removed);
    /// ``StoreError/validation(_:)`` when the result would exceed `maximumBytes` of JSON.
    static func mergedMetadata(_ user: StoredUser, _ data: [String: JSONValue], maximumBytes: Int, now: Date)
        throws -> (user: StoredUser, json: String)
    {
        var user = user
        for (key, value) in data {
            if value == .null { user.userMetadata[key] = nil } else { user.userMetadata[key] = value }
        }
        user.updatedAt = now
        let merged = try encode(user.userMetadata)
        guard merged.utf8.count <= maximumBytes else {
            throw StoreError.validation([
                FieldIssue(field: "data", reason: "user metadata cannot be larger than \(maximumBytes) bytes")
            ])
        }
        return (user, merged)
    }

    /// The version given to the fields of an event whose create another device's change had not
    /// seen (a type's cascade): it only names the loss in the conflict's record.
    static let unseenCreateVersion: Int64 = 1

    /// The fields a de-duplicated create's surviving event holds, but its type and time. Each store
    /// appends the merge to the feed as a change of the survivor and records them at its cursor,
    /// keeping a version a real change already recorded: the merged-away copy's device sends its fields with base 0, and any device
    /// whose edit was based before the merge had not seen what the merged copy contributed —
    /// either way a differing value it replaces is kept as a conflict (the create set no version).
    static func mergedCreateFields(_ survivor: Event) throws -> [String] {
        Array(try fields(of: survivor, as: EventUpdate.self).keys.filter { !mergedCreateKeyFields.contains($0) })
    }

    /// The type and time a de-duplicated create matched on: the merged copy set them *now* (its
    /// device asserted "an event of this type at this time"), so each store records them at the
    /// merge's cursor replacing any older version. An edit based before the merge that moves the
    /// survivor away keeps the merged copy's type or time as a conflict (simulation seed 6,890: a
    /// device's queued move, made before another device imported a row at the old time, carried
    /// the merged event away and the imported row's time vanished without a record).
    static let mergedCreateKeyFields = ["event_type_id", "timestamp"]

    /// `changed` for a delete that cascades from a type: an event whose create came after the
    /// deleting device's base in the feed (`unseen`: the store reads the creates after the base's
    /// cursor) was never in front of that device, so when no edit of it is newer than the base, its
    /// create counts as the unseen change (every field kept in the deletion conflict, at the
    /// event's `createdAt`). The feed's order, not times: a device that pulled its own events back
    /// has seen them, however close the times (time-based, one type delete recorded its own
    /// import's last batch as 50 conflicts from "unknown").
    static func withUnseenCreate(
        _ changed: [FieldVersion], createdAt: Double, unseen: Bool, fields: () throws -> [String: Any]
    ) rethrows -> [FieldVersion] {
        guard changed.isEmpty, unseen else { return changed }
        return try fields().keys.sorted().map {
            FieldVersion(field: $0, device: "unknown", changedAt: createdAt, version: unseenCreateVersion)
        }
    }

    /// The conflicts an incoming patch makes with `changed`: the versions of fields set after the
    /// patch's base by other devices. A field the patch sets to the value it already has is none.
    static func fieldConflicts(
        _ changed: [FieldVersion], entity: ChangeEntity, id: String, current: () throws -> [String: Any],
        patch: [String: Any], base: ChangeBase, now: Date
    ) throws -> [KeptConflict] {
        guard !changed.isEmpty else { return [] }
        let current = try current()
        return changed.compactMap { row -> KeptConflict? in
            guard let incoming = patch[row.field] else { return nil }
            let kept = FieldPatch.canonical(incoming)
            let lost = FieldPatch.canonical(current[row.field])
            guard kept != lost else { return nil }
            let conflict = SyncConflict(
                id: UUID().uuidString.lowercased(), kind: .field, entityType: entity, entityId: id, field: row.field,
                keptValue: kept, lostValue: lost, keptBy: base.deviceId, keptAt: now, lostBy: row.device,
                lostAt: Date(timeIntervalSince1970: row.changedAt), detectedAt: now)
            return (conflict, row.version)
        }
    }

    /// The conflict a delete makes with the edits its device had not seen (`changed`, oldest
    /// first): the entity's last content is kept with it, so either side can be restored.
    static func deletionConflict(
        _ changed: [FieldVersion], entity: ChangeEntity, id: String, current: () throws -> [String: Any],
        body: String, base: ChangeBase, now: Date
    ) throws -> KeptConflict? {
        guard let last = changed.last else { return nil }
        let current = try current()
        var lost: [String: Any] = [:]
        for row in changed { lost[row.field] = current[row.field] ?? NSNull() }
        let conflict = SyncConflict(
            id: UUID().uuidString.lowercased(), kind: .deleted, entityType: entity, entityId: id, field: nil,
            keptValue: nil, lostValue: FieldPatch.text(lost), keptBy: base.deviceId, keptAt: now, lostBy: last.device,
            lostAt: Date(timeIntervalSince1970: last.changedAt), detectedAt: now, entity: body)
        return (conflict, last.version)
    }

    /// The conflict an edit of a deleted entity makes: the delete stays, the edit laid over the
    /// entity's last content (`entityAfterEdit`) is kept. The edit's base tells a retry (same
    /// base: recorded once) from a later edit of the same values.
    static func editOfDeletedConflict(
        entity: ChangeEntity, id: String, patch: [String: Any], base: ChangeBase?, deletedBy: String,
        deletedAt: Double, entityAfterEdit: String, now: Date
    ) -> KeptConflict {
        let conflict = SyncConflict(
            id: UUID().uuidString.lowercased(), kind: .deleted, entityType: entity, entityId: id, field: nil,
            keptValue: nil, lostValue: FieldPatch.text(patch), keptBy: deletedBy,
            keptAt: Date(timeIntervalSince1970: deletedAt), lostBy: base?.deviceId ?? "unknown", lostAt: now,
            detectedAt: now, entity: entityAfterEdit)
        return (conflict, base?.version ?? 0)
    }

    /// A geofence's JSON without its references to the deleted event type `typeId`; nil when it
    /// named that type in neither field.
    static func geofence(_ body: String, clearing typeId: String, now: Date) throws -> String? {
        var geofence = try decode(Timestamped<Geofence>.self, body)
        let entry = geofence.value.entryEventTypeId?.description == typeId
        let exit = geofence.value.exitEventTypeId?.description == typeId
        guard entry || exit else { return nil }
        if entry { geofence.value.entryEventTypeId = nil }
        if exit { geofence.value.exitEventTypeId = nil }
        geofence.updatedAt = now
        return try encode(geofence)
    }

    /// An entity's stored JSON with `update` laid over it, checked like any edit: what a conflict
    /// keeps of an edit of a deleted entity can be restored.
    static func edit<Patch: EntityPatch>(_ body: String, with update: Patch) throws -> String
    where Patch.Entity: Codable & Sendable & Hashable & Validating {
        var last = try decode(Timestamped<Patch.Entity>.self, body)
        last.value = try valid(update.apply(to: last.value))
        return try encode(last)
    }

    /// Every field of `entity` as a patch object: what conflict detection compares an incoming
    /// patch with.
    static func fields<Patch: EntityPatch>(of entity: Patch.Entity, as patch: Patch.Type) throws -> [String: Any] {
        try FieldPatch.object(Patch(everyFieldOf: entity))
    }

    /// The issues of a geofence whose entry or exit type is not among `known` (the user's types
    /// of the two it names).
    static func typeIssues(_ g: Geofence, known: Set<String>) -> [FieldIssue] {
        [("event_type_entry_id", g.entryEventTypeId), ("event_type_exit_id", g.exitEventTypeId)].compactMap {
            field, typeId in
            guard let typeId, !known.contains(typeId.description) else { return nil }
            return FieldIssue(field: field, reason: "no such event type")
        }
    }

    /// Whether an event type re-posted with the same id is the one stored (an idempotent retry)
    /// rather than another type under a taken id.
    static func sameEventType(_ stored: EventType, _ posted: EventType) -> Bool {
        stored.name.caseInsensitiveCompare(posted.name) == .orderedSame && stored.color == posted.color
            && stored.icon == posted.icon
    }

    /// What a reauthentication code check decides, from the stored code, when it was sent and
    /// how many wrong codes came before.
    static func reauthentication(
        stored: String, sentAt: Double, failures: Int, presented: String, now: Date, lifetime: TimeInterval,
        maximumFailures: Int
    ) -> (accepted: Bool, failures: Int, clearCode: Bool) {
        let fresh = now.timeIntervalSince1970 - sentAt < lifetime
        if fresh && Passwords.constantTimeEqual(stored, presented) { return (true, 0, true) }
        let failures = failures + 1
        return (false, failures, failures >= maximumFailures || !fresh)
    }

    /// The wait before another code may be sent; nil when one may be sent now.
    static func reauthenticationWait(sentAt: Double?, now: Date, minimumInterval: TimeInterval) -> Int? {
        guard let sentAt, now.timeIntervalSince1970 - sentAt < minimumInterval else { return nil }
        let wait = minimumInterval - (now.timeIntervalSince1970 - sentAt)
        return max(1, Int(wait.rounded(.up)))
    }

    /// What a refresh token's use reads: its session and user, whether it was rotated and when,
    /// whether its session ended, and the session's current token.
    struct RefreshFacts {
        var sessionId: String
        var userId: String
        var revokedAt: Double?
        var sessionRevoked: Bool
        /// The newest unrevoked token of the session (read when this one was rotated).
        var current: String?
    }

    /// What a refresh does with a token (`facts` nil: no such token).
    enum RefreshDecision: Equatable {
        /// Rotate it: revoke it and store `newToken` after it.
        case rotate
        /// Answer the session's current token (the same rotation seen twice, within the window).
        case reuse(String)
        /// A token rotated long ago came back: treat it as stolen and end the session.
        case endSession
        case notFound
    }

    /// The refresh-token rotation with GoTrue's reuse window: a current token rotates; one rotated
    /// within `reuseInterval` answers the current token (two tabs refreshing at once); one rotated
    /// earlier ends the session.
    static func refresh(_ facts: RefreshFacts?, now: Date, reuseInterval: TimeInterval) -> RefreshDecision {
        guard let facts, !facts.sessionRevoked else { return .notFound }
        guard let revokedAt = facts.revokedAt else { return .rotate }
        if now.timeIntervalSince1970 - revokedAt <= reuseInterval, let current = facts.current {
            return .reuse(current)
        }
        return .endSession
    }

    /// The answer a refresh gives once its decision is written.
    static func outcome(_ decision: RefreshDecision, _ facts: RefreshFacts?, newToken: String) -> RefreshOutcome {
        guard let facts else { return .notFound }
        switch decision {
        case .rotate: return .rotated(sessionId: facts.sessionId, userId: facts.userId, newToken: newToken)
        case .reuse(let current):
            return .reused(sessionId: facts.sessionId, userId: facts.userId, currentToken: current)
        case .endSession: return .alreadyUsed
        case .notFound: return .notFound
        }
    }
}
