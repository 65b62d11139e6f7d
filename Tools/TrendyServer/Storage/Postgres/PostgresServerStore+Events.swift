import Foundation
import PostgresNIO
import TrendyAPI
import TrendyModels

extension PostgresServerStore {
    static func fetchEvent(_ s: PostgresSession, userId: String, id: String) async throws -> Timestamped<Event>? {
        try await s.value("SELECT body FROM events WHERE id = \(id) AND user_id = \(userId)", as: String.self)
            .map { try StoreRules.decodeStoredEvent($0) }
    }

    public func listEvents(userId: String, limit: Int, from start: EventPageStart) async throws -> EventListing {
        try await database.read { s in
            let rows: [(Int64, String, String)]
            switch start {
            case .offset(let offset):
                rows = try await s.all(
                    """
                    SELECT timestamp_ms, id, body FROM events WHERE user_id = \(userId)
                    ORDER BY timestamp_ms DESC, id DESC LIMIT \(limit + 1) OFFSET \(offset)
                    """, as: (Int64, String, String).self)
            case .after(let key, let skipping):
                // A row-value comparison: a range search of `events_user_time`, whatever the page.
                rows = try await s.all(
                    """
                    SELECT timestamp_ms, id, body FROM events
                    WHERE user_id = \(userId) AND (timestamp_ms, id) < (\(key.timestampMs), \(key.id))
                    ORDER BY timestamp_ms DESC, id DESC LIMIT \(limit + 1) OFFSET \(skipping)
                    """, as: (Int64, String, String).self)
            }
            let page = rows.prefix(limit)
            let last = page.last.map { EventPageKey(timestampMs: $0.0, id: $0.1) }
            return EventListing(bodies: page.map(\.2), next: rows.count > limit ? last : nil)
        }
    }

    public func exportPage(
        userId: String, after key: EventPageKey?, limit: Int, range: ClosedRange<Int64>?, typeIds: [String]
    ) async throws -> EventListing {
        // Absent bounds as the widest ones, so one statement serves every request.
        let (afterMs, afterId) = key.map { ($0.timestampMs, $0.id) } ?? (Int64.max, "")
        let (low, high) = range.map { ($0.lowerBound, $0.upperBound) } ?? (Int64.min, Int64.max)
        return try await database.read { s in
            let rows = try await s.all(
                """
                SELECT timestamp_ms, id, body FROM events WHERE user_id = \(userId)
                AND (\(key == nil) OR (timestamp_ms, id) < (\(afterMs), \(afterId)))
                AND timestamp_ms BETWEEN \(low) AND \(high)
                AND (\(typeIds.isEmpty) OR event_type_id = ANY(\(typeIds)::text[]))
                ORDER BY timestamp_ms DESC, id DESC LIMIT \(limit + 1)
                """, as: (Int64, String, String).self)
            let page = rows.prefix(limit)
            let last = page.last.map { EventPageKey(timestampMs: $0.0, id: $0.1) }
            return EventListing(bodies: page.map(\.2), next: rows.count > limit ? last : nil)
        }
    }

    public func event(userId: String, id: String) async throws -> Timestamped<Event>? {
        try await database.read { s in try await Self.fetchEvent(s, userId: userId, id: id) }
    }

    /// What a batch of creates reads, in a few set queries instead of several per event.
    static func facts(_ s: PostgresSession, userId: String, _ events: [Event]) async throws -> BatchFacts {
        var facts = BatchFacts()
        let ids = events.map(\.id.description)
        for (id, owner, body) in try await s.all(
            "SELECT id, user_id, body FROM events WHERE id = ANY(\(ids)::text[])", as: (String, String, String).self)
        {
            facts.taken[id] = (owner, body)
        }
        for (id, version) in try await s.all(
            """
            SELECT entity_id, version FROM deleted_entities
            WHERE entity_type = 'event' AND user_id = \(userId) AND entity_id = ANY(\(ids)::text[])
            """, as: (String, Int64?).self)
        {
            facts.deleted[id] = DeletedId(version: version)
        }
        let typeIds = Array(Set(events.map(\.eventTypeId.description)))
        facts.types = Set(
            try await s.all(
                "SELECT id FROM event_types WHERE user_id = \(userId) AND id = ANY(\(typeIds)::text[])", as: String.self
            ))
        let geofenceIds = Array(Set(events.compactMap { $0.geofenceId?.description }))
        if !geofenceIds.isEmpty {
            facts.geofences = Set(
                try await s.column(
                    """
                    SELECT id FROM geofences WHERE user_id = \(userId) AND id = ANY(\(geofenceIds)::text[])
                    UNION SELECT entity_id FROM deleted_entities
                    WHERE entity_type = 'geofence' AND user_id = \(userId) AND entity_id = ANY(\(geofenceIds)::text[])
                    """, as: String.self))
        }
        for typeId in Set(events.lazy.filter { !$0.properties.isEmpty }.map(\.eventTypeId.description)) {
            facts.definitions[typeId] = try await definitions(s, userId: userId, typeId: typeId)
        }
        var manualTypes: [String] = []
        var manualTimes: [Int64] = []
        var externals: [String] = []
        for event in events {
            switch DedupKey(event) {
            case .manual(let typeId, let ms)?:
                manualTypes.append(typeId)
                manualTimes.append(ms)
            case .healthkit(let external)?: externals.append(external)
            case nil: break
            }
        }
        if !manualTypes.isEmpty {
            for (typeId, ms, body) in try await s.all(
                // One look-up of the de-duplication index per key (LATERAL … LIMIT 1): a join
                // let the planner scan all of the user's events, ~20 ms a batch at 50,000 events.
                """
                SELECT k.type_id, k.ms, d.body FROM unnest(\(manualTypes)::text[], \(manualTimes)::bigint[]) AS k(type_id, ms)
                CROSS JOIN LATERAL (
                    SELECT e.body FROM events e WHERE e.user_id = \(userId) AND e.event_type_id = k.type_id
                    AND e.timestamp_ms = k.ms AND e.source_type IN ('manual', 'imported') LIMIT 1
                ) AS d
                """, as: (String, Int64, String).self)
            {
                facts.duplicates[.manual(typeId: typeId, timestampMs: ms)] = body
            }
        }
        if !externals.isEmpty {
            for (external, body) in try await s.all(
                """
                SELECT external_id, body FROM events
                WHERE user_id = \(userId) AND source_type = 'healthkit' AND external_id = ANY(\(externals)::text[])
                """, as: (String, String).self)
            {
                facts.duplicates[.healthkit(externalId: external)] = body
            }
        }
        return facts
    }

    /// A handful of statements whatever the batch's size.
    public func createEvents(userId: String, _ events: [Event], device: String?, now: Date) async throws
        -> [EventCreateOutcome]
    {
        guard !events.isEmpty else { return [] }
        return try await database.transaction(feedOf: userId) { s in
            let plan = try StoreFlows.createEvents(
                events, facts: try await Self.facts(s, userId: userId, events), userId: userId, device: device,
                now: now)
            return StoreFlows.settled(plan, rejected: try await Self.write(plan.writes, s, userId: userId, now: now))
        }
    }

    /// Whether `id` is one of the user's geofences, or was (deleted since).
    static func isOwnGeofence(_ s: PostgresSession, userId: String, id: UUIDv7) async throws -> Bool {
        try await s.run(
            """
            SELECT 1 FROM geofences WHERE id = \(id.description) AND user_id = \(userId)
            UNION ALL SELECT 1 FROM deleted_entities
            WHERE entity_type = 'geofence' AND entity_id = \(id.description) AND user_id = \(userId)
            """) > 0
    }

    /// The id of the stored duplicate of `event` by its de-duplication key, if any.
    static func duplicateId(_ s: PostgresSession, userId: String, of event: Event) async throws -> String? {
        switch DedupKey(event) {
        case .manual(let typeId, let ms)?:
            return try await s.value(
                """
                SELECT id FROM events WHERE user_id = \(userId) AND event_type_id = \(typeId)
                AND timestamp_ms = \(ms) AND source_type IN ('manual', 'imported')
                """, as: String.self)
        case .healthkit(let external)?:
            return try await s.value(
                """
                SELECT id FROM events WHERE user_id = \(userId) AND external_id = \(external)
                AND source_type = 'healthkit'
                """, as: String.self)
        case nil:
            return nil
        }
    }

    /// The store's answers to an event edit's questions.
    static func answers(_ s: PostgresSession, userId: String, _ questions: EventQuestions) async throws
        -> EventAnswers
    {
        var answers = EventAnswers()
        if let geofence = questions.geofence {
            answers.geofenceKnown = try await isOwnGeofence(s, userId: userId, id: geofence)
        }
        if let type = questions.type {
            answers.typeKnown = try await fetchEventType(s, userId: userId, id: type) != nil
        }
        if let event = questions.duplicateOf {
            answers.duplicateId = try await duplicateId(s, userId: userId, of: event)
        }
        if let properties = questions.properties {
            answers.propertyIssues = PropertyDefinition.issues(
                of: properties.after, before: properties.before,
                in: try await definitions(s, userId: userId, typeId: properties.typeId))
        }
        return answers
    }

    public func updateEvent(userId: String, id: String, _ update: EventUpdate, base: ChangeBase?, now: Date)
        async throws -> Timestamped<Event>
    {
        try await database.transaction(feedOf: userId) { s in
            try await Self.editEvent(s, userId: userId, id: id, update, base: base, now: now)
        }.get()
    }

    public func deleteEvent(userId: String, id: String, base: ChangeBase?, now: Date) async throws {
        let found = try await database.transaction(feedOf: userId) { s in
            try await Self.deleteEvent(s, userId: userId, id: id, base: base, now: now)
        }
        if !found { throw StoreError.notFound("event") }
    }

    /// One transaction, the user's feed lock taken once for the whole batch.
    public func editEvents(userId: String, _ edits: [EventEdit], now: Date) async throws -> [EventEditOutcome] {
        try await database.transaction(feedOf: userId) { s in
            var outcomes: [EventEditOutcome] = []
            outcomes.reserveCapacity(edits.count)
            for edit in edits {
                do {
                    if let update = edit.update {
                        outcomes.append(
                            EventEditOutcome(
                                try await Self.editEvent(
                                    s, userId: userId, id: edit.id, update, base: edit.base, now: now)
                            ))
                    } else {
                        let found = try await Self.deleteEvent(
                            s, userId: userId, id: edit.id, base: edit.base, now: now)
                        outcomes.append(found ? .deleted : .failed(.notFound("event")))
                    }
                } catch let refusal as StoreError {
                    outcomes.append(.failed(refusal))
                }
            }
            return outcomes
        }
    }

    static func editEvent(
        _ s: PostgresSession, userId: String, id: String, _ update: EventUpdate, base: ChangeBase?, now: Date
    ) async throws -> Result<Timestamped<Event>, StoreError> {
        try await edit(
            s, .event, id: id, what: "event", userId: userId, update, base: base, now: now, fetch: fetchEvent,
            refusal: { s, facts, edited in
                StoreFlows.refusal(
                    try await answers(s, userId: userId, StoreFlows.questions(facts, edited: edited)), id: id)
            }, row: { event, body in .updateEvent(event, body: body) })
    }

    static func deleteEvent(_ s: PostgresSession, userId: String, id: String, base: ChangeBase?, now: Date)
        async throws -> Bool
    {
        try await delete(
            s, .event, id: id, what: "event", userId: userId, as: EventUpdate.self, base: base, now: now,
            fetch: fetchEvent, row: .deleteEvent(id: id))
    }
}
