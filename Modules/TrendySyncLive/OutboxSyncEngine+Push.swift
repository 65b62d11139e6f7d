import Foundation
import Logging
import TrendyAPI
import TrendyModels
import TrendySync

extension OutboxSyncEngine {
    /// How one request for a unit of work ended.
    enum SendOutcome {
        /// Every entry reached the server (`replaced`: sent id → the server's id for duplicates).
        case delivered(replaced: [String: String])
        /// Some entries reached the server; others were refused with a message, answered `gone`
        /// (as ``gone``: an event edit or delete, or a late resend of a create), or were creates
        /// queued after the server deleted their ids (`revived`: they go again under new ids).
        case mixed(
            delivered: [OutboxEntry], replaced: [String: String], gone: [OutboxEntry] = [],
            refused: [(OutboxEntry, String)], revived: [OutboxEntry] = [])
        /// The server refused the entry for good (validation, conflict).
        case refused(String)
        /// Try again later (network, 5xx, timeout): counts an attempt.
        case transient(String)
        /// The same request still runs on the server (its answer was lost, or a server killed
        /// while running it holds its key until the claim's lease ends): try again shortly,
        /// never counting an attempt. Counted, a killed server's minute-long claim used up the
        /// five attempts of a device retrying, which then gave its edits up (an outsider's attack).
        case stillRunning(String)
        /// 429: never counts an attempt.
        case rateLimited(retryAfter: Double?)
        /// The session is not accepted.
        case unauthorized(String)
        /// The server already has a type of this name under another id (made on another
        /// device): this device's type becomes that one (D36).
        case adoptedType(EventType)
        /// The server already has a property of this key in the type (another device defined
        /// it first): this device's definition becomes that one.
        case adoptedDefinition(PropertyDefinition)
        /// A definition's edit the server refused as invalid against its current state (another
        /// device changed the options a default must be one of): the edit is kept as conflicts
        /// and the server's definition (nil: gone) is what this device shows.
        case refusedDefinitionEdit(Timestamped<PropertyDefinition>?, reason: String)
        /// `410 Gone`: the entity was deleted and the server kept this change as a conflict
        /// (D37); the delete wins here too, whether or not its change in the feed was read.
        case gone
        /// `410` for a type's create queued after the server deleted the id (an archive imported
        /// again after the type was deleted everywhere). It goes again under a new id, with
        /// everything that names it.
        case revivedType
    }

    /// Drains the outbox; returns how many entries reached the server. "Syncing X of Y" fixes Y
    /// when the drain starts (it grows only if writes arrive meanwhile).
    func push(user: String) async throws -> Int {
        deviceId = try await store.deviceId()
        let total = try await store.outboxCounts().pending
        var done = 0
        broadcaster.update { $0.phase = .pushing(done: 0, total: total) }
        // Pipelined: while one unit of work is on the wire, the next is taken from the outbox,
        // and a delivered unit is marked complete while the next one is sent. Sending stays
        // strictly in outbox order. `unresolved` holds what was taken and not yet completed,
        // failed or rescheduled: whatever stops the pass releases exactly that, once.
        var completion: Task<Void, any Error>?
        var unresolved: [OutboxEntry] = []
        do {
            var taken = try await takeWork()
            unresolved = taken.entries
            while true {
                try ensureSameUser(user)
                try checkBreaker()
                let (work, waitUntil) = taken
                guard !work.isEmpty else {
                    let last = completion
                    completion = nil
                    try await last?.value
                    if let waitUntil {
                        throw Stop(
                            outcome: .waiting,
                            message: "changes wait to be retried at \(SyncStatus.time(waitUntil)) after a server error",
                            phase: .waitingToRetry(until: waitUntil))
                    }
                    return done
                }
                let at = now()
                let following = Task { try await self.takeWork(now: at) }
                let outcome = await send(work)
                // This unit's answer names the server's time of what it took (D60, D61).
                let mark = takeWriteMark()
                taken = try await following.value
                unresolved += taken.entries
                // The previous unit's bookkeeping ran meanwhile; its errors surface here.
                let previous = completion
                completion = nil
                try await previous?.value
                try ensureSameUser(user)
                completion = try await settle(
                    outcome, of: work, serverAt: mark?.at, taken: &taken, unresolved: &unresolved)
                unresolved = taken.entries
                done += work.count
                tally.pushed += work.count
                let progress = done
                broadcaster.update { $0.phase = .pushing(done: progress, total: max(total, progress)) }
            }
        } catch {
            // A completion in flight is allowed to finish (its unit did reach the server).
            try? await completion?.value
            if !unresolved.isEmpty { try? await store.release(unresolved) }
            throw error
        }
    }

    /// The next unit of work from the outbox (``SQLiteLocalStore/nextWork(now:batchSize:batchBytes:)``),
    /// as large as the configuration allows; taken at `at` (default: now).
    nonisolated func takeWork(now at: Date? = nil) async throws -> (entries: [OutboxEntry], waitUntil: Date?) {
        try await store.nextWork(
            now: at ?? now(), batchSize: configuration.batchSize, batchBytes: configuration.batchBytes)
    }

    /// Books the outcome of one sent unit (`work`): completes, fails or reschedules its entries,
    /// and retakes the unit taken meanwhile (`taken`) when the outcome re-pointed what it may hold.
    /// Answers the completion left running, if any; throws the stop a transient failure, a rate
    /// limit or a lost session makes (`unresolved` is then what the pass must release).
    func settle(
        _ outcome: SendOutcome, of work: [OutboxEntry], serverAt: String? = nil,
        taken: inout (entries: [OutboxEntry], waitUntil: Date?), unresolved: inout [OutboxEntry]
    ) async throws -> Task<Void, any Error>? {
        switch outcome {
        case .delivered(let replaced) where replaced.isEmpty:
            let store = store
            breaker.recordSuccess()
            return Task { try await store.complete(work, replacedIds: replaced, serverAt: serverAt) }
        case .delivered(let replaced):
            // De-duplicated into another device's events: the unit taken meanwhile may
            // hold changes to this device's copies, which now go to the surviving ids.
            try await store.releaseUnsent(taken.entries)
            try await store.complete(work, replacedIds: replaced, serverAt: serverAt)
            taken = try await takeWork()
            breaker.recordSuccess()
        case .mixed(let delivered, let replaced, let gone, let refused, let revived):
            // Re-pointed ids: the unit taken meanwhile may hold changes to them; it is taken again.
            let repointed = !replaced.isEmpty || !revived.isEmpty
            if repointed { try await store.releaseUnsent(taken.entries) }
            try await store.complete(delivered, replacedIds: replaced, serverAt: serverAt)
            for entry in revived {
                let newId = ids.next()
                try await store.reviveDeletedCreate(entry, as: newId)
                logger.info(
                    "A create of an event the server had deleted goes again under a new id",
                    metadata: ["id": .string(entry.entityId), "new_id": .string(newId.description)])
            }
            if repointed { taken = try await takeWork() }
            for entry in gone { try await store.completeGone(entry) }
            for (entry, message) in refused {
                try await store.fail(entry, error: message)
                logger.warning(
                    "The server refused a change", metadata: ["entity": .string(entry.entity.rawValue)])
            }
            breaker.recordSuccess()
        case .refused(let message):
            for entry in work { try await store.fail(entry, error: message) }
            logger.warning("The server refused a change", metadata: ["reason": .string(message)])
            breaker.recordSuccess()
        case .transient(let message):
            var retryAt: Date?
            for entry in work where try await !store.retryLater(entry, error: message, now: now()) {
                retryAt = now().addingTimeInterval(RetryPolicy.delay(afterAttempts: entry.attempts + 1))
            }
            unresolved = taken.entries
            throw Stop.transient(message, retryAt: retryAt)
        case .stillRunning(let message):
            let retryAt = now().addingTimeInterval(RetryPolicy.stillRunningDelay)
            for entry in work { try await store.retryLater(entry, error: message, now: now(), counting: false) }
            unresolved = taken.entries
            throw Stop.transient(message, retryAt: retryAt)
        case .rateLimited(let retryAfter):
            throw rateLimitedStop(retryAfter: retryAfter)
        case .unauthorized(let message):
            throw Stop.failed(message)
        case .gone where work[0].entity == .eventType:
            // A type's delete cascades to what names it, which the unit taken meanwhile may hold
            // (in flight, the cascade would leave it: a definition made here on the type was sent,
            // refused and dropped instead of kept as a conflict). Put back, taken again after.
            try await store.releaseUnsent(taken.entries)
            try await store.completeGone(work[0])
            taken = try await takeWork()
            breaker.recordSuccess()
        case .gone:
            try await store.completeGone(work[0])
            breaker.recordSuccess()
        case .revivedType:
            // The unit taken meanwhile may name the type: put back, re-pointed, taken again.
            try await store.releaseUnsent(taken.entries)
            let newId = ids.next()
            try await store.reviveDeletedType(work[0], as: newId)
            taken = try await takeWork()
            breaker.recordSuccess()
            logger.info(
                "A type the server had deleted goes again under a new id",
                metadata: ["id": .string(work[0].entityId), "new_id": .string(newId.description)])
        case .adoptedType(let server):
            // The unit taken meanwhile may hold changes that name the local type: put it
            // back, re-point everything at the server's type, and take it again.
            try await store.releaseUnsent(taken.entries)
            try await store.adoptEventType(work[0], as: server)
            taken = try await takeWork()
            breaker.recordSuccess()
            logger.info("Adopted the server's event type of the same name")
        case .refusedDefinitionEdit(let server, let reason):
            try await store.undoRefusedDefinitionEdit(work[0], server: server?.value, reason: reason)
            breaker.recordSuccess()
            logger.warning("The server refused a property's edit; kept as a conflict")
        case .adoptedDefinition(let server):
            try await store.adoptPropertyDefinition(work[0], as: server)
            breaker.recordSuccess()
            logger.info("Adopted the server's property of the same key")
        }
        return nil
    }

    static func classify(_ error: TrendyAPIError) -> SendOutcome {
        switch error {
        case .transport(let t): return .transient(t.description)
        case .decoding(let d): return .transient(d)
        case .rateLimited(let after, _): return .rateLimited(retryAfter: after)
        case .unauthorized(let p): return .unauthorized(p.detail ?? p.title)
        case .server(let status, let p):
            return status >= 500 ? .transient(p?.description ?? "server error \(status)") : .refused(error.description)
        case .conflict(let p) where p.title == APIProblem.requestInProgressTitle:
            // The same change, sent again while its first request still runs (its answer was lost):
            // retried, never refused (a refused edit stayed failed for ever).
            return .stillRunning("the same request is still running")
        case .validation, .badRequest, .conflict, .payloadTooLarge, .notFound: return .refused(error.description)
        }
    }

    func send(_ work: [OutboxEntry]) async -> SendOutcome {
        do {
            if work[0].entity == .event, work[0].kind == .create {
                return try await sendEventBatch(work)
            }
            if work[0].entity == .event {
                return try await sendEventEdits(work)
            }
            try await sendOne(work[0])
            if work[0].kind == .create, work[0].entity != .event, let after = await readBackUnlisted(work[0]) {
                return after
            }
            return .delivered(replaced: [:])
        } catch let error as TrendyAPIError {
            if case .notFound = error, work[0].kind == .delete { return .delivered(replaced: [:]) }
            // 410: the entity was deleted and the server kept this change as a conflict (D37).
            if case .server(410, _) = error, work[0].kind != .create { return .gone }
            // 410 for a create: the server had deleted the id (``isLateResend(_:deletedVersion:)``).
            // A type brought back goes again under a new id; a place or a property is refused
            // saying so (each names types and regions other modules hold by id).
            if case .server(410, let problem) = error, work[0].kind == .create {
                if Self.isLateResend(work[0], deletedVersion: problem?.deletedVersion) { return .gone }
                if work[0].entity == .eventType { return .revivedType }
                return .refused(
                    "deleted on the server before this device sent it; remove it here and add it again to bring it back"
                )
            }
            if case .conflict = error, work[0].entity == .eventType, work[0].kind == .create,
                let adoption = await sameNamedServerType(work[0])
            {
                return adoption
            }
            if case .conflict = error, work[0].entity == .propertyDefinition, work[0].kind == .create,
                let adoption = await sameKeyServerDefinition(work[0])
            {
                return adoption
            }
            if case .validation = error, work[0].entity == .propertyDefinition, work[0].kind == .update {
                do {
                    let server = try await api.listPropertyDefinitions().first {
                        $0.value.id.description == work[0].entityId
                    }
                    return .refusedDefinitionEdit(server, reason: error.description)
                } catch {
                    return Self.classify(error)
                }
            }
            return Self.classify(error)
        } catch {
            return .refused("unreadable local change: \(error)")
        }
    }

    /// A type create the server refused as a conflict: when the server has a type of the same
    /// name under another id, that one is adopted; nil leaves the refusal as it was. A failure to
    /// look is classified like any other (a transient one is retried).
    func sameNamedServerType(_ entry: OutboxEntry) async -> SendOutcome? {
        guard let local = try? TrendyJSON.decoder().decode(EventType.self, from: Data((entry.payload ?? "").utf8))
        else { return nil }
        do {
            let match = try await api.listEventTypes().first {
                $0.value.id != local.id && $0.value.name.caseInsensitiveCompare(local.name) == .orderedSame
            }
            return match.map { .adoptedType($0.value) }
        } catch {
            return Self.classify(error)
        }
    }

    /// A property create the server refused as a conflict: when the type has a property of the
    /// same key under another id on the server, that one is adopted (like a type, D36).
    func sameKeyServerDefinition(_ entry: OutboxEntry) async -> SendOutcome? {
        guard
            let local = try? TrendyJSON.decoder().decode(
                PropertyDefinition.self, from: Data((entry.payload ?? "").utf8))
        else { return nil }
        do {
            let match = try await api.listPropertyDefinitions().first {
                $0.value.id != local.id && $0.value.eventTypeId == local.eventTypeId
                    && $0.value.key.lowercased() == local.key.lowercased()
            }
            return match.map { .adoptedDefinition($0.value) }
        } catch {
            return Self.classify(error)
        }
    }

    /// Whether a create the server answered "deleted" is a late resend — queued before the
    /// delete, so the delete was made by someone who had it in front of them: it goes here as the
    /// delete takes it (D37) — rather than a create of an id from elsewhere queued after the
    /// delete (an archive imported again), which the person meant to bring back. The server says
    /// its cursor at the delete; the entry was queued at its base. Deciding by "sent before"
    /// lost an imported event whose first send failed (its answer lost, or the process killed
    /// mid-send: taking marks an entry sent): the retry looked late and the event was dropped
    /// here (an outsider's attack). Without a cursor from the server (an id deleted before
    /// servers kept one) "sent before" decides; an entry queued before any sync (no base) is
    /// brought back.
    static func isLateResend(_ entry: OutboxEntry, deletedVersion: Int64?) -> Bool {
        guard let deletedVersion else { return entry.sentBefore }
        guard let base = entry.baseVersion else { return false }
        return base < deletedVersion
    }

    /// Event creates go in one batch request; ids make it safe to resend, so the batch needs no key.
    /// The device goes with it, so its pulls leave the creates out (D57).
    ///
    /// A batch the server refuses whole as too large (one create of megabytes: a note of 10,000
    /// characters with combining marks) goes again one create per request, so that create is
    /// refused alone; before, it refused its 49 neighbours with it on every pass, even after
    /// `--retry-failed` (an outsider's attack).
    func sendEventBatch(_ work: [OutboxEntry]) async throws -> SendOutcome {
        let device = deviceId
        let api = api
        @Sendable func create(_ entries: ArraySlice<OutboxEntry>) async throws -> EventBatchResponse {
            try await ChangeBase.$current.withValue(ChangeBase(version: 0, deviceId: device)) {
                () async throws(TrendyAPIError) -> EventBatchResponse in
                try await api.createEvents(encoded: entries.map { $0.payload ?? "{}" }, idempotencyKey: nil)
            }
        }
        let response: EventBatchResponse
        do {
            response = try await create(work[...])
        } catch TrendyAPIError.payloadTooLarge where work.count > 1 {
            var results: [EventBatchItemResult] = []
            for index in work.indices {
                do {
                    results += try await create(work[index...index]).results.map {
                        EventBatchItemResult(index: index, id: $0.id, status: $0.status, error: $0.error)
                    }
                } catch TrendyAPIError.payloadTooLarge(let problem) {
                    results.append(EventBatchItemResult(index: index, id: nil, status: .failed, error: problem))
                }
            }
            response = EventBatchResponse(results: results)
        }
        var delivered: [OutboxEntry] = []
        var refused: [(OutboxEntry, String)] = []
        var revived: [OutboxEntry] = []
        var gone: [OutboxEntry] = []
        var replaced: [String: String] = [:]
        for result in response.results where result.index < work.count {
            let entry = work[result.index]
            switch result.status {
            case .created: delivered.append(entry)
            case .existing:
                delivered.append(entry)
                if let id = result.id, id != entry.entityId { replaced[entry.entityId] = id }
            case .deleted where Self.isLateResend(entry, deletedVersion: result.deletedVersion): gone.append(entry)
            case .deleted: revived.append(entry)
            case .failed: refused.append((entry, result.error?.description ?? "refused"))
            }
        }
        if refused.isEmpty, revived.isEmpty, delivered.count == work.count { return .delivered(replaced: replaced) }
        return .mixed(delivered: delivered, replaced: replaced, gone: gone, refused: refused, revived: revived)
    }

    /// Event edits and deletes go in one `POST /events/edits`, each item with its own base. The
    /// request's idempotency key is made of the entries' keys (an entry's key changes whenever its
    /// body does) and the device id the items carry, so a resend after a lost answer is replayed,
    /// not applied over what another device changed meanwhile — as a single `PATCH` with its
    /// entry's key is. A copied or repaired database sends under a new device id, hence a new key:
    /// with the old one its resend was a different body under a used key (422), for ever (an
    /// outsider's attack, issue 35).
    func sendEventEdits(_ work: [OutboxEntry]) async throws -> SendOutcome {
        var items: [EventEditItem] = []
        for entry in work {
            guard let id = UUIDv7(entry.entityId) else {
                throw TrendyAPIError.decoding("bad local id \(entry.entityId)")
            }
            let base = entry.baseVersion.map { ChangeBase(version: $0, deviceId: deviceId) }
            items.append(
                entry.kind == .delete
                    ? EventEditItem(delete: id, base: base)
                    : EventEditItem(update: id, fieldsJSON: entry.payload ?? "{}", base: base))
        }
        let response: EventEditResponse
        do {
            response = try await api.editEvents(items, idempotencyKey: Self.batchKey(work, device: deviceId))
        } catch {
            switch error {
            case .conflict(let problem) where problem.code != ProblemCode.idempotencyKeyReused:
                // The batch's only whole-request conflict: the same request still running (its
                // answer was lost and the resend came first). Items' conflicts are their results.
                return .stillRunning("the same batch of edits is still being applied")
            case .validation where work.count > 1, .badRequest where work.count > 1,
                .payloadTooLarge where work.count > 1, .notFound, .server(405, _), .conflict:
                // A server without the route (never "every item missing": that is per item), or
                // one item it cannot read, which refuses the whole request: one by one, that item
                // is refused alone and the others go through. A key used with another body (a
                // batch sent before under a key that did not name the device) goes one by one
                // too, each item under its entry's own key.
                let api = api
                response = try await EventEditResponse.oneByOne(
                    items,
                    update: { index, id, fields throws(TrendyAPIError) in
                        _ = try await api.updateEvent(id: id, fields, idempotencyKey: work[index].idempotencyKey)
                    }, delete: { id throws(TrendyAPIError) in try await api.deleteEvent(id: id) })
            default:
                throw error
            }
        }
        var delivered: [OutboxEntry] = []
        var gone: [OutboxEntry] = []
        var refused: [(OutboxEntry, String)] = []
        for result in response.results where result.index < work.count {
            let entry = work[result.index]
            switch result.status {
            case .updated, .deleted: delivered.append(entry)
            // A delete of what is no longer there is done; an edit of it is refused.
            case .notFound where entry.kind == .delete: delivered.append(entry)
            case .gone: gone.append(entry)
            case .notFound, .failed: refused.append((entry, result.refusal?.description ?? "refused"))
            }
        }
        // Every item applied: booked while the next batch is sent, as a create batch is.
        if gone.isEmpty, refused.isEmpty, delivered.count == work.count { return .delivered(replaced: [:]) }
        return .mixed(delivered: delivered, replaced: [:], gone: gone, refused: refused)
    }

    /// A batch's idempotency key: a 128-bit FNV-1a digest of its entries' keys, in order, and the
    /// device id its items carry.
    static func batchKey(_ work: [OutboxEntry], device: String) -> String {
        var a: UInt64 = 0xcbf2_9ce4_8422_2325
        var b: UInt64 = 0x6c62_272e_07bb_0142
        for byte in (work.map(\.idempotencyKey) + [device]).joined(separator: ",").utf8 {
            a = (a ^ UInt64(byte)) &* 0x100_0000_01b3
            b = (b ^ UInt64(byte)) &* 0x100_0000_01b3 &+ 0x9e37_79b9
        }
        return "edits-" + String(a, radix: 16) + String(b, radix: 16) + "-\(work.count)"
    }

    /// A create the last full download did not list, just answered as stored (D70): a replay of
    /// its first send if the server stored it then and someone deleted it since — nothing else
    /// would ever say so here. Read back: absent, it goes here as the delete takes it (`gone`);
    /// there, it is delivered (nil). A failed read leaves it to be sent again (`transient`).
    func readBackUnlisted(_ entry: OutboxEntry) async -> SendOutcome? {
        guard (try? await store.unlistedCreateMarked(entry)) == true, let id = UUIDv7(entry.entityId) else {
            return nil
        }
        let outcome: SendOutcome?
        do throws(TrendyAPIError) {
            switch entry.entity {
            case .eventType: _ = try await api.eventType(id: id)
            case .geofence: _ = try await api.geofence(id: id)
            case .propertyDefinition: _ = try await api.propertyDefinition(id: id)
            case .event: return nil
            }
            outcome = nil
        } catch .notFound {
            outcome = .gone
        } catch .server(410, _) {
            outcome = .gone
        } catch {
            return .transient("could not read back \(entry.entityId): \(error)")
        }
        // Decided either way: the mark goes (an outsider found them left behind after a `gone`).
        try? await store.forgetUnlistedMark(entry)
        return outcome
    }

    /// Sends one entry. Updates carry only their fields; updates and deletes say what they were
    /// based on (the cursor when the person made the change, this device), so the server keeps
    /// the value a concurrent change replaces as a conflict (D37).
    func sendOne(_ entry: OutboxEntry) async throws {
        let decoder = TrendyJSON.decoder()
        let payload = Data((entry.payload ?? "").utf8)
        let key = entry.idempotencyKey
        guard let id = UUIDv7(entry.entityId) else { throw TrendyAPIError.decoding("bad local id \(entry.entityId)") }
        let base = entry.baseVersion.map { ChangeBase(version: $0, deviceId: deviceId) }
        try await ChangeBase.$current.withValue(base) {
            switch (entry.entity, entry.kind) {
            case (.eventType, .create):
                let t = try decoder.decode(EventType.self, from: payload)
                _ = try await api.createEventType(
                    EventTypeCreate(id: t.id, name: t.name, color: t.color, icon: t.icon), idempotencyKey: key)
            case (.eventType, .update):
                _ = try await api.updateEventType(
                    id: id, try decoder.decode(EventTypeUpdate.self, from: payload), idempotencyKey: key)
            case (.eventType, .delete):
                try await api.deleteEventType(id: id)
            case (.event, .create):
                _ = try await api.createEvent(try decoder.decode(Event.self, from: payload), idempotencyKey: key)
            case (.event, .update):
                _ = try await api.updateEvent(
                    id: id, try decoder.decode(EventUpdate.self, from: payload), idempotencyKey: key)
            case (.event, .delete):
                try await api.deleteEvent(id: id)
            case (.geofence, .create):
                _ = try await api.createGeofence(try decoder.decode(Geofence.self, from: payload), idempotencyKey: key)
            case (.geofence, .update):
                _ = try await api.updateGeofence(
                    id: id, try decoder.decode(GeofenceUpdate.self, from: payload), idempotencyKey: key)
            case (.geofence, .delete):
                try await api.deleteGeofence(id: id)
            case (.propertyDefinition, .create):
                _ = try await api.createPropertyDefinition(
                    try decoder.decode(PropertyDefinition.self, from: payload), idempotencyKey: key)
            case (.propertyDefinition, .update):
                _ = try await api.updatePropertyDefinition(
                    id: id, try decoder.decode(PropertyDefinitionUpdate.self, from: payload), idempotencyKey: key)
            case (.propertyDefinition, .delete):
                try await api.deletePropertyDefinition(id: id)
            }
        }
    }
}
