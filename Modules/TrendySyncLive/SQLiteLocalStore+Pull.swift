import Foundation
import GRDB
import TrendyAPI
import TrendyModels
import TrendySync

/// Applying server state: change-feed pages and the bootstrap download.
extension SQLiteLocalStore {
    /// A server delete: the entity goes, with any local change for it that is not on the wire
    /// (waiting or failed: none is left behind pointing at nothing). A deleted type takes its
    /// events with it, except those with a local change the server has not taken: an event
    /// logged here is never discarded because another device deleted its type — its create is
    /// refused ("no such event type") and surfaced, and editing it to another type sends it (D35).
    static func applyDelete(_ db: Database, _ entity: SyncEntity, _ id: String) throws {
        try keepEditsOfDeleted(db, entity, id)
        try db.execute(
            sql: "DELETE FROM outbox WHERE entity = ? AND entity_id = ? AND state != 'in_flight'",
            arguments: [entity.rawValue, id])
        if entity == .eventType {
            try db.execute(
                sql: """
                    DELETE FROM local_events WHERE event_type_id = ?
                    AND id NOT IN (SELECT entity_id FROM outbox WHERE entity = 'event')
                    """, arguments: [id])
            try clearTypeReferences(db, id)
            try dropDefinitions(db, ofType: id, keep: true)
        }
        try db.execute(sql: "DELETE FROM \(table(entity)) WHERE id = ?", arguments: [id])
    }

    /// Applies one page of the feed and moves the cursor, in one transaction. Returns how many
    /// changes altered local state.
    package func apply(_ page: ChangesPage) async throws -> Int {
        let at = now()
        return try await db.write { db in try SearchIndex.deferring(db) { try Self.apply(page, db, now: at) } }
    }

    /// Applies one page inside the caller's transaction (see ``apply(_:)``).
    /// `now`: when a change this page makes necessary is queued.
    static func apply(_ page: ChangesPage, _ db: Database, now: Date) throws -> Int {
        var applied = 0
        let keyed = page.changes.compactMap { change in change.syncEntity.map { (change, $0) } }
        let writer = try ServerStateWriter(
            db, keys: keyed.lazy.map { ($0.1, $0.0.data?.entityKey?.id ?? $0.0.entityId) }, now: now)
        for change in page.changes where change.entityType == .conflict {
            if change.operation == .delete {
                try Self.resolvedElsewhere(change.entityId, db)
            } else if case .conflict(let conflict) = change.data {
                try Self.keep(conflict, db)
            }
        }
        let watched = try Self.changedHere(db, keyed.filter { $0.1 == .event }.map(\.0.entityId))
        for (change, entity) in keyed {
            if change.operation == .delete {
                try Self.applyDelete(db, entity, change.entityId)
                applied += 1
            } else if let data = change.data {
                // An event changed here that another device changes too (to any value, even
                // back to this device's): its local-change mark moves, so an undo does not
                // overwrite it. This device's own change coming back leaves the fields as they are.
                let before = watched.contains(change.entityId) ? try Self.undoFields(db, change.entityId) : nil
                if try writer.upsert(data, wire: change.dataJSON) { applied += 1 }
                if let before, try Self.undoFields(db, change.entityId) != before {
                    try db.cachedStatement(sql: "UPDATE local_changes SET mark = ? WHERE entity_id = ?")
                        .execute(arguments: [try OutboxClock.tick(db), change.entityId])
                }
            }
        }
        try Self.setCursor(db, page.nextCursor, at: page.nextCursorAt)
        return applied
    }

    /// Which of the events `ids` were changed here (they have a local-change mark).
    static func changedHere(_ db: Database, _ ids: [String]) throws -> Set<String> {
        guard !ids.isEmpty else { return [] }
        var found: Set<String> = []
        for chunk in stride(from: 0, to: ids.count, by: 500).map({ ids[$0..<min($0 + 500, ids.count)] }) {
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            found.formUnion(
                try String.fetchAll(
                    db, sql: "SELECT entity_id FROM local_changes WHERE entity_id IN (\(marks))",
                    arguments: StatementArguments(Array(chunk))))
        }
        return found
    }

    /// The fields an undo puts back, as stored: type, time and note.
    static func undoFields(_ db: Database, _ id: String) throws -> [String?]? {
        try Row.fetchOne(
            db.cachedStatement(
                sql: "SELECT event_type_id, timestamp_ms, json_extract(body, '$.notes') FROM local_events WHERE id = ?"),
            arguments: [id]
        ).map { [$0[0], ($0[1] as Int64?).map(String.init), $0[2]] }
    }

    /// Starts a full download: remembers which server ids arrive, so synced local entities the
    /// server no longer has can be removed at the end; `progress` is kept with each page (D69).
    func beginBootstrap(_ progress: DownloadProgress) async throws {
        try await db.write { db in
            try db.execute(
                sql: "CREATE TABLE IF NOT EXISTS bootstrap_seen (entity TEXT, id TEXT, PRIMARY KEY (entity, id))")
            try db.execute(sql: "DELETE FROM bootstrap_seen")
            try db.execute(sql: "DELETE FROM bootstrap_behind")
            try DownloadProgress.save(progress, db)
            try db.execute(
                sql: "INSERT INTO bootstrap_seen (entity, id) VALUES (?, ?)",
                arguments: [DownloadProgress.seenEntity, progress.nonce])
        }
    }

    /// Stores one downloaded batch. `remember` false skips recording the ids as seen: for
    /// events of a bulk load that began on a store without events, where nothing stored could be
    /// missing from the server. `wire`: each item's JSON as received (one per item), stored as
    /// the row's body instead of encoding the item again.
    /// `recovering`: the server lost changes (D59, D60); what it has in an older version than
    /// this device knows is kept here and sent again (D61).
    /// `progress`: how far the download is once this batch is stored, saved in the same
    /// transaction (D69).
    func bootstrap(
        _ items: [ChangeData], wire: [String]? = nil, remember: Bool = true, recovering: Bool = false,
        progress: DownloadProgress? = nil
    ) async throws {
        let wire = wire?.count == items.count ? wire : nil
        let keyed = items.indices.compactMap { i in items[i].entityKey.map { (i, $0) } }
        try await db.write { db in
            try SearchIndex.deferring(db) {
                let writer = try ServerStateWriter(
                    db, keys: keyed.lazy.map { ($0.1.entity, $0.1.id) }, download: true, recovering: recovering)
                for (i, key) in keyed {
                    _ = try writer.upsert(items[i], wire: wire?[i])
                    guard remember else { continue }
                    try db.cachedStatement(sql: "INSERT OR IGNORE INTO bootstrap_seen (entity, id) VALUES (?, ?)")
                        .execute(arguments: [key.entity.rawValue, key.id])
                }
            }
            if let progress { try DownloadProgress.save(progress, db) }
        }
    }

    /// Ends the download: sends again every synced entity the server did not list (answers how
    /// many), and sets the cursor. `everyEventArrived`: the events were not remembered (see
    /// ``bootstrap(_:remember:)``), and every synced event in the store came with this download.
    ///
    /// A synced entity the server lacks was deleted there (a delete this device missed), or the
    /// server lost it (restored from a backup taken before it arrived). It was dropped, which
    /// lost every event a restored server lacked on every device that held it (an outsider's
    /// attack). It is now queued again as a create already sent and based before everything
    /// (so a `deleted` answer reads as a late resend), ahead of every waiting change
    /// (it existed before them, and they may name it), types first: a server that lost it
    /// creates it again; one that deleted it answers so (`410`, a batch item `deleted`), and it
    /// goes here as the delete would take it (D37), its cascade with it.
    ///
    /// An entity with changes waiting or refused here was not re-sent (an outsider's attack: its
    /// edits went first and were refused as not found, the re-send skipped it as not synced, and
    /// nothing sent it again, a type's events with it): it is now, as it is here, ahead of them.
    /// Event creates go `resendBatch` to a request, as a batch of their own (sent before, each
    /// went alone: 1,392 requests for 3,000 events).
    @discardableResult
    ///
    /// `recovering` (the server lost changes, D61): waiting changes not yet sent are based on the
    /// new baseline. Their bases count changes of the history the server lost, which it numbers
    /// again (R3): a base past a renumbered change claimed this device had seen it, and the echo
    /// rule (D57) left the device's change out of its own pull while an earlier one of its came
    /// back with the older value (the seeded restore test, seed 24). This device has now seen
    /// everything the server has, its waiting changes laid over it.
    func finishBootstrap(
        cursor: LatestCursor, everyEventArrived: Bool = false, resendBatch: Int = 50, recovering: Bool = false
    ) async throws -> Int {
        let at = now()
        return try await db.write { db in
            var missing = 0
            // Each goes to the front of the queue in turn, so the last placed (types) go first:
            // below every entry and every batch number (a batch is named by its first entry's
            // seq), so it names no batch but its own.
            var front =
                try Int64.fetchOne(
                    db,
                    sql: """
                        SELECT min(coalesce((SELECT min(seq) FROM outbox), 0),
                                   coalesce((SELECT min(batch) FROM outbox), 0))
                        """) ?? 0
            try Self.markUnlistedSentCreates(db)
            /// Moves the entry just inserted to the front of the queue.
            func placeFirst(sent: Bool = false) throws {
                front -= 1
                try db.execute(
                    sql: "UPDATE outbox SET seq = ?\(sent ? ", sent = 1" : "") WHERE seq = ?",
                    arguments: [front, db.lastInsertedRowID])
            }
            // What the server has in an older version than this device knows (a download after
            // it lost changes, D61): this device's fields go again, based on the new baseline (it
            // has seen everything the server has), behind every entity sent again below (they
            // may name one) and ahead of every waiting change (made on top of them).
            if recovering {
                try db.execute(
                    sql: "UPDATE outbox SET base_version = ? WHERE sent = 0 AND kind != 'create'",
                    arguments: [cursor.cursor])
            }
            for row in try Row.fetchAll(db, sql: "SELECT entity, id, patch FROM bootstrap_behind ORDER BY entity, id") {
                guard let entity = SyncEntity(rawValue: row["entity"]) else { continue }
                let id: String = row["id"]
                let patch: String? = row["patch"]
                try Outbox.insert(
                    db, entity, id, patch == nil ? .delete : .update, payload: patch, base: cursor.cursor, now: at)
                try placeFirst()
                missing += 1
            }
            try db.execute(sql: "DELETE FROM bootstrap_behind")
            let order: [SyncEntity] = [.event, .geofence, .propertyDefinition, .eventType]
            for entity in order where !(everyEventArrived && entity == .event) {
                let columns = entity == .eventType ? "id, name, color, icon" : "id, body"
                // Any the server had once, i.e. whose create is not waiting or refused here.
                let rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT \(columns) FROM \(Self.table(entity)) AS t
                        WHERE id NOT IN (SELECT id FROM bootstrap_seen WHERE entity = ?1)
                        AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.entity = ?1 AND o.entity_id = t.id
                                        AND o.kind = 'create')
                        """, arguments: [entity.rawValue])
                var placed: [Int64] = []
                for row in rows {
                    let id: String = row["id"]
                    let payload: String
                    if entity == .eventType {
                        guard let uuid = UUIDv7(id) else { continue }
                        payload = try Self.encode(
                            EventType(id: uuid, name: row["name"], color: row["color"], icon: row["icon"]))
                    } else {
                        payload = row["body"]
                    }
                    // Ahead of its waiting changes, which stay: if the server deleted it (a
                    // delete this device missed), the `deleted` answer keeps them as a conflict
                    // as the delete takes it here, as an edit answered `410` would have been.
                    try Outbox.insert(db, entity, id, .create, payload: payload, base: 0, now: at)
                    try placeFirst(sent: true)
                    placed.append(front)
                    try db.execute(
                        sql: "UPDATE \(Self.table(entity)) SET sync_status = 'pending' WHERE id = ?", arguments: [id])
                    // Its own changes refused meanwhile (an edit refused as not found), and those
                    // refused for want of it (a type), go again after it.
                    try db.execute(
                        sql: """
                            UPDATE outbox SET \(Outbox.retried)
                            WHERE entity = ? AND entity_id = ? AND state = 'failed' AND sent = 0
                            """, arguments: [entity.rawValue, id])
                    if entity == .eventType { try Self.requeueRefused(db, namingType: id) }
                    missing += 1
                }
                // Placed one below the other: in queue order the last placed comes first.
                if entity == .event {
                    for chunk in stride(from: placed.count, to: 0, by: -max(resendBatch, 1)) {
                        let batch = placed[max(chunk - resendBatch, 0)..<chunk]
                        guard let head = batch.min() else { continue }
                        try db.execute(
                            sql:
                                "UPDATE outbox SET batch = ? WHERE seq IN (\(batch.map { _ in "?" }.joined(separator: ",")))",
                            arguments: StatementArguments([head] + Array(batch)))
                    }
                }
            }
            try db.execute(sql: "DELETE FROM bootstrap_seen")
            try DownloadProgress.forget(db)
            try Self.setCursor(db, cursor.cursor, at: cursor.at, force: true)
            return missing
        }
    }
}

extension SQLiteLocalStore {
    /// A create sent before (its answer lost; waiting, or failed after its retries) of a type,
    /// place or definition this full download did not list: either the server never got it, or
    /// it stored it and someone deleted it since. Sent again with its key, the server replays its
    /// first answer — "created" in the second case, and nothing else would ever say otherwise here:
    /// the feed after this download's cursor has no delete from before it, and the device held
    /// the entity as synced for ever (simulation seed 27,359). Such a create is marked, and read
    /// back once it is answered as stored (``OutboxSyncEngine/readBackUnlisted(_:)``, D70). Event
    /// creates go in batches without a key, answered afresh each time: not marked.
    static func markUnlistedSentCreates(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM sync_state WHERE key LIKE 'verify:%'")
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO sync_state (key, value)
                SELECT 'verify:' || entity_id, entity FROM outbox AS o
                WHERE kind = 'create' AND sent = 1 AND state IN ('pending', 'failed') AND entity != 'event'
                AND entity_id NOT IN (SELECT id FROM bootstrap_seen WHERE entity = o.entity)
                """)
    }

    /// Whether `e` is such a create (``markUnlistedSentCreates(_:)``).
    func unlistedCreateMarked(_ e: OutboxEntry) async throws -> Bool {
        try await db.read { db in
            try Bool.fetchOne(
                db, sql: "SELECT 1 FROM sync_state WHERE key = ? AND value = ?",
                arguments: ["verify:" + e.entityId, e.entity.rawValue]) ?? false
        }
    }

    /// The create `e` was read back: the server has it.
    func forgetUnlistedMark(_ e: OutboxEntry) async throws {
        try await db.write { db in
            try db.execute(sql: "DELETE FROM sync_state WHERE key = ?", arguments: ["verify:" + e.entityId])
        }
    }
}

extension Change {
    /// The local kind of entity this change is about (nil for onboarding, which Sync does not store).
    var syncEntity: SyncEntity? { entityType.syncEntity }
}

extension ChangeData {
    /// The local entity kind and id this data is about (nil for onboarding, which Sync does not store).
    var entityKey: (entity: SyncEntity, id: String)? {
        switch self {
        case .event(let e): (.event, e.value.id.description)
        case .eventType(let t): (.eventType, t.value.id.description)
        case .geofence(let g): (.geofence, g.value.id.description)
        case .propertyDefinition(let d): (.propertyDefinition, d.value.id.description)
        case .onboarding, .conflict: nil
        }
    }

    /// When the server first stored the entity and last changed it (nil for onboarding and
    /// conflicts).
    var times: (createdAt: Date, updatedAt: Date)? {
        switch self {
        case .event(let e): (e.createdAt, e.updatedAt)
        case .eventType(let t): (t.createdAt, t.updatedAt)
        case .geofence(let g): (g.createdAt, g.updatedAt)
        case .propertyDefinition(let d): (d.createdAt, d.updatedAt)
        case .onboarding, .conflict: nil
        }
    }
}
