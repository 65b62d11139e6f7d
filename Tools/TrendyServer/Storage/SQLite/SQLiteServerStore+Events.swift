import Foundation
import GRDB
import TrendyAPI
import TrendyModels

extension SQLiteServerStore {
    static func fetchEvent(_ db: Database, userId: String, id: String) throws -> Timestamped<Event>? {
        guard
            let body = try String.fetchOne(
                db.cachedStatement(sql: "SELECT body FROM events WHERE id = ? AND user_id = ?"),
                arguments: [id, userId])
        else { return nil }
        return try StoreRules.decodeStoredEvent(body)
    }

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

    public func exportPage(
        userId: String, after key: EventPageKey?, limit: Int, range: ClosedRange<Int64>?, typeIds: [String]
    ) async throws -> EventListing {
        var conditions = ["user_id = ?"]
        var arguments: [(any DatabaseValueConvertible)?] = [userId]
        if let key {
            conditions.append("(timestamp_ms, id) < (?, ?)")
            arguments += [key.timestampMs, key.id]
        }
        if let range {
            conditions.append("timestamp_ms BETWEEN ? AND ?")
            arguments += [range.lowerBound, range.upperBound]
        }
        if !typeIds.isEmpty {
            conditions.append("event_type_id IN (\(typeIds.map { _ in "?" }.joined(separator: ",")))")
            arguments += typeIds
        }
        let sql = """
            SELECT timestamp_ms, id, body FROM events WHERE \(conditions.joined(separator: " AND "))
            ORDER BY timestamp_ms DESC, id DESC LIMIT ?
            """
        let bound = StatementArguments(arguments + [limit + 1])
        return try await db.read { db in
            let rows = try Row.fetchAll(db, sql: sql, arguments: bound)
            let page = rows.prefix(limit)
            let last = page.last.map { EventPageKey(timestampMs: $0[0], id: $0[1]) }
            return EventListing(bodies: page.map { $0[2] }, next: rows.count > limit ? last : nil)
        }
    }

    public func event(userId: String, id: String) async throws -> Timestamped<Event>? {
        try await db.read { db in try Self.fetchEvent(db, userId: userId, id: id) }
    }

    /// A column (`body` or `id`) of the stored event with the de-duplication key `key`, if any.
    static func duplicate(_ db: Database, userId: String, key: DedupKey, column: String) throws -> String? {
        switch key {
        case .manual(let typeId, let ms):
            return try String.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT \(column) FROM events WHERE user_id = ? AND event_type_id = ? AND timestamp_ms = ?
                        AND source_type IN ('manual', 'imported')
                        """), arguments: [userId, typeId, ms])
        case .healthkit(let external):
            return try String.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT \(column) FROM events WHERE user_id = ? AND external_id = ? AND source_type = 'healthkit'
                        """), arguments: [userId, external])
        }
    }

    /// What a batch of creates reads: per event, its id (taken, or deleted), its type, geofence and
    /// duplicate — cached statements, one look-up of an index each.
    static func batchFacts(_ db: Database, userId: String, _ events: [Event]) throws -> BatchFacts {
        var facts = BatchFacts()
        for event in events {
            let id = event.id.description
            if let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT user_id, body FROM events WHERE id = ?"), arguments: [id])
            {
                facts.taken[id] = (row["user_id"], row["body"])
            } else if let deleted = try deleted(db, userId: userId, entity: .event, id: id) {
                facts.deleted[id] = deleted
            }
            if let key = DedupKey(event), facts.duplicates[key] == nil,
                let body = try duplicate(db, userId: userId, key: key, column: "body")
            {
                facts.duplicates[key] = body
            }
            if let geofence = event.geofenceId, try isOwnGeofence(db, userId: userId, id: geofence) {
                facts.geofences.insert(geofence.description)
            }
        }
        facts.types = try knownTypes(db, userId: userId, Array(Set(events.map(\.eventTypeId.description))))
        for typeId in Set(events.lazy.filter { !$0.properties.isEmpty }.map(\.eventTypeId.description)) {
            facts.definitions[typeId] = try definitions(db, userId: userId, typeId: typeId)
        }
        return facts
    }

    public func createEvents(userId: String, _ events: [Event], device: String?, now: Date) async throws
        -> [EventCreateOutcome]
    {
        try await db.write { db in
            let plan = try StoreFlows.createEvents(
                events, facts: try Self.batchFacts(db, userId: userId, events), userId: userId, device: device,
                now: now)
            return StoreFlows.settled(plan, rejected: try Self.write(plan.writes, db, userId: userId, now: now))
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

    /// The store's answers to an event edit's questions.
    static func answers(_ db: Database, userId: String, _ questions: EventQuestions) throws -> EventAnswers {
        var answers = EventAnswers()
        if let geofence = questions.geofence {
            answers.geofenceKnown = try isOwnGeofence(db, userId: userId, id: geofence)
        }
        if let type = questions.type { answers.typeKnown = try fetchEventType(db, userId: userId, id: type) != nil }
        if let event = questions.duplicateOf, let key = DedupKey(event) {
            answers.duplicateId = try duplicate(db, userId: userId, key: key, column: "id")
        }
        if let properties = questions.properties {
            answers.propertyIssues = PropertyDefinition.issues(
                of: properties.after, before: properties.before,
                in: try definitions(db, userId: userId, typeId: properties.typeId))
        }
        return answers
    }

    public func updateEvent(userId: String, id: String, _ update: EventUpdate, base: ChangeBase?, now: Date)
        async throws -> Timestamped<Event>
    {
        try await db.write { db in try Self.editEvent(db, userId: userId, id: id, update, base: base, now: now) }.get()
    }

    public func deleteEvent(userId: String, id: String, base: ChangeBase?, now: Date) async throws {
        let found = try await db.write { db in try Self.deleteEvent(db, userId: userId, id: id, base: base, now: now) }
        if !found { throw StoreError.notFound("event") }
    }

    public func editEvents(userId: String, _ edits: [EventEdit], now: Date) async throws -> [EventEditOutcome] {
        try await db.write { db in
            try edits.map { edit in
                do {
                    guard let update = edit.update else {
                        let found = try Self.deleteEvent(db, userId: userId, id: edit.id, base: edit.base, now: now)
                        return found ? .deleted : .failed(.notFound("event"))
                    }
                    return EventEditOutcome(
                        try Self.editEvent(db, userId: userId, id: edit.id, update, base: edit.base, now: now))
                } catch let refusal as StoreError {
                    return .failed(refusal)
                }
            }
        }
    }

    static func editEvent(
        _ db: Database, userId: String, id: String, _ update: EventUpdate, base: ChangeBase?, now: Date
    )
        throws -> Result<Timestamped<Event>, StoreError>
    {
        try edit(
            db, .event, id: id, what: "event", userId: userId, update, base: base, now: now, fetch: fetchEvent,
            refusal: { db, facts, edited in
                StoreFlows.refusal(try answers(db, userId: userId, StoreFlows.questions(facts, edited: edited)), id: id)
            }, row: { event, body in .updateEvent(event, body: body) })
    }

    static func deleteEvent(_ db: Database, userId: String, id: String, base: ChangeBase?, now: Date) throws -> Bool {
        try delete(
            db, .event, id: id, what: "event", userId: userId, as: EventUpdate.self, base: base, now: now,
            fetch: fetchEvent, row: .deleteEvent(id: id))
    }
}
