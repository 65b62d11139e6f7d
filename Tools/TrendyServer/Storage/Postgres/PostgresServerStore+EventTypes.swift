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

    public func listEventTypes(userId: String) async throws -> [Timestamped<EventType>] {
        try await database.read { s in
            try await Self.eventTypes(
                s, "\(unescaped: Self.eventTypeColumns) WHERE user_id = \(userId) ORDER BY lower(name), id")
        }
    }

    public func createEventType(userId: String, _ type: EventType, now: Date) async throws -> (
        Timestamped<EventType>, Bool
    ) {
        try await database.transaction(feedOf: userId) { s in
            let id = type.id.description
            let facts = try await Self.createFacts(
                s, userId: userId, entity: .eventType, table: "event_types", id: id, fetch: Self.fetchEventType)
            let plan = try StoreFlows.createEventType(
                type, facts: facts,
                nameTaken: try await Self.nameTaken(s, userId: userId, name: type.name, except: id), now: now)
            try await Self.write(plan.writes, s, userId: userId, now: now)
            return plan.answer
        }
    }

    public func eventType(userId: String, id: String) async throws -> Timestamped<EventType>? {
        try await database.read { s in try await Self.fetchEventType(s, userId: userId, id: id) }
    }

    public func updateEventType(
        userId: String, id: String, _ update: EventTypeUpdate, base: ChangeBase?, now: Date
    ) async throws -> Timestamped<EventType> {
        try await edit(
            .eventType, id: id, what: "event type", userId: userId, update, base: base, now: now,
            fetch: Self.fetchEventType,
            refusal: { s, facts, edited in
                var nameTaken = false
                if let name = StoreFlows.nameQuestion(facts, edited: edited) {
                    nameTaken = try await Self.nameTaken(s, userId: userId, name: name, except: id)
                }
                return StoreFlows.refusal(nameTaken: nameTaken, edited)
            }, row: { type, _ in .updateEventType(type) })
    }

    public func deleteEventType(userId: String, id: String, base: ChangeBase?, now: Date) async throws {
        let found = try await database.transaction(feedOf: userId) { s in
            let type = try await Self.editFacts(
                s, userId: userId, entity: .eventType, id: id, base: base, fetch: Self.fetchEventType)
            var events: [TypeDeleteFacts.Member] = []
            for (eventId, body, createdAt) in try await s.all(
                """
                SELECT id, body, created_at FROM events WHERE user_id = \(userId) AND event_type_id = \(id) ORDER BY id
                """, as: (String, String, Double).self)
            {
                events.append(
                    TypeDeleteFacts.Member(
                        id: eventId, body: body, createdAt: createdAt,
                        changed: try await Self.changedFields(s, entity: .event, id: eventId, since: base)))
            }
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
            let geofences = try await s.all(
                "SELECT id, body FROM geofences WHERE user_id = \(userId) ORDER BY id", as: (String, String).self)
            let definitions = try await s.all(
                """
                SELECT id, body FROM property_definitions WHERE user_id = \(userId) AND event_type_id = \(id) ORDER BY id
                """, as: (String, String).self)
            let facts = TypeDeleteFacts(
                type: type, events: events, unseen: unseen, geofences: geofences.map { (id: $0.0, body: $0.1) },
                definitions: definitions.map { (id: $0.0, body: $0.1) })
            let plan = try StoreFlows.deleteEventType(id: id, facts: facts, base: base, now: now)
            try await Self.write(plan.writes, s, userId: userId, now: now)
            return plan.answer
        }
        if !found { throw StoreError.notFound("event type") }
    }
}
