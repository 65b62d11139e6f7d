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

    public func listEventTypes(userId: String) async throws -> [Timestamped<EventType>] {
        try await db.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM event_types WHERE user_id = ? ORDER BY name, id", arguments: [userId]
            ).map(Self.eventType(from:))
        }
    }

    public func createEventType(userId: String, _ type: EventType, now: Date) async throws -> (
        Timestamped<EventType>, Bool
    ) {
        try await db.write { db in
            let id = type.id.description
            let facts = try Self.createFacts(
                db, userId: userId, entity: .eventType, table: "event_types", id: id, fetch: Self.fetchEventType)
            let plan = try StoreFlows.createEventType(
                type, facts: facts, nameTaken: try Self.nameTaken(db, userId: userId, name: type.name, except: id),
                now: now)
            try Self.write(plan.writes, db, userId: userId, now: now)
            return plan.answer
        }
    }

    public func eventType(userId: String, id: String) async throws -> Timestamped<EventType>? {
        try await db.read { db in try Self.fetchEventType(db, userId: userId, id: id) }
    }

    public func updateEventType(
        userId: String, id: String, _ update: EventTypeUpdate, base: ChangeBase?, now: Date
    ) async throws -> Timestamped<EventType> {
        try await edit(
            .eventType, id: id, what: "event type", userId: userId, update, base: base, now: now,
            fetch: Self.fetchEventType,
            refusal: { db, facts, edited in
                let nameTaken = try StoreFlows.nameQuestion(facts, edited: edited).map {
                    try Self.nameTaken(db, userId: userId, name: $0, except: id)
                }
                return StoreFlows.refusal(nameTaken: nameTaken ?? false, edited)
            }, row: { type, _ in .updateEventType(type) })
    }

    public func deleteEventType(userId: String, id: String, base: ChangeBase?, now: Date) async throws {
        let found = try await db.write { db in
            let type = try Self.editFacts(
                db, userId: userId, entity: .eventType, id: id, base: base, fetch: Self.fetchEventType)
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
            let facts = TypeDeleteFacts(
                type: type,
                events: try events.map { row in
                    TypeDeleteFacts.Member(
                        id: row["id"], body: row["body"], createdAt: row["created_at"],
                        changed: try Self.changedFields(db, entity: .event, id: row["id"], since: base))
                }, unseen: unseen,
                geofences: try Row.fetchAll(
                    db, sql: "SELECT id, body FROM geofences WHERE user_id = ? ORDER BY id", arguments: [userId]
                ).map { ($0["id"], $0["body"]) },
                definitions: try Row.fetchAll(
                    db,
                    sql:
                        "SELECT id, body FROM property_definitions WHERE user_id = ? AND event_type_id = ? ORDER BY id",
                    arguments: [userId, id]
                ).map { ($0["id"], $0["body"]) })
            let plan = try StoreFlows.deleteEventType(id: id, facts: facts, base: base, now: now)
            try Self.write(plan.writes, db, userId: userId, now: now)
            return plan.answer
        }
        if !found { throw StoreError.notFound("event type") }
    }
}
