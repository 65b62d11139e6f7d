import Foundation
import GRDB
import TrendyAPI
import TrendyModels
import TrendySync

/// The operations the sync engine needs; each is one transaction.
extension SQLiteLocalStore {
    static func table(_ entity: SyncEntity) -> String {
        switch entity {
        case .eventType: "local_event_types"
        case .event: "local_events"
        case .geofence: "local_geofences"
        case .propertyDefinition: "local_property_definitions"
        }
    }

    /// The outbox's columns ``entry(_:)`` reads, in the order it reads them (by position: read by
    /// name, GRDB compared each column's lowercased name, 7 % of a device's CPU in an upload).
    static let entryColumns =
        "seq, entity, entity_id, kind, payload, idempotency_key, attempts, base_version, sent, next_attempt_at, batch"

    /// An entry from a row of ``entryColumns``.
    static func entry(_ row: Row) -> OutboxEntry? {
        guard let entity = SyncEntity(rawValue: row[1] as String), let kind = MutationKind(rawValue: row[3] as String)
        else { return nil }
        return OutboxEntry(
            seq: row[0], entity: entity, entityId: row[2], kind: kind, payload: row[4], idempotencyKey: row[5],
            attempts: row[6], baseVersion: row[7], sentBefore: row[8] ?? false)
    }

    /// Entries left in flight by a killed process go back to pending (their keys are unchanged,
    /// so resending them is safe).
    func resetInFlight() async throws {
        try await db.write { db in try Outbox.requeueInFlight(db) }
    }

    /// The next unit of work, marked in flight: the oldest pending entry, extended to a batch when
    /// it and the entries right after it are event creates, or event edits and deletes, up to
    /// `batchSize` entries whose payloads come to at most `batchBytes` (the first entry goes
    /// whatever its size). Empty when nothing is ready; `waitUntil` is set when the oldest entry
    /// is backing off.
    func nextWork(
        now: Date, batchSize: Int, batchBytes: Int = OutboxSyncEngine.Configuration.defaultBatchBytes
    ) async throws -> (entries: [OutboxEntry], waitUntil: Date?) {
        // Rows are read 50 at a time, so a unit the byte budget keeps small never reads 500
        // payloads (events of megabytes each would have been a gigabyte a take).
        let chunk = min(batchSize, 50)
        return try await db.write { db in
            let pending = try db.cachedStatement(
                sql: "SELECT \(Self.entryColumns) FROM outbox WHERE state = 'pending' AND seq > ? ORDER BY seq LIMIT ?")
            var rows = try Row.fetchAll(pending, arguments: [Int64.min, chunk])
            guard let first = rows.first, var head = Self.entry(first) else { return ([], nil) }
            let nextAttempt: Double = first[9]
            if nextAttempt > now.timeIntervalSince1970 { return ([], Date(timeIntervalSince1970: nextAttempt)) }
            if head.entity == .geofence, head.kind != .delete {
                head = try Self.withoutDeletedTypes(db, head, sent: first[8])
            }
            var work = [head]
            if head.sentBefore {
                // A batch sent before (its answer lost) goes again exactly as it went: the same
                // entries make the same key, and the server replays its answer. Joined by edits
                // made since, it was another key, and the server applied its items again, over
                // what another device changed meanwhile (an outsider's attack). An entry sent
                // before batches were remembered (`batch` NULL) goes alone.
                if let batch = first[10] as Int64? {
                    work += try Row.fetchAll(
                        db,
                        sql: """
                            SELECT \(Self.entryColumns) FROM outbox WHERE state = 'pending' AND batch = ? AND seq != ?
                            ORDER BY seq
                            """,
                        arguments: [batch, head.seq]
                    ).compactMap(Self.entry)
                }
            } else if head.entity == .event {
                // Events travel in batches, in outbox order: creates in one request, edits and
                // deletes in another (`POST /events/edits`); anything else, or an entry sent
                // before (it goes with its own batch), ends the unit.
                // A batch's body stays well under a server's limit on it (4 MiB here): fifty events
                // with long notes and text properties went over it, and after the 413 the whole
                // batch went one event a request (D66).
                var bytes = head.payload?.utf8.count ?? 0
                var next = rows.dropFirst()
                taking: while work.count < batchSize {
                    for row in next {
                        guard let e = Self.entry(row), e.entity == .event,
                            (e.kind == .create) == (head.kind == .create),
                            !e.sentBefore, (row[9] as Double) <= now.timeIntervalSince1970
                        else { break taking }
                        bytes += e.payload?.utf8.count ?? 0
                        guard bytes <= batchBytes else { break taking }
                        work.append(e)
                        if work.count == batchSize { break taking }
                    }
                    guard rows.count == chunk, let last = rows.last?[0] as Int64? else { break }
                    rows = try Row.fetchAll(pending, arguments: [last, chunk])
                    next = rows[...]
                }
            }
            let seqs = work.map(\.seq)
            // The unit is remembered as a batch (its first entry's seq) the first time it goes.
            try db.execute(
                sql: """
                    UPDATE outbox SET state = 'in_flight', sent = 1, batch = coalesce(batch, ?)
                    WHERE seq IN (\(seqs.map { _ in "?" }.joined(separator: ",")))
                    """,
                arguments: StatementArguments([head.seq] + seqs))
            return (work, nil)
        }
    }

    /// The entry was answered `410 Gone`: it is done, and the entity goes here as the server's
    /// delete takes it (a download that began after the delete never brings that delete).
    func completeGone(_ entry: OutboxEntry) async throws {
        try await db.write { db in
            try db.execute(sql: "DELETE FROM outbox WHERE seq = ?", arguments: [entry.seq])
            try Self.applyDelete(db, entry.entity, entry.entityId)
        }
    }

    /// Events to read back from the server (see ``fail(_:error:refused:)``).
    func eventsToRefetch() async throws -> [String] {
        try await db.read { db in
            try String.fetchAll(db, sql: "SELECT substr(key, 9) FROM sync_state WHERE key LIKE 'refetch:%'")
        }
    }

    /// Stores an event read back, and forgets to read it. `nil`: the server has no such event (its
    /// create never reached it, or was refused): gone here and there, the changes still queued for
    /// it have nothing to change and go too — sent, each was answered "No such event" and stayed
    /// failed for ever (simulation seed 28,596).
    func refetched(_ id: String, _ event: Timestamped<Event>?) async throws {
        if let event { try await bootstrap([.event(event)], remember: false) }
        try await db.write { db in
            try db.execute(sql: "DELETE FROM sync_state WHERE key = ?", arguments: ["refetch:" + id])
            guard event == nil,
                try !(Bool.fetchOne(db, sql: "SELECT 1 FROM local_events WHERE id = ?", arguments: [id]) ?? false)
            else { return }
            try db.execute(
                sql: "DELETE FROM outbox WHERE entity = 'event' AND entity_id = ? AND state != 'in_flight'",
                arguments: [id])
        }
    }

    /// Whether a change is ready to be sent now (the oldest pending one is not waiting out a delay).
    func hasReadyWork(now: Date) async throws -> Bool {
        try await db.read { db in
            guard
                let next = try Double.fetchOne(
                    db, sql: "SELECT next_attempt_at FROM outbox WHERE state = 'pending' ORDER BY seq LIMIT 1")
            else { return false }
            return next <= now.timeIntervalSince1970
        }
    }

    /// The entries reached the server: remove them and mark their entities synced (unless another
    /// change for the entity is still waiting). `replacedIds` maps a sent event id to the id the
    /// server already had for the same event (de-duplication): see ``mergeIntoServerCopy(_:_:clocks:serverId:now:)``.
    ///
    /// `serverAt`: the server's time in the answer that delivered them (`Trendy-Cursor-At`): each
    /// delivered update records it in `pushed_versions` (D61).
    func complete(_ entries: [OutboxEntry], replacedIds: [String: String] = [:], serverAt: String? = nil)
        async throws
    {
        let at = now()
        guard !entries.isEmpty else { return }
        // The common case — a batch of creates of one kind, nothing replaced — takes two
        // statements in all instead of three per entry.
        if replacedIds.isEmpty, entries.count > 1, let kind = entries.first?.entity,
            entries.allSatisfy({ $0.entity == kind && $0.kind != .delete })
        {
            try await db.write { db in
                for e in entries where e.kind == .update {
                    try Self.supersedeRefused(db, by: e)
                    try Self.recordPushed(db, e, serverAt: serverAt)
                }
                let seqs = entries.map(\.seq)
                let ids = entries.map(\.entityId)
                try db.execute(
                    sql: "DELETE FROM outbox WHERE seq IN (\(seqs.map { _ in "?" }.joined(separator: ",")))",
                    arguments: StatementArguments(seqs))
                try db.execute(
                    sql: """
                        UPDATE \(Self.table(kind)) SET sync_status = 'synced'
                        WHERE id IN (\(ids.map { _ in "?" }.joined(separator: ",")))
                        AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.entity = ? AND o.entity_id = \(Self.table(kind)).id)
                        """, arguments: StatementArguments(ids + [kind.rawValue]))
            }
            return
        }
        try await db.write { db in
            // Cached statements: compiling SQL per entry cost more than running it.
            let deleteEntry = try db.cachedStatement(sql: "DELETE FROM outbox WHERE seq = ?")
            for e in entries {
                if let serverId = replacedIds[e.entityId], serverId != e.entityId {
                    let clocks = try OutboxClock.clocks(db, seq: e.seq)
                    try deleteEntry.execute(arguments: [e.seq])
                    try Self.mergeIntoServerCopy(db, e, clocks: clocks, serverId: serverId, now: at)
                    continue
                }
                try deleteEntry.execute(arguments: [e.seq])
                guard e.kind != .delete else {
                    try Self.recordPushed(db, e, serverAt: serverAt)
                    // The entity is gone everywhere: a change of it the server refused (a create sent
                    // before the person deleted it) no longer needs anyone.
                    try db.cachedStatement(
                        sql: "DELETE FROM outbox WHERE entity = ? AND entity_id = ? AND state = 'failed'"
                    ).execute(arguments: [e.entity.rawValue, e.entityId])
                    continue
                }
                if e.kind == .update {
                    try Self.supersedeRefused(db, by: e)
                    try Self.recordPushed(db, e, serverAt: serverAt)
                }
                let stillWaiting =
                    try Bool.fetchOne(
                        db.cachedStatement(sql: "SELECT 1 FROM outbox WHERE entity = ? AND entity_id = ? LIMIT 1"),
                        arguments: [e.entity.rawValue, e.entityId]) ?? false
                if !stillWaiting {
                    try db.cachedStatement(
                        sql: "UPDATE \(Self.table(e.entity)) SET sync_status = 'synced' WHERE id = ?"
                    )
                    .execute(arguments: [e.entityId])
                }
            }
        }
    }

    /// The `pushed_versions` field that records a delivered delete (no field of an entity has it).
    static let deletedField = "-deleted"

    /// Records that the server took each field of the update `e` at `serverAt` (its clock), or
    /// the delete `e`: a later download that finds the entity older there sends them again (D61).
    /// The patch's keys are read by SQLite (parsing it here cost more than the rest of the booking).
    /// Only answers that name a time record anything (every successful write's does, a single
    /// `DELETE`'s too; a `410` for an entity already gone names none).
    static func recordPushed(_ db: Database, _ e: OutboxEntry, serverAt: String?) throws {
        guard let serverAt else { return }
        if e.kind == .delete {
            try db.cachedStatement(
                sql: "INSERT OR REPLACE INTO pushed_versions (entity, entity_id, field, at) VALUES (?, ?, ?, ?)"
            ).execute(arguments: [e.entity.rawValue, e.entityId, deletedField, serverAt])
            return
        }
        guard let payload = e.payload else { return }
        try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO pushed_versions (entity, entity_id, field, at)
                SELECT ?1, ?2, key, ?3 FROM json_each(?4)
                """
        ).execute(arguments: [e.entity.rawValue, e.entityId, serverAt, payload])
    }

    /// The delivered update `e` set its fields after an earlier change of its entity that the
    /// server refused: that change no longer carries them (a revived refused change must never
    /// send an older value over a newer one of this device — a de-duplication's merge patch
    /// delivered after an edit refused for its time, sim seed 5822), and it goes when nothing
    /// of it is left.
    static func supersedeRefused(_ db: Database, by e: OutboxEntry) throws {
        guard let payload = e.payload else { return }
        let refused = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT seq, payload FROM outbox WHERE entity = ? AND entity_id = ? AND kind = 'update'
                    AND state = 'failed' AND sent = 0 AND seq < ?
                    """), arguments: [e.entity.rawValue, e.entityId, e.seq])
        // Almost always none: the delivered payload is parsed only when there are (it was parsed
        // for every delivered edit, a tenth of the client's CPU in a batched edit push).
        guard !refused.isEmpty else { return }
        let delivered = FieldPatch.fields(payload)
        for row in refused {
            let seq: Int64 = row["seq"]
            if let left = FieldPatch.removing(delivered, from: row["payload"] ?? "{}") {
                try db.execute(sql: "UPDATE outbox SET payload = ? WHERE seq = ?", arguments: [left, seq])
            } else {
                try db.execute(sql: "DELETE FROM outbox WHERE seq = ?", arguments: [seq])
            }
        }
    }

    /// The entry failed: it is surfaced as failed and no longer blocks the queue. A `refused`
    /// entry (the server answered no) was not applied, so it no longer counts as sent and the
    /// next change to its entity revives it; one that ran out of retries may have been applied.
    func fail(_ entry: OutboxEntry, error: String, refused: Bool = true) async throws {
        try await db.write { db in
            // Refused, of an entity the person has deleted here since: nothing to surface or mend.
            if refused, entry.kind != .delete,
                try Bool.fetchOne(
                    db,
                    sql: """
                        SELECT 1 FROM tombstones WHERE entity = ?1 AND entity_id = ?2
                        AND NOT EXISTS (SELECT 1 FROM \(Self.table(entry.entity)) WHERE id = ?2)
                        """, arguments: [entry.entity.rawValue, entry.entityId]) == true
            {
                try db.execute(sql: "DELETE FROM outbox WHERE seq = ?", arguments: [entry.seq])
                // An event deleted here with its type, whose move into that type the server refused
                // (the type was already gone there): the server kept it in its old type, and no
                // change of it may ever come through the feed again — read it back.
                let cascade = try String.fetchOne(
                    db, sql: "SELECT cascade_of FROM tombstones WHERE entity = ? AND entity_id = ?",
                    arguments: [entry.entity.rawValue, entry.entityId])
                if entry.entity == .event, cascade != nil {
                    try db.execute(
                        sql: "DELETE FROM tombstones WHERE entity = 'event' AND entity_id = ?",
                        arguments: [entry.entityId])
                    try db.execute(
                        sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES (?, 'event')",
                        arguments: ["refetch:" + entry.entityId])
                    // What else the person set with the move (a note) is theirs to keep on the
                    // event that stays: sent again without the move, laid over the copy read back.
                    if entry.kind == .update, let payload = entry.payload,
                        let rest = FieldPatch.removing(["event_type_id"], from: payload)
                    {
                        try Outbox.insert(
                            db, .event, entry.entityId, .update, payload: rest, base: entry.baseVersion ?? 0, now: now()
                        )
                    }
                }
                return
            }
            try db.execute(
                sql: """
                    UPDATE outbox SET state = 'failed', last_error = ?, attempts = attempts + 1,
                    sent = CASE WHEN ? THEN 0 ELSE sent END WHERE seq = ?
                    """,
                arguments: [error, refused, entry.seq])
            try db.execute(
                sql: "UPDATE \(Self.table(entry.entity)) SET sync_status = 'failed' WHERE id = ?",
                arguments: [entry.entityId])
        }
    }

    /// A transient failure: count an attempt and back off; after the last attempt, fail it.
    /// Not `counting` (the same request still runs on the server): again after
    /// ``RetryPolicy/stillRunningDelay``, attempts as they were. Returns whether the entry is now
    /// failed.
    @discardableResult
    func retryLater(_ entry: OutboxEntry, error: String, now: Date, counting: Bool = true) async throws -> Bool {
        let attempts = entry.attempts + (counting ? 1 : 0)
        if counting, attempts >= RetryPolicy.maxAttempts {
            try await fail(
                OutboxEntry(
                    seq: entry.seq, entity: entry.entity, entityId: entry.entityId, kind: entry.kind,
                    payload: entry.payload,
                    idempotencyKey: entry.idempotencyKey, attempts: attempts - 1, baseVersion: entry.baseVersion),
                error: "gave up after \(attempts) attempts: \(error)", refused: false)
            return true
        }
        let next = now.addingTimeInterval(
            counting ? RetryPolicy.delay(afterAttempts: attempts) : RetryPolicy.stillRunningDelay)
        try await db.write { db in
            try db.execute(
                sql: """
                    UPDATE outbox SET state = 'pending', attempts = ?, next_attempt_at = ?, last_error = ?
                    WHERE seq = ?
                    """, arguments: [attempts, next.timeIntervalSince1970, error, entry.seq])
        }
        return false
    }

    /// This install's device id.
    public func deviceId() async throws -> String { try await db.read { db in try Outbox.deviceId(db) } }

    /// Puts in-flight entries back without counting an attempt (429, session change).
    func release(_ entries: [OutboxEntry]) async throws {
        guard !entries.isEmpty else { return }
        try await db.write { db in
            for e in entries {
                try db.execute(sql: "UPDATE outbox SET state = 'pending' WHERE seq = ?", arguments: [e.seq])
            }
        }
    }

    /// Puts entries taken but never sent back in the queue as they were before they were taken:
    /// their bodies may still change (a merge keeps each field's last value in one entry only).
    func releaseUnsent(_ entries: [OutboxEntry]) async throws {
        guard !entries.isEmpty else { return }
        try await db.write { db in
            for e in entries {
                try db.execute(
                    sql: """
                        UPDATE outbox SET state = 'pending', sent = ?1, batch = CASE WHEN ?1 THEN batch END
                        WHERE seq = ?2
                        """,
                    arguments: [e.sentBefore, e.seq])
            }
        }
    }

    // MARK: Cursor and history

    static func cursor(_ db: Database) throws -> Int64? { try Outbox.cursor(db) }

    /// The change-feed cursor, or nil before the first bootstrap.
    public func cursor() async throws -> Int64? { try await db.read { db in try Self.cursor(db) } }

    /// A cursor is kept once the first download ends (D65).
    public func historyDownloaded() async throws -> Bool { try await cursor() != nil }

    /// When the change the cursor names was written, as the server said (`next_cursor_at`); sent
    /// back with the cursor so the server can tell it still has that change (D59).
    public func cursorAt() async throws -> String? {
        try await db.read { db in
            try String.fetchOne(db.cachedStatement(sql: "SELECT value FROM sync_state WHERE key = 'cursor_at'"))
        }
    }

    /// Moves the cursor forward (never back) with the time of its change (nil: unknown, so
    /// unchecked); `force` is for a full resync's new baseline.
    static func setCursor(_ db: Database, _ value: Int64, at: String?, force: Bool = false) throws {
        if !force, let current = try cursor(db), current >= value {
            // An empty page names the cursor's change too: a cursor kept from before D59 learns
            // its time there.
            if current == value, let at {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES ('cursor_at', ?)", arguments: [at])
            }
            return
        }
        try db.execute(
            sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES ('cursor', ?)", arguments: [String(value)])
        if let at {
            try db.execute(
                sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES ('cursor_at', ?)", arguments: [at])
        } else {
            try db.execute(sql: "DELETE FROM sync_state WHERE key = 'cursor_at'")
        }
        // A cursor at or past the mark of this device's last push checks it from now on; a new
        // baseline (a full download, which sends again whatever the server lacks) ends it too.
        try db.execute(
            sql: """
                DELETE FROM sync_state WHERE key IN ('pushed_cursor', 'pushed_cursor_at')
                AND (?1 OR ?2 >= (SELECT CAST(value AS INTEGER) FROM sync_state WHERE key = 'pushed_cursor'))
                """, arguments: [force, value])
        if force { try db.execute(sql: "DELETE FROM sync_state WHERE key = 'download_everything'") }
    }

    /// The server's newest change right after this device's last push, with its time, while the
    /// cursor has not reached it (nil otherwise). The next pass checks, before it pushes, that
    /// the server still has it (``OutboxSyncEngine/checkLastPush()``): a
    /// server restored from a backup taken before the push has lost what was pushed even though
    /// the cursor's own change is still there (outsider's R1: the pull after the push failed).
    public func pushedThrough() async throws -> LatestCursor? {
        try await db.read { db in
            let rows = try Row.fetchAll(
                db, sql: "SELECT key, value FROM sync_state WHERE key IN ('pushed_cursor', 'pushed_cursor_at')")
            let values = Dictionary(uniqueKeysWithValues: rows.map { ($0[0] as String, $0[1] as String) })
            guard let cursor = values["pushed_cursor"].flatMap(Int64.init), let at = values["pushed_cursor_at"]
            else { return nil }
            return LatestCursor(cursor: cursor, at: at)
        }
    }

    /// Records that the server lost what this device pushed (D60): the next pull, whenever it
    /// runs, downloads everything and sends again what the server lacks (D59's recovery); the
    /// record goes with the new baseline that download sets.
    public func lostWhatItPushed() async throws {
        try await db.write { db in
            try db.execute(sql: "DELETE FROM sync_state WHERE key IN ('pushed_cursor', 'pushed_cursor_at')")
            try db.execute(sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES ('download_everything', '1')")
            // A download an earlier recovery left unfinished saw entities this loss may have
            // taken: this one starts over (D69).
            try DownloadProgress.forget(db)
        }
    }

    /// Whether the next pull must download everything (``lostWhatItPushed()``).
    public func mustDownloadEverything() async throws -> Bool {
        try await db.read { db in
            try Bool.fetchOne(db, sql: "SELECT 1 FROM sync_state WHERE key = 'download_everything'") ?? false
        }
    }

    /// Remembers `latest` (the server's newest change, read after a push) as ``pushedThrough()``
    /// when it is past the cursor and names its time; nothing before the first download.
    public func markPushed(through latest: LatestCursor) async throws {
        guard let at = latest.at else { return }
        try await db.write { db in
            guard let cursor = try Self.cursor(db), latest.cursor > cursor else { return }
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO sync_state (key, value)
                    VALUES ('pushed_cursor', ?), ('pushed_cursor_at', ?)
                    """, arguments: [String(latest.cursor), at])
        }
    }

    /// Moves the cursor forward; `force` sets it anyway (a new baseline, or a benchmark's start).
    public func setCursor(_ value: Int64, at: String? = nil, force: Bool = false) async throws {
        try await db.write { db in try Self.setCursor(db, value, at: at, force: force) }
    }

    func appendHistory(_ run: SyncRun) async throws {
        let body = try Self.encode(run)
        try await db.write { db in
            try db.execute(sql: "INSERT INTO sync_history (body) VALUES (?)", arguments: [body])
            try db.execute(
                sql: "DELETE FROM sync_history WHERE id NOT IN (SELECT id FROM sync_history ORDER BY id DESC LIMIT 10)")
            if run.outcome == .ok {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES ('last_success', ?)",
                    arguments: [String(run.startedAt.timeIntervalSince1970 + run.duration)])
            }
        }
    }

    func history() async throws -> [SyncRun] {
        try await db.read { db in
            try String.fetchAll(db, sql: "SELECT body FROM sync_history ORDER BY id DESC").map {
                try Self.decode(SyncRun.self, $0)
            }
        }
    }

    func lastSuccessfulSync() async throws -> Date? {
        try await db.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'last_success'")
                .flatMap(Double.init).map(Date.init(timeIntervalSince1970:))
        }
    }
}
