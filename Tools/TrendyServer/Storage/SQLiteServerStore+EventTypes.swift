import Foundation
import GRDB
import TrendyAPI
import TrendyModels

extension SQLiteServerStore {
    static func eventType(from row: Row) throws -> Timestamped<EventType> {
        guard let id = UUIDv7(row["id"] as String) else { throw StoreError.conflict("corrupt event type id") }
        return Timestamped(
            EventType(id: id, name: row["name"], color: row["color"], icon: row["icon"]),
            createdAt: Date(timeIntervalSince1970: row["created_at"]),
            updatedAt: Date(timeIntervalSince1970: row["updated_at"]))
    }

    static func fetchEventType(_ db: Database, userId: String, id: String) throws -> Timestamped<EventType>? {
        try Row.fetchOne(
            db, sql: "SELECT * FROM event_types WHERE id = ? AND user_id = ?", arguments: [id, userId]
        ).map(eventType(from:))
    }

    static func nameTaken(_ db: Database, userId: String, name: String, except id: String) throws -> Bool {
        try Bool.fetchOne(
            db, sql: "SELECT 1 FROM event_types WHERE user_id = ? AND name = ? AND id != ?",
            arguments: [userId, name, id]) ?? false
    }

    /// Implements `ServerStore.listEventTypes`.
    public func listEventTypes(userId: String) async throws -> [Timestamped<EventType>] {
        try await db.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM event_types WHERE user_id = ? ORDER BY name, id", arguments: [userId]
            ).map(Self.eventType(from:))
        }
    }

    /// Implements `ServerStore.createEventType`.
    public func createEventType(userId: String, _ type: EventType, now: Date) async throws -> (
        Timestamped<EventType>, Bool
    ) {
        try await db.write { db in
            let id = type.id.description
            if let owner = try String.fetchOne(db, sql: "SELECT user_id FROM event_types WHERE id = ?", arguments: [id])
            {
                guard owner == userId, let stored = try Self.fetchEventType(db, userId: userId, id: id) else {
                    throw StoreError.conflict("the id \(id) is already in use")
                }
                if StoreRules.sameEventType(stored.value, type) { return (stored, false) }
                throw StoreError.conflict("an event type with id \(id) already exists with other values")
            }
            if let body = try Self.deletedBody(db, userId: userId, entity: .eventType, id: id) {
                return (try StoreRules.decode(Timestamped<EventType>.self, body), false)
            }
            if try Self.nameTaken(db, userId: userId, name: type.name, except: id) {
                throw StoreError.conflict("an event type named \"\(type.name)\" already exists")
            }
            try db.execute(
                sql: """
                    INSERT INTO event_types (id, user_id, name, color, icon, created_at, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    id, userId, type.name, type.color, type.icon, now.timeIntervalSince1970, now.timeIntervalSince1970,
                ])
            let stored = Timestamped(type, createdAt: now, updatedAt: now)
            try Self.appendChange(
                db, userId: userId, entity: .eventType, id: id, operation: .create, data: try StoreRules.encode(stored),
                now: now)
            return (stored, true)
        }
    }

    /// Implements `ServerStore.eventType`.
    public func eventType(userId: String, id: String) async throws -> Timestamped<EventType>? {
        try await db.read { db in try Self.fetchEventType(db, userId: userId, id: id) }
    }

    /// Implements `ServerStore.updateEventType`.
    public func updateEventType(
        userId: String, id: String, _ update: EventTypeUpdate, base: ChangeBase?, now: Date
    ) async throws -> Timestamped<EventType> {
        let outcome: Result<Timestamped<EventType>, StoreError> = try await db.write { db in
            let patch = try FieldPatch.object(update)
            guard let stored = try Self.fetchEventType(db, userId: userId, id: id) else {
                return .failure(
                    try Self.missing(
                        db, userId: userId, entity: .eventType, id: id, what: "event type", patch: patch, base: base,
                        now: now
                    ) { body in try StoreRules.edit(body, with: update) })
            }
            let conflicts = try Self.fieldConflicts(
                db, entity: .eventType, id: id,
                current: { try StoreRules.fields(of: stored.value, as: EventTypeUpdate.self) }, patch: patch,
                base: base,
                now: now)
            let updated = try StoreRules.valid(update.apply(to: stored.value))
            if try Self.nameTaken(db, userId: userId, name: updated.name, except: id) {
                throw StoreError.conflict("an event type named \"\(updated.name)\" already exists")
            }
            try db.execute(
                sql: "UPDATE event_types SET name = ?, color = ?, icon = ?, updated_at = ? WHERE id = ?",
                arguments: [updated.name, updated.color, updated.icon, now.timeIntervalSince1970, id])
            let result = Timestamped(updated, createdAt: stored.createdAt, updatedAt: now)
            let version = try Self.appendChange(
                db, userId: userId, entity: .eventType, id: id, operation: .update, data: try StoreRules.encode(result),
                now: now)
            try Self.recordFieldVersions(
                db, entity: .eventType, id: id, version: version, fields: patch.keys, base: base, now: now)
            try Self.record(conflicts, db, userId: userId, now: now)
            return .success(result)
        }
        return try outcome.get()
    }

    /// Implements `ServerStore.deleteEventType`.
    public func deleteEventType(userId: String, id: String, base: ChangeBase?, now: Date) async throws {
        try await db.write { db in
            guard let storedType = try Self.fetchEventType(db, userId: userId, id: id) else {
                throw StoreError.notFound("event type")
            }
            try Self.recordDeletion(
                db, userId: userId, entity: .eventType, id: id,
                current: { try StoreRules.fields(of: storedType.value, as: EventTypeUpdate.self) },
                body: try StoreRules.encode(storedType), base: base, now: now)
            let events = try Row.fetchAll(
                db, sql: "SELECT id, body, created_at FROM events WHERE user_id = ? AND event_type_id = ? ORDER BY id",
                arguments: [userId, id])
            // The events created after the deleting device's base: one range read of the feed.
            let unseen = try Set(
                base.map { base in
                    try String.fetchAll(
                        db,
                        sql: """
                            SELECT entity_id FROM change_log WHERE user_id = ? AND seq > ?
                            AND entity_type = 'event' AND operation = 'create'
                            """, arguments: [userId, base.version])
                } ?? [])
            for row in events {
                // Each event goes with the type: edits of it its deleting device had not seen,
                // or that arrive later, are kept as conflicts like a direct delete's.
                let eventId: String = row["id"]
                let body: String = row["body"]
                try Self.recordDeletion(
                    db, userId: userId, entity: .event, id: eventId,
                    current: {
                        try FieldPatch.object(
                            EventUpdate(everyFieldOf: try StoreRules.decode(Timestamped<Event>.self, body).value))
                    }, body: body, base: base, now: now, cascade: (row["created_at"], unseen.contains(eventId)))
                try Self.appendChange(
                    db, userId: userId, entity: .event, id: eventId, operation: .delete, data: nil, now: now)
            }
            try db.execute(sql: "DELETE FROM events WHERE user_id = ? AND event_type_id = ?", arguments: [userId, id])
            // Geofences that pointed at the type lose the reference (and say so in the feed).
            for row in try Row.fetchAll(
                db, sql: "SELECT id, body FROM geofences WHERE user_id = ? ORDER BY id", arguments: [userId])
            {
                guard let body = try StoreRules.geofence(row["body"], clearing: id, now: now) else { continue }
                try db.execute(
                    sql: "UPDATE geofences SET body = ?, updated_at = ? WHERE id = ?",
                    arguments: [body, now.timeIntervalSince1970, row["id"] as String])
                try Self.appendChange(
                    db, userId: userId, entity: .geofence, id: row["id"], operation: .update, data: body, now: now)
            }
            try db.execute(sql: "DELETE FROM event_types WHERE id = ?", arguments: [id])
            try Self.appendChange(
                db, userId: userId, entity: .eventType, id: id, operation: .delete, data: nil, now: now)
        }
    }
}
