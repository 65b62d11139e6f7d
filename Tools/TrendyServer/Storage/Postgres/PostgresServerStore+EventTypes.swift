import Foundation
import PostgresNIO
import TrendyAPI
import TrendyModels

extension PostgresServerStore {
    static let eventTypeColumns = "SELECT id, name, color, icon, created_at, updated_at FROM event_types"

    static func eventTypes(_ s: PostgresSession, _ query: PostgresQuery) async throws -> [Timestamped<EventType>] {
        try await s.all(query, as: (String, String, String, String, Double, Double).self).map { row in
            guard let id = UUIDv7(row.0) else { throw StoreError.conflict("corrupt event type id") }
            return Timestamped(
                EventType(id: id, name: row.1, color: row.2, icon: row.3),
                createdAt: Date(timeIntervalSince1970: row.4), updatedAt: Date(timeIntervalSince1970: row.5))
        }
    }

    static func fetchEventType(_ s: PostgresSession, userId: String, id: String) async throws
        -> Timestamped<EventType>?
    {
        try await eventTypes(
            s, "\(unescaped: eventTypeColumns) WHERE id = \(id) AND user_id = \(userId)"
        ).first
    }

    static func nameTaken(_ s: PostgresSession, userId: String, name: String, except id: String) async throws -> Bool {
        try await s.run(
            """
            SELECT 1 FROM event_types
            WHERE user_id = \(userId) AND lower(name) = lower(\(name)::text COLLATE "C") AND id <> \(id)
            """) > 0
    }

    /// Implements `ServerStore.listEventTypes`.
    public func listEventTypes(userId: String) async throws -> [Timestamped<EventType>] {
        try await database.read { s in
            try await Self.eventTypes(
                s, "\(unescaped: Self.eventTypeColumns) WHERE user_id = \(userId) ORDER BY lower(name), id")
        }
    }

    /// Implements `ServerStore.createEventType`.
    public func createEventType(userId: String, _ type: EventType, now: Date) async throws -> (
        Timestamped<EventType>, Bool
    ) {
        try await database.transaction(feedOf: userId) { s in
            let id = type.id.description
            if let owner = try await s.value("SELECT user_id FROM event_types WHERE id = \(id)", as: String.self) {
                guard owner == userId, let stored = try await Self.fetchEventType(s, userId: userId, id: id) else {
                    throw StoreError.conflict("the id \(id) is already in use")
                }
                if StoreRules.sameEventType(stored.value, type) { return (stored, false) }
                throw StoreError.conflict("an event type with id \(id) already exists with other values")
            }
            if let body = try await Self.deletedBody(s, userId: userId, entity: .eventType, id: id) {
                return (try StoreRules.decode(Timestamped<EventType>.self, body), false)
            }
            if try await Self.nameTaken(s, userId: userId, name: type.name, except: id) {
                throw StoreError.conflict("an event type named \"\(type.name)\" already exists")
            }
            let seconds = now.timeIntervalSince1970
            let inserted = try await s.run(
                """
                INSERT INTO event_types (id, user_id, name, color, icon, created_at, updated_at)
                VALUES (\(id), \(userId), \(type.name), \(type.color), \(type.icon), \(seconds), \(seconds))
                ON CONFLICT DO NOTHING RETURNING 1
                """)
            // Another user took the id at this moment (their transaction holds their own lock).
            guard inserted == 1 else { throw StoreError.conflict("the id \(id) is already in use") }
            let stored = Timestamped(type, createdAt: now, updatedAt: now)
            try await Self.appendChange(
                s, userId: userId, entity: .eventType, id: id, operation: .create, data: try StoreRules.encode(stored),
                now: now)
            return (stored, true)
        }
    }

    /// Implements `ServerStore.eventType`.
    public func eventType(userId: String, id: String) async throws -> Timestamped<EventType>? {
        try await database.read { s in try await Self.fetchEventType(s, userId: userId, id: id) }
    }

    /// Implements `ServerStore.updateEventType`.
    public func updateEventType(
        userId: String, id: String, _ update: EventTypeUpdate, base: ChangeBase?, now: Date
    ) async throws -> Timestamped<EventType> {
        let outcome: Result<Timestamped<EventType>, StoreError> = try await database.transaction(feedOf: userId) { s in
            let patch = try FieldPatch.object(update)
            guard let stored = try await Self.fetchEventType(s, userId: userId, id: id) else {
                return .failure(
                    try await Self.missing(
                        s, userId: userId, entity: .eventType, id: id, what: "event type", patch: patch, base: base,
                        now: now
                    ) { body in try StoreRules.edit(body, with: update) })
            }
            let conflicts = try await Self.fieldConflicts(
                s, entity: .eventType, id: id,
                current: { try StoreRules.fields(of: stored.value, as: EventTypeUpdate.self) }, patch: patch,
                base: base, now: now)
            let updated = try StoreRules.valid(update.apply(to: stored.value))
            if try await Self.nameTaken(s, userId: userId, name: updated.name, except: id) {
                throw StoreError.conflict("an event type named \"\(updated.name)\" already exists")
            }
            try await s.run(
                """
                UPDATE event_types SET name = \(updated.name), color = \(updated.color), icon = \(updated.icon),
                updated_at = \(now.timeIntervalSince1970) WHERE id = \(id)
                """)
            let result = Timestamped(updated, createdAt: stored.createdAt, updatedAt: now)
            let version = try await Self.appendChange(
                s, userId: userId, entity: .eventType, id: id, operation: .update, data: try StoreRules.encode(result),
                now: now)
            try await Self.recordFieldVersions(
                s, entity: .eventType, id: id, version: version, fields: patch.keys, base: base, now: now)
            try await Self.record(conflicts, s, userId: userId, now: now)
            return .success(result)
        }
        return try outcome.get()
    }

    /// Implements `ServerStore.deleteEventType`.
    public func deleteEventType(userId: String, id: String, base: ChangeBase?, now: Date) async throws {
        try await database.transaction(feedOf: userId) { s in
            guard let storedType = try await Self.fetchEventType(s, userId: userId, id: id) else {
                throw StoreError.notFound("event type")
            }
            try await Self.recordDeletion(
                s, userId: userId, entity: .eventType, id: id,
                current: { try StoreRules.fields(of: storedType.value, as: EventTypeUpdate.self) },
                body: try StoreRules.encode(storedType), base: base, now: now)
            let events = try await s.all(
                """
                SELECT id, body, created_at FROM events WHERE user_id = \(userId) AND event_type_id = \(id) ORDER BY id
                """, as: (String, String, Double).self)
            // The events created after the deleting device's base: one range read of the feed.
            var unseen: Set<String> = []
            if let base {
                unseen = Set(
                    try await s.column(
                        """
                        SELECT entity_id FROM change_log WHERE user_id = \(userId) AND seq > \(base.version)
                        AND entity_type = 'event' AND operation = 'create'
                        """, as: String.self))
            }
            for (eventId, body, createdAt) in events {
                // Each event goes with the type, its unseen or later edits kept as a direct delete's are.
                try await Self.recordDeletion(
                    s, userId: userId, entity: .event, id: eventId,
                    current: {
                        try FieldPatch.object(
                            EventUpdate(everyFieldOf: try StoreRules.decode(Timestamped<Event>.self, body).value))
                    }, body: body, base: base, now: now, cascade: (createdAt, unseen.contains(eventId)))
                try await Self.appendChange(
                    s, userId: userId, entity: .event, id: eventId, operation: .delete, data: nil, now: now)
            }
            try await s.run("DELETE FROM events WHERE user_id = \(userId) AND event_type_id = \(id)")
            // Geofences that pointed at the type lose the reference (and say so in the feed).
            for (geofenceId, body) in try await s.all(
                "SELECT id, body FROM geofences WHERE user_id = \(userId) ORDER BY id", as: (String, String).self)
            {
                guard let cleared = try StoreRules.geofence(body, clearing: id, now: now) else { continue }
                try await s.run(
                    """
                    UPDATE geofences SET body = \(cleared), updated_at = \(now.timeIntervalSince1970)
                    WHERE id = \(geofenceId)
                    """)
                try await Self.appendChange(
                    s, userId: userId, entity: .geofence, id: geofenceId, operation: .update, data: cleared, now: now)
            }
            try await s.run("DELETE FROM event_types WHERE id = \(id)")
            try await Self.appendChange(
                s, userId: userId, entity: .eventType, id: id, operation: .delete, data: nil, now: now)
        }
    }
}
