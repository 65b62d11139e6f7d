import Foundation
import GRDB
import TrendyAPI
import TrendyModels

extension SQLiteServerStore {
    static func fetchEvent(_ db: Database, userId: String, id: String) throws -> Timestamped<Event>? {
        guard
            let body = try String.fetchOne(
                db, sql: "SELECT body FROM events WHERE id = ? AND user_id = ?", arguments: [id, userId])
        else { return nil }
        return try StoreRules.decode(Timestamped<Event>.self, body)
    }

    /// Implements `ServerStore.listEvents`.
    public func listEvents(userId: String, limit: Int, from start: EventPageStart) async throws -> EventListing {
        try await db.read { db in
            let select = "SELECT timestamp_ms, id, body FROM events WHERE user_id = ?"
            let order = "ORDER BY timestamp_ms DESC, id DESC LIMIT ?"
            let rows: [Row]
            switch start {
            case .offset(let offset):
                rows = try Row.fetchAll(
                    db, sql: "\(select) \(order) OFFSET ?", arguments: [userId, limit + 1, offset])
            case .after(let key, let skipping):
                // A row-value comparison: a range search of `events_user_time`, whatever the page.
                rows = try Row.fetchAll(
                    db, sql: "\(select) AND (timestamp_ms, id) < (?, ?) \(order) OFFSET ?",
                    arguments: [userId, key.timestampMs, key.id, limit + 1, skipping])
            }
            let page = rows.prefix(limit)
            let last = page.last.map { EventPageKey(timestampMs: $0[0], id: $0[1]) }
            return EventListing(bodies: page.map { $0[2] }, next: rows.count > limit ? last : nil)
        }
    }

    /// Implements `ServerStore.event`.
    public func event(userId: String, id: String) async throws -> Timestamped<Event>? {
        try await db.read { db in try Self.fetchEvent(db, userId: userId, id: id) }
    }

    /// The stored duplicate of `event` by its de-duplication key, if any.
    static func duplicate(_ db: Database, userId: String, of event: Event) throws -> Timestamped<Event>? {
        let body: String?
        switch event.sourceType {
        case .manual, .imported:
            body = try String.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT body FROM events WHERE user_id = ? AND event_type_id = ? AND timestamp_ms = ?
                        AND source_type IN ('manual', 'imported')
                        """),
                arguments: [userId, event.eventTypeId.description, StoreRules.milliseconds(event.timestamp)])
        case .healthkit:
            body = try String.fetchOne(
                db.cachedStatement(
                    sql: "SELECT body FROM events WHERE user_id = ? AND external_id = ? AND source_type = 'healthkit'"),
                arguments: [userId, event.externalId])
        case .geofence:
            body = nil
        }
        return try body.map { try StoreRules.decode(Timestamped<Event>.self, $0) }
    }

    /// Implements `ServerStore.createEvents`.
    public func createEvents(userId: String, _ events: [Event], now: Date) async throws -> [EventCreateOutcome] {
        try await db.write { db in
            let decoder = TrendyJSON.decoder()
            var knownTypes: [String: Bool] = [:]
            let insert = try db.cachedStatement(
                sql: """
                    INSERT INTO events (id, user_id, event_type_id, timestamp_ms, source_type, external_id, body,
                    created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            var outcomes: [EventCreateOutcome] = []
            outcomes.reserveCapacity(events.count)
            for event in events {
                let id = event.id.description
                if let row = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT user_id, body FROM events WHERE id = ?"), arguments: [id])
                {
                    if (row["user_id"] as String) == userId {
                        outcomes.append(
                            .existing(
                                try decoder.decode(Timestamped<Event>.self, from: Data((row["body"] as String).utf8))))
                    } else {
                        outcomes.append(.failed(.conflict("the id \(id) is already in use")))
                    }
                    continue
                }
                if let body = try Self.deletedBody(db, userId: userId, entity: .event, id: id) {
                    outcomes.append(.existing(try decoder.decode(Timestamped<Event>.self, from: Data(body.utf8))))
                    continue
                }
                let typeId = event.eventTypeId.description
                let typeExists: Bool
                if let known = knownTypes[typeId] {
                    typeExists = known
                } else {
                    typeExists =
                        try Bool.fetchOne(
                            db.cachedStatement(sql: "SELECT 1 FROM event_types WHERE id = ? AND user_id = ?"),
                            arguments: [typeId, userId]) ?? false
                    knownTypes[typeId] = typeExists
                }
                guard typeExists else {
                    outcomes.append(
                        .failed(.validation([FieldIssue(field: "event_type_id", reason: "no such event type")])))
                    continue
                }
                if let geofence = event.geofenceId, try !Self.isOwnGeofence(db, userId: userId, id: geofence) {
                    outcomes.append(
                        .failed(.validation([FieldIssue(field: "geofence_id", reason: "no such geofence")])))
                    continue
                }
                if let existing = try Self.duplicate(db, userId: userId, of: event) {
                    // The merge is a change of the survivor in the feed: its own cursor, after every
                    // base a device could have edited from (see ``StoreRules/mergedCreateKeyFields``).
                    let survivor = existing.value.id.description
                    let version = try Self.appendChange(
                        db, userId: userId, entity: .event, id: survivor, operation: .update,
                        data: try StoreRules.encode(existing), now: now)
                    try Self.recordFieldVersions(
                        db, entity: .event, id: survivor, version: version,
                        fields: try StoreRules.mergedCreateFields(existing.value), base: nil, now: now, replace: false)
                    try Self.recordFieldVersions(
                        db, entity: .event, id: survivor, version: version, fields: StoreRules.mergedCreateKeyFields,
                        base: nil, now: now)
                    outcomes.append(.existing(existing))
                    continue
                }
                let stored = Timestamped(event, createdAt: now, updatedAt: now)
                let body = event.wireJSON(createdAt: now, updatedAt: now)
                try insert.execute(arguments: [
                    id, userId, typeId, StoreRules.milliseconds(event.timestamp), event.sourceType.rawValue,
                    event.externalId,
                    body, now.timeIntervalSince1970, now.timeIntervalSince1970,
                ])
                try Self.appendChange(
                    db, userId: userId, entity: .event, id: id, operation: .create, data: body, now: now)
                outcomes.append(.created(stored))
            }
            return outcomes
        }
    }

    /// Whether `id` is one of the user's geofences, or was (deleted since: an event logged at it
    /// before the delete synced still names it). Another user's geofence never is.
    static func isOwnGeofence(_ db: Database, userId: String, id: UUIDv7) throws -> Bool {
        let arguments: StatementArguments = [id.description, userId]
        if try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT 1 FROM geofences WHERE id = ? AND user_id = ?"), arguments: arguments)
            == true
        {
            return true
        }
        return try Bool.fetchOne(
            db.cachedStatement(
                sql: "SELECT 1 FROM deleted_entities WHERE entity_type = 'geofence' AND entity_id = ? AND user_id = ?"),
            arguments: arguments) == true
    }

    /// `update` laid over `before`, checked as every edit of an event is (live or deleted): its
    /// rules, and a geofence it newly names must be one of the user's.
    static func edited(_ db: Database, userId: String, _ before: Event, _ update: EventUpdate) throws -> Event {
        let after = try StoreRules.valid(update.apply(to: before))
        if let geofence = after.geofenceId, geofence != before.geofenceId,
            try !isOwnGeofence(db, userId: userId, id: geofence)
        {
            throw StoreError.validation([FieldIssue(field: "geofence_id", reason: "no such geofence")])
        }
        return after
    }

    /// Implements `ServerStore.updateEvent`.
    public func updateEvent(userId: String, id: String, _ update: EventUpdate, base: ChangeBase?, now: Date)
        async throws -> Timestamped<Event>
    {
        let outcome: Result<Timestamped<Event>, StoreError> = try await db.write { db in
            let patch = try FieldPatch.object(update)
            guard let stored = try Self.fetchEvent(db, userId: userId, id: id) else {
                return .failure(
                    try Self.missing(
                        db, userId: userId, entity: .event, id: id, what: "event", patch: patch, base: base, now: now
                    ) { body in
                        // Checked like any edit: what a conflict keeps can be restored.
                        var last = try StoreRules.decode(Timestamped<Event>.self, body)
                        last.value = try Self.edited(db, userId: userId, last.value, update)
                        return try StoreRules.encode(last)
                    })
            }
            let conflicts = try Self.fieldConflicts(
                db, entity: .event, id: id, current: { try StoreRules.fields(of: stored.value, as: EventUpdate.self) },
                patch: patch, base: base, now: now)
            let updated = try Self.edited(db, userId: userId, stored.value, update)
            if updated.eventTypeId != stored.value.eventTypeId,
                try Self.fetchEventType(db, userId: userId, id: updated.eventTypeId.description) == nil
            {
                throw StoreError.validation([FieldIssue(field: "event_type_id", reason: "no such event type")])
            }
            if let duplicate = try Self.duplicate(db, userId: userId, of: updated), duplicate.value.id.description != id
            {
                throw StoreError.conflict("another event of this type already exists at this time")
            }
            let result = Timestamped(updated, createdAt: stored.createdAt, updatedAt: now)
            let body = try StoreRules.encode(result)
            try db.execute(
                sql: """
                    UPDATE events SET event_type_id = ?, timestamp_ms = ?, external_id = ?, body = ?, updated_at = ?
                    WHERE id = ?
                    """,
                arguments: [
                    updated.eventTypeId.description, StoreRules.milliseconds(updated.timestamp), updated.externalId,
                    body,
                    now.timeIntervalSince1970, id,
                ])
            let version = try Self.appendChange(
                db, userId: userId, entity: .event, id: id, operation: .update, data: body, now: now)
            try Self.recordFieldVersions(
                db, entity: .event, id: id, version: version, fields: patch.keys, base: base, now: now)
            try Self.record(conflicts, db, userId: userId, now: now)
            return .success(result)
        }
        return try outcome.get()
    }

    /// Implements `ServerStore.deleteEvent`.
    public func deleteEvent(userId: String, id: String, base: ChangeBase?, now: Date) async throws {
        try await db.write { db in
            if let stored = try Self.fetchEvent(db, userId: userId, id: id) {
                try Self.recordDeletion(
                    db, userId: userId, entity: .event, id: id,
                    current: { try StoreRules.fields(of: stored.value, as: EventUpdate.self) },
                    body: try StoreRules.encode(stored),
                    base: base, now: now)
            }
            try db.execute(sql: "DELETE FROM events WHERE id = ? AND user_id = ?", arguments: [id, userId])
            guard db.changesCount > 0 else { throw StoreError.notFound("event") }
            try Self.appendChange(db, userId: userId, entity: .event, id: id, operation: .delete, data: nil, now: now)
        }
    }
}
