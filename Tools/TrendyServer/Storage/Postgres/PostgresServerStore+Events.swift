import Foundation
import PostgresNIO
import TrendyAPI
import TrendyModels

extension PostgresServerStore {
    static func fetchEvent(_ s: PostgresSession, userId: String, id: String) async throws -> Timestamped<Event>? {
        try await s.value("SELECT body FROM events WHERE id = \(id) AND user_id = \(userId)", as: String.self)
            .map { try StoreRules.decode(Timestamped<Event>.self, $0) }
    }

    /// Implements `ServerStore.listEvents`.
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

    /// Implements `ServerStore.event`.
    public func event(userId: String, id: String) async throws -> Timestamped<Event>? {
        try await database.read { s in try await Self.fetchEvent(s, userId: userId, id: id) }
    }

    /// The de-duplication key of an event: manual and imported events by type and time, HealthKit
    /// samples by their external id, geofence events by none.
    enum DedupKey: Hashable {
        case manual(typeId: String, timestampMs: Int64)
        case healthkit(externalId: String)

        init?(_ event: Event) {
            switch event.sourceType {
            case .manual, .imported:
                self = .manual(
                    typeId: event.eventTypeId.description, timestampMs: StoreRules.milliseconds(event.timestamp))
            case .healthkit:
                guard let external = event.externalId else { return nil }
                self = .healthkit(externalId: external)
            case .geofence:
                return nil
            }
        }
    }

    /// What a batch needs to know about what is stored, read in a few set queries instead of
    /// several per event: the batch's ids (taken, and by whom), deleted ids, the user's types
    /// and geofences it names, and stored duplicates by key.
    struct BatchFacts {
        var taken: [String: (userId: String, body: String)] = [:]
        var deleted: [String: String] = [:]
        var types: Set<String> = []
        var geofences: Set<String> = []
        var duplicates: [DedupKey: String] = [:]
    }

    static func facts(_ s: PostgresSession, userId: String, _ events: [Event]) async throws -> BatchFacts {
        var facts = BatchFacts()
        let ids = events.map(\.id.description)
        for (id, owner, body) in try await s.all(
            "SELECT id, user_id, body FROM events WHERE id = ANY(\(ids)::text[])", as: (String, String, String).self)
        {
            facts.taken[id] = (owner, body)
        }
        for (id, body) in try await s.all(
            """
            SELECT entity_id, body FROM deleted_entities
            WHERE entity_type = 'event' AND user_id = \(userId) AND entity_id = ANY(\(ids)::text[])
            """, as: (String, String).self)
        {
            facts.deleted[id] = body
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

    /// Implements `ServerStore.createEvents`: the same outcomes, in the same order of checks, as
    /// the SQLite store's one-by-one loop (an event earlier in the batch counts as stored for the
    /// ones after it), from a handful of statements whatever the batch's size.
    public func createEvents(userId: String, _ events: [Event], now: Date) async throws -> [EventCreateOutcome] {
        guard !events.isEmpty else { return [] }
        return try await database.transaction(feedOf: userId) { s in
            var facts = try await Self.facts(s, userId: userId, events)
            let decoder = TrendyJSON.decoder()
            func stored(_ body: String) throws -> Timestamped<Event> {
                try decoder.decode(Timestamped<Event>.self, from: Data(body.utf8))
            }
            var outcomes: [EventCreateOutcome] = []
            outcomes.reserveCapacity(events.count)
            var new: [(index: Int, event: Event, body: String)] = []
            for event in events {
                let id = event.id.description
                if let (owner, body) = facts.taken[id] {
                    outcomes.append(
                        owner == userId
                            ? .existing(try stored(body)) : .failed(.conflict("the id \(id) is already in use")))
                    continue
                }
                if let body = facts.deleted[id] {
                    outcomes.append(.existing(try stored(body)))
                    continue
                }
                guard facts.types.contains(event.eventTypeId.description) else {
                    outcomes.append(
                        .failed(.validation([FieldIssue(field: "event_type_id", reason: "no such event type")])))
                    continue
                }
                if let geofence = event.geofenceId, !facts.geofences.contains(geofence.description) {
                    outcomes.append(
                        .failed(.validation([FieldIssue(field: "geofence_id", reason: "no such geofence")])))
                    continue
                }
                let key = DedupKey(event)
                if let key, let body = facts.duplicates[key] {
                    let survivor = try stored(body)
                    let survivorId = survivor.value.id.description
                    // The merge is a change of the survivor in the feed (as the SQLite store's); a
                    // survivor created earlier in this batch has no create in the feed yet, and no
                    // device can have edited it from an older base.
                    let version: Int64
                    if new.contains(where: { $0.event.id == survivor.value.id }) {
                        version = 1
                    } else {
                        version = try await Self.appendChange(
                            s, userId: userId, entity: .event, id: survivorId, operation: .update, data: body, now: now)
                    }
                    try await Self.recordFieldVersions(
                        s, entity: .event, id: survivorId, version: version,
                        fields: try StoreRules.mergedCreateFields(survivor.value), base: nil, now: now, replace: false)
                    try await Self.recordFieldVersions(
                        s, entity: .event, id: survivorId, version: version, fields: StoreRules.mergedCreateKeyFields,
                        base: nil, now: now)
                    outcomes.append(.existing(survivor))
                    continue
                }
                let body = event.wireJSON(createdAt: now, updatedAt: now)
                facts.taken[id] = (userId, body)
                if let key { facts.duplicates[key] = body }
                new.append((outcomes.count, event, body))
                outcomes.append(.created(Timestamped(event, createdAt: now, updatedAt: now)))
            }
            guard !new.isEmpty else { return outcomes }
            let ids = new.map { $0.event.id.description }
            let seconds = now.timeIntervalSince1970
            let inserted = Set(
                try await s.column(
                    """
                    INSERT INTO events (id, user_id, event_type_id, timestamp_ms, source_type, external_id, body,
                    created_at, updated_at)
                    SELECT id, \(userId), type_id, ms, source, CASE WHEN has_external THEN external END, body,
                    \(seconds), \(seconds)
                    FROM unnest(\(ids)::text[], \(new.map { $0.event.eventTypeId.description })::text[],
                    \(new.map { StoreRules.milliseconds($0.event.timestamp) })::bigint[],
                    \(new.map { $0.event.sourceType.rawValue })::text[],
                    \(new.map { $0.event.externalId ?? "" })::text[],
                    \(new.map { $0.event.externalId != nil })::boolean[], \(new.map(\.body))::text[])
                    AS n(id, type_id, ms, source, external, has_external, body)
                    ON CONFLICT DO NOTHING RETURNING id
                    """, as: String.self))
            // An id another user stored at this very moment (their own lock, not ours) is theirs.
            var logged: [(id: String, body: String)] = []
            for item in new {
                let id = item.event.id.description
                if inserted.contains(id) {
                    logged.append((id, item.body))
                } else {
                    outcomes[item.index] = .failed(.conflict("the id \(id) is already in use"))
                }
            }
            try await s.run(
                """
                INSERT INTO change_log (user_id, seq, entity_type, entity_id, operation, data, created_at)
                SELECT \(userId), last.seq + n.ord, 'event', n.id, 'create', n.body, \(seconds)
                FROM (SELECT COALESCE(MAX(seq), 0) AS seq FROM change_log WHERE user_id = \(userId)) AS last,
                unnest(\(logged.map(\.id))::text[], \(logged.map(\.body))::text[]) WITH ORDINALITY AS n(id, body, ord)
                """)
            return outcomes
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

    /// `update` laid over `before`, checked as every edit of an event is.
    static func edited(_ s: PostgresSession, userId: String, _ before: Event, _ update: EventUpdate) async throws
        -> Event
    {
        let after = try StoreRules.valid(update.apply(to: before))
        if let geofence = after.geofenceId, geofence != before.geofenceId,
            try await !isOwnGeofence(s, userId: userId, id: geofence)
        {
            throw StoreError.validation([FieldIssue(field: "geofence_id", reason: "no such geofence")])
        }
        return after
    }

    /// The stored duplicate of `event` by its de-duplication key, if any.
    static func duplicate(_ s: PostgresSession, userId: String, of event: Event) async throws -> Timestamped<Event>? {
        let body: String?
        switch DedupKey(event) {
        case .manual(let typeId, let ms)?:
            body = try await s.value(
                """
                SELECT body FROM events WHERE user_id = \(userId) AND event_type_id = \(typeId)
                AND timestamp_ms = \(ms) AND source_type IN ('manual', 'imported')
                """, as: String.self)
        case .healthkit(let external)?:
            body = try await s.value(
                """
                SELECT body FROM events WHERE user_id = \(userId) AND external_id = \(external)
                AND source_type = 'healthkit'
                """, as: String.self)
        case nil:
            body = nil
        }
        return try body.map { try StoreRules.decode(Timestamped<Event>.self, $0) }
    }

    /// Implements `ServerStore.updateEvent`.
    public func updateEvent(userId: String, id: String, _ update: EventUpdate, base: ChangeBase?, now: Date)
        async throws -> Timestamped<Event>
    {
        let outcome: Result<Timestamped<Event>, StoreError> = try await database.transaction(feedOf: userId) { s in
            let patch = try FieldPatch.object(update)
            guard let stored = try await Self.fetchEvent(s, userId: userId, id: id) else {
                return .failure(
                    try await Self.missing(
                        s, userId: userId, entity: .event, id: id, what: "event", patch: patch, base: base, now: now
                    ) { body in
                        // Checked like any edit: what a conflict keeps can be restored.
                        var last = try StoreRules.decode(Timestamped<Event>.self, body)
                        last.value = try await Self.edited(s, userId: userId, last.value, update)
                        return try StoreRules.encode(last)
                    })
            }
            let conflicts = try await Self.fieldConflicts(
                s, entity: .event, id: id, current: { try StoreRules.fields(of: stored.value, as: EventUpdate.self) },
                patch: patch, base: base, now: now)
            let updated = try await Self.edited(s, userId: userId, stored.value, update)
            if updated.eventTypeId != stored.value.eventTypeId,
                try await Self.fetchEventType(s, userId: userId, id: updated.eventTypeId.description) == nil
            {
                throw StoreError.validation([FieldIssue(field: "event_type_id", reason: "no such event type")])
            }
            if let duplicate = try await Self.duplicate(s, userId: userId, of: updated),
                duplicate.value.id.description != id
            {
                throw StoreError.conflict("another event of this type already exists at this time")
            }
            let result = Timestamped(updated, createdAt: stored.createdAt, updatedAt: now)
            let body = try StoreRules.encode(result)
            try await s.run(
                """
                UPDATE events SET event_type_id = \(updated.eventTypeId.description),
                timestamp_ms = \(StoreRules.milliseconds(updated.timestamp)), external_id = \(updated.externalId),
                body = \(body), updated_at = \(now.timeIntervalSince1970) WHERE id = \(id)
                """)
            let version = try await Self.appendChange(
                s, userId: userId, entity: .event, id: id, operation: .update, data: body, now: now)
            try await Self.recordFieldVersions(
                s, entity: .event, id: id, version: version, fields: patch.keys, base: base, now: now)
            try await Self.record(conflicts, s, userId: userId, now: now)
            return .success(result)
        }
        return try outcome.get()
    }

    /// Implements `ServerStore.deleteEvent`.
    public func deleteEvent(userId: String, id: String, base: ChangeBase?, now: Date) async throws {
        try await database.transaction(feedOf: userId) { s in
            guard let stored = try await Self.fetchEvent(s, userId: userId, id: id) else {
                throw StoreError.notFound("event")
            }
            try await Self.recordDeletion(
                s, userId: userId, entity: .event, id: id,
                current: { try StoreRules.fields(of: stored.value, as: EventUpdate.self) },
                body: try StoreRules.encode(stored), base: base, now: now)
            try await s.run("DELETE FROM events WHERE id = \(id) AND user_id = \(userId)")
            try await Self.appendChange(
                s, userId: userId, entity: .event, id: id, operation: .delete, data: nil, now: now)
        }
    }
}
