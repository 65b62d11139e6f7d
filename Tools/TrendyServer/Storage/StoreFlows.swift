import Foundation
import TrendyAPI
import TrendyModels

// Every write flow of the entity stores, written once (D50). A store reads the facts a flow needs
// into a value, in its own dialect and transaction; the flow decides and answers a plan — the
// writes to make, in order, and the answer to give; the store writes the plan with its one
// executor. Neither store decides anything a flow decides, so the two cannot drift.

/// A write of an entity's own row.
enum RowWrite {
    /// Throws ``StoreError/conflict(_:)`` when another user took the id meanwhile.
    case insertEventType(EventType)
    case updateEventType(EventType)
    case deleteEventType(id: String)
    /// Each event inserted is announced as a create; the executor answers the ids another user
    /// took meanwhile (never inserted, never announced).
    case insertEvents([NewEvent])
    case updateEvent(Event, body: String)
    case deleteEvent(id: String)
    case deleteEventsOfType(id: String)
    /// Throws ``StoreError/conflict(_:)`` when another user took the id meanwhile.
    case insertGeofence(Geofence, body: String)
    /// `isActive` nil leaves the column as it is.
    case updateGeofence(id: String, isActive: Bool?, body: String)
    case deleteGeofence(id: String)
    /// Throws ``StoreError/conflict(_:)`` when another user took the id meanwhile.
    case insertPropertyDefinition(PropertyDefinition, body: String)
    case updatePropertyDefinition(id: String, body: String)
    case deletePropertyDefinition(id: String)
    case deletePropertyDefinitionsOfType(id: String)
}

/// Where a plan's field versions point.
enum VersionAt {
    /// The cursor of the plan's last appended change.
    case lastChange
    case fixed(Int64)
}

/// One write of a plan; each store writes it in its dialect, in the plan's order.
enum StoreWrite {
    case row(RowWrite)
    /// A change appended to the user's feed; its cursor becomes ``VersionAt/lastChange``.
    /// `echo`: the base of the device that made it, whose feed may leave it out (``EchoRule``).
    case change(ChangeEntity, id: String, ChangeOperation, data: String?, echo: ChangeBase? = nil)
    /// The fields a change set, and by which device; `replace` false keeps a version a real
    /// change already recorded.
    case fieldVersions(ChangeEntity, id: String, fields: [String], device: String, at: VersionAt, replace: Bool)
    /// Conflicts kept and each announced in the feed, each loss once (entity, field, lost value
    /// and device, replaced version): a retried request records nothing new.
    case conflicts([KeptConflict])
    /// An entity's field versions dropped and its last content kept: a create of its id later
    /// answers `deleted` (410), an edit of it is kept as a conflict.
    case tombstone(ChangeEntity, id: String, body: String, device: String)
    /// A delete of an id the user does not have: it is marked deleted (a tombstone without a
    /// body), so that a later create of it — another device sending again what a restored server
    /// lost — is answered `deleted`, not stored (the outsider's B3). Never overwrites a tombstone
    /// and touches nothing else of the id (another user's entity may hold it).
    case mark(ChangeEntity, id: String, device: String)
}

/// What a flow decided: the writes, in order, and the answer once they are written.
struct StorePlan<Answer> {
    var writes: [StoreWrite]
    var answer: Answer
}

/// The write flows of the entity stores (D50).
enum StoreFlows {
    static func device(_ base: ChangeBase?) -> String { base?.deviceId ?? "unknown" }

    // MARK: Creates

    /// An event type's create: an idempotent retry answers what is stored; a taken id or name is
    /// a conflict.
    static func createEventType(_ type: EventType, facts: CreateFacts<EventType>, nameTaken: Bool, now: Date) throws
        -> StorePlan<(Timestamped<EventType>, Bool)>
    {
        let id = type.id.description
        if let stored = try existing(facts, id: id) {
            // A retry answers what is stored; another type under a taken id does not.
            if facts.taken, !StoreRules.sameEventType(stored.value, type) {
                throw StoreError.conflict("an event type with id \(id) already exists with other values")
            }
            return StorePlan(writes: [], answer: (stored, false))
        }
        if nameTaken { throw StoreError.conflict("an event type named \"\(type.name)\" already exists") }
        let stored = Timestamped(type, createdAt: now, updatedAt: now)
        return StorePlan(
            writes: [
                .row(.insertEventType(type)), .change(.eventType, id: id, .create, data: try StoreRules.encode(stored)),
            ], answer: (stored, true))
    }

    /// A geofence's create: an idempotent retry answers what is stored; the types it names must
    /// be among the user's (`knownTypes`).
    static func createGeofence(_ geofence: Geofence, facts: CreateFacts<Geofence>, knownTypes: Set<String>, now: Date)
        throws -> StorePlan<(Timestamped<Geofence>, Bool)>
    {
        let id = geofence.id.description
        if let stored = try existing(facts, id: id) { return StorePlan(writes: [], answer: (stored, false)) }
        let issues = StoreRules.typeIssues(geofence, known: knownTypes)
        if !issues.isEmpty { throw StoreError.validation(issues) }
        let stored = Timestamped(geofence, createdAt: now, updatedAt: now)
        let body = try StoreRules.encode(stored)
        return StorePlan(
            writes: [.row(.insertGeofence(geofence, body: body)), .change(.geofence, id: id, .create, data: body)],
            answer: (stored, true))
    }

    /// What a create of a stored or deleted id answers (nil: the id is free). Another user's id is
    /// a conflict; a deleted one is `410` with the user's cursor at the delete and never comes
    /// back: the sender tells a late resend (queued before the delete) from a create queued after
    /// it, such as an archive imported again (D37).
    static func existing<Entity: Codable & Sendable & Hashable>(_ facts: CreateFacts<Entity>, id: String) throws
        -> Timestamped<Entity>?
    {
        if facts.taken {
            guard let stored = facts.stored else { throw StoreError.conflict("the id \(id) is already in use") }
            return stored
        }
        if facts.deleted { throw StoreError.deletedId(id, version: facts.deletedVersion) }
        return nil
    }

    /// A batch of event creates: in the order of the batch, an event earlier in it counting as
    /// stored for the ones after it. A duplicate by the de-duplication key merges into the stored
    /// event as a change of it in the feed (see ``StoreRules/mergedCreateKeyFields``). `device`:
    /// the sender's, whose feed leaves out the creates it holds as stored (D57).
    static func createEvents(_ events: [Event], facts: BatchFacts, userId: String, device: String?, now: Date) throws
        -> StorePlan<[EventCreateOutcome]>
    {
        var facts = facts
        let decoder = TrendyJSON.decoder()
        func stored(_ body: String) throws -> Timestamped<Event> {
            try decoder.decode(Timestamped<Event>.self, from: Data(body.utf8))
        }
        var outcomes: [EventCreateOutcome] = []
        outcomes.reserveCapacity(events.count)
        var writes: [StoreWrite] = []
        var new: [NewEvent] = []
        var newIds: Set<UUIDv7> = []
        var mergedInBatch: Set<UUIDv7> = []
        for event in events {
            let id = event.id.description
            if let (owner, body) = facts.taken[id] {
                outcomes.append(
                    owner == userId ? .existing(try stored(body)) : .failed(.conflict("the id \(id) is already in use"))
                )
                continue
            }
            if let deleted = facts.deleted[id] {
                outcomes.append(.deleted(id, version: deleted.version))
                continue
            }
            guard facts.types.contains(event.eventTypeId.description) else {
                outcomes.append(
                    .failed(.validation([FieldIssue(field: "event_type_id", reason: "no such event type")])))
                continue
            }
            if let geofence = event.geofenceId, !facts.geofences.contains(geofence.description) {
                outcomes.append(.failed(.validation([FieldIssue(field: "geofence_id", reason: "no such geofence")])))
                continue
            }
            let propertyIssues = PropertyDefinition.issues(
                of: event.properties, before: [:], in: facts.definitions[event.eventTypeId.description] ?? [])
            if !propertyIssues.isEmpty {
                outcomes.append(.failed(.validation(propertyIssues)))
                continue
            }
            let key = DedupKey(event)
            if let key, let body = facts.duplicates[key] {
                let survivor = try stored(body)
                if newIds.contains(survivor.value.id) { mergedInBatch.insert(survivor.value.id) }
                writes += try merge(into: survivor, body: body, inBatch: newIds.contains(survivor.value.id))
                outcomes.append(.existing(survivor))
                continue
            }
            let body = event.wireJSON(createdAt: now, updatedAt: now)
            facts.taken[id] = (userId, body)
            if let key { facts.duplicates[key] = body }
            new.append(NewEvent(index: outcomes.count, event: event, body: body, echo: EchoRule.device(named: device)))
            newIds.insert(event.id)
            outcomes.append(.created(Timestamped(event, createdAt: now, updatedAt: now)))
        }
        // A create another item merged into differs from what its sender holds: everyone gets it.
        for i in new.indices where mergedInBatch.contains(new[i].event.id) { new[i].echo = nil }
        if !new.isEmpty { writes.append(.row(.insertEvents(new))) }
        return StorePlan(writes: writes, answer: outcomes)
    }

    /// A create merged into `survivor`: a change of it in the feed, its own cursor after every
    /// base a device could have edited from. A survivor created earlier in the same batch has no
    /// create in the feed yet and no device can have edited it from an older base: version 1.
    static func merge(into survivor: Timestamped<Event>, body: String, inBatch: Bool) throws -> [StoreWrite] {
        let id = survivor.value.id.description
        let at: VersionAt = inBatch ? .fixed(StoreRules.unseenCreateVersion) : .lastChange
        var writes: [StoreWrite] = inBatch ? [] : [.change(.event, id: id, .update, data: body)]
        writes.append(
            .fieldVersions(
                .event, id: id, fields: try StoreRules.mergedCreateFields(survivor.value), device: device(nil), at: at,
                replace: false))
        writes.append(
            .fieldVersions(
                .event, id: id, fields: StoreRules.mergedCreateKeyFields, device: device(nil), at: at, replace: true))
        return writes
    }

    /// The outcomes of a batch once written: a new event whose id another user took meanwhile
    /// (`rejected`) is refused.
    static func settled(_ plan: StorePlan<[EventCreateOutcome]>, rejected: Set<String>) -> [EventCreateOutcome] {
        guard !rejected.isEmpty else { return plan.answer }
        var outcomes = plan.answer
        for case .row(.insertEvents(let new)) in plan.writes {
            for item in new where rejected.contains(item.event.id.description) {
                outcomes[item.index] = .failed(.conflict("the id \(item.event.id.description) is already in use"))
            }
        }
        return outcomes
    }

    // MARK: Edits

    /// The entity before and after `update`: the stored one's, or the deleted one's last content
    /// (an edit of it is kept, so it is checked like any edit); nil when there is neither.
    static func edited<Patch: EntityPatch>(_ facts: EditFacts<Patch.Entity>, _ update: Patch) throws
        -> (before: Patch.Entity, after: Patch.Entity)?
    where Patch.Entity: Codable & Sendable & Hashable & Validating {
        let before: Patch.Entity
        if let stored = facts.stored {
            before = stored.value
        } else if let tombstone = facts.tombstone {
            before = try StoreRules.decode(Timestamped<Patch.Entity>.self, tombstone.body).value
        } else {
            return nil
        }
        return (before, try StoreRules.valid(update.apply(to: before)))
    }

    /// What an event's edit asks the store: a geofence it newly names (of a live or deleted
    /// event), and for a live event the type it moves to and the duplicate of the result.
    static func questions(_ facts: EditFacts<Event>, edited: (before: Event, after: Event)?) -> EventQuestions {
        guard let (before, after) = edited else { return EventQuestions() }
        let live = facts.stored != nil
        return EventQuestions(
            geofence: after.geofenceId == before.geofenceId ? nil : after.geofenceId,
            type: live && after.eventTypeId != before.eventTypeId ? after.eventTypeId.description : nil,
            duplicateOf: live ? after : nil,
            properties: live && after.properties != before.properties
                ? (after.eventTypeId.description, after.properties, before.properties) : nil)
    }

    /// The refusal an event's edit earns from the store's answers, if any.
    static func refusal(_ answers: EventAnswers, id: String) -> StoreError? {
        if !answers.geofenceKnown {
            return .validation([FieldIssue(field: "geofence_id", reason: "no such geofence")])
        }
        if !answers.typeKnown { return .validation([FieldIssue(field: "event_type_id", reason: "no such event type")]) }
        if !answers.propertyIssues.isEmpty { return .validation(answers.propertyIssues) }
        if let duplicate = answers.duplicateId, duplicate != id {
            return .conflict("another event of this type already exists at this time")
        }
        return nil
    }

    /// The name an event type's edit asks about: a live type's new name (another type of the
    /// user must not have it).
    static func nameQuestion(_ facts: EditFacts<EventType>, edited: (before: EventType, after: EventType)?) -> String? {
        facts.stored == nil ? nil : edited?.after.name
    }

    /// The refusal an event type's edit earns: another type of the user has its new name.
    static func refusal(nameTaken: Bool, _ edited: (before: EventType, after: EventType)?) -> StoreError? {
        guard nameTaken, let name = edited?.after.name else { return nil }
        return .conflict("an event type named \"\(name)\" already exists")
    }

    /// The types a geofence's edit asks about: those a live geofence names after it.
    static func typeQuestion(_ facts: EditFacts<Geofence>, edited: (before: Geofence, after: Geofence)?) -> [String] {
        guard facts.stored != nil, let after = edited?.after else { return [] }
        return [after.entryEventTypeId, after.exitEventTypeId].compactMap { $0?.description }
    }

    /// The refusal a geofence's edit earns: a type it names is not among the user's (`knownTypes`,
    /// the store's answer to ``typeQuestion(_:edited:)``).
    static func refusal(
        _ facts: EditFacts<Geofence>, edited: (before: Geofence, after: Geofence)?, knownTypes: Set<String>
    ) -> StoreError? {
        guard facts.stored != nil, let after = edited?.after else { return nil }
        let issues = StoreRules.typeIssues(after, known: knownTypes)
        return issues.isEmpty ? nil : .validation(issues)
    }

    /// An edit of one entity (`edited` from ``edited(_:_:)``, `refusal` from the store's answers
    /// for the edited entity): the new content, its change and field versions, and the conflicts
    /// with changes its device had not seen. An edit of a deleted entity is kept as a conflict
    /// and answers ``StoreError/gone(_:)``; of an entity that never was, `notFound`.
    static func edit<Patch: EntityPatch>(
        _ entity: ChangeEntity, id: String, what: String, _ update: Patch, facts: EditFacts<Patch.Entity>,
        edited: (before: Patch.Entity, after: Patch.Entity)?, refusal: StoreError?, base: ChangeBase?, now: Date,
        row: (Patch.Entity, String) -> RowWrite
    ) throws -> StorePlan<Result<Timestamped<Patch.Entity>, StoreError>>
    where Patch.Entity: Codable & Sendable & Hashable & Validating {
        let stored: Timestamped<Patch.Entity>
        let after: Patch.Entity
        switch (facts.stored, facts.tombstone, edited?.after) {
        case (let live?, _, let edited?):
            if let refusal { throw refusal }
            (stored, after) = (live, edited)
        case (nil, let tombstone?, let edited?):
            if let refusal { throw refusal }
            var last = try StoreRules.decode(Timestamped<Patch.Entity>.self, tombstone.body)
            last.value = edited
            let conflict = StoreRules.editOfDeletedConflict(
                entity: entity, id: id, patch: try FieldPatch.object(update), base: base, deletedBy: tombstone.device,
                deletedAt: tombstone.deletedAt, entityAfterEdit: try StoreRules.encode(last), now: now)
            return StorePlan(writes: [.conflicts([conflict])], answer: .failure(.gone(what)))
        default:
            return StorePlan(writes: [], answer: .failure(.notFound(what)))
        }
        // The patch as JSON values only when another device changed a field since the base.
        let conflicts =
            try base.map { base in
                facts.changed.isEmpty
                    ? []
                    : try StoreRules.fieldConflicts(
                        facts.changed, entity: entity, id: id,
                        current: { try StoreRules.fields(of: stored.value, as: Patch.self) },
                        patch: try FieldPatch.object(update), base: base, now: now)
            } ?? []
        let result = Timestamped(after, createdAt: stored.createdAt, updatedAt: now)
        let body = try StoreRules.encodeStored(result)
        return StorePlan(
            writes: [
                .row(row(after, body)), .change(entity, id: id, .update, data: body, echo: base),
                .fieldVersions(
                    entity, id: id, fields: update.patchedFields, device: device(base), at: .lastChange, replace: true),
                .conflicts(conflicts),
            ], answer: .success(result))
    }

    // MARK: Deletes

    /// A delete of one event or geofence: the conflict with edits its device had not seen, its
    /// last content kept, the row and the change. Answers false when the user has no such entity
    /// (the caller answers `notFound` once the writes are done): an id never deleted is marked.
    static func delete<Patch: EntityPatch>(
        _ entity: ChangeEntity, id: String, what: String, facts: EditFacts<Patch.Entity>, as patch: Patch.Type,
        base: ChangeBase?, now: Date, row: RowWrite
    ) throws -> StorePlan<Bool> where Patch.Entity: Codable & Sendable & Hashable {
        guard let stored = facts.stored else { return missing(entity, id: id, facts: facts, base: base) }
        let writes = try deletion(
            entity, id: id, current: { try StoreRules.fields(of: stored.value, as: Patch.self) },
            body: try StoreRules.encode(stored), changed: facts.changed, base: base, now: now)
        return StorePlan(
            writes: writes + [.row(row), .change(entity, id: id, .delete, data: nil, echo: base)], answer: true)
    }

    /// The delete of an entity the user does not have: nothing, or a mark when it was never
    /// deleted either (see ``StoreWrite/mark(_:id:device:)``); answers false (not found).
    static func missing<Entity>(_ entity: ChangeEntity, id: String, facts: EditFacts<Entity>, base: ChangeBase?)
        -> StorePlan<Bool>
    {
        StorePlan(writes: facts.tombstone == nil ? [.mark(entity, id: id, device: device(base))] : [], answer: false)
    }

    /// An event type's delete: every event of it goes with it (each as a direct delete, its
    /// unseen or later edits kept as conflicts), the geofences that name it lose the reference
    /// (and say so in the feed), then the type goes.
    static func deleteEventType(id: String, facts: TypeDeleteFacts, base: ChangeBase?, now: Date) throws
        -> StorePlan<Bool>
    {
        guard let type = facts.type.stored else { return missing(.eventType, id: id, facts: facts.type, base: base) }
        var writes = try deletion(
            .eventType, id: id, current: { try StoreRules.fields(of: type.value, as: EventTypeUpdate.self) },
            body: try StoreRules.encode(type), changed: facts.type.changed, base: base, now: now)
        for event in facts.events {
            writes += try deletion(
                .event, id: event.id,
                current: {
                    try FieldPatch.object(
                        EventUpdate(everyFieldOf: try StoreRules.decode(Timestamped<Event>.self, event.body).value))
                }, body: event.body, changed: event.changed, base: base, now: now,
                cascade: (event.createdAt, facts.unseen.contains(event.id)))
            writes.append(StoreWrite.change(.event, id: event.id, .delete, data: nil))
        }
        writes.append(.row(.deleteEventsOfType(id: id)))
        for definition in facts.definitions {
            writes.append(
                .tombstone(.propertyDefinition, id: definition.id, body: definition.body, device: device(base)))
            writes.append(.change(.propertyDefinition, id: definition.id, .delete, data: nil))
        }
        if !facts.definitions.isEmpty { writes.append(.row(.deletePropertyDefinitionsOfType(id: id))) }
        for geofence in facts.geofences {
            guard let cleared = try StoreRules.geofence(geofence.body, clearing: id, now: now) else { continue }
            writes.append(.row(.updateGeofence(id: geofence.id, isActive: nil, body: cleared)))
            writes.append(.change(.geofence, id: geofence.id, .update, data: cleared))
        }
        writes += [.row(.deleteEventType(id: id)), .change(.eventType, id: id, .delete, data: nil)]
        return StorePlan(writes: writes, answer: true)
    }

    /// Before an entity is deleted: a conflict for the edits its deleting device had not seen
    /// (`changed`), and the entity's last content kept, so an edit arriving later is kept too and
    /// either can be restored. `current` is the entity as a patch of every field; `body` its JSON.
    /// `cascade`: the entity goes with its deleted type — its create time and whether its create
    /// came after the deleting device's base (see ``StoreRules/withUnseenCreate(_:createdAt:unseen:fields:)``).
    static func deletion(
        _ entity: ChangeEntity, id: String, current: () throws -> [String: Any], body: String,
        changed: [FieldVersion], base: ChangeBase?, now: Date, cascade: (createdAt: Double, unseen: Bool)? = nil
    ) throws -> [StoreWrite] {
        var writes: [StoreWrite] = []
        if let base,
            let conflict = try StoreRules.deletionConflict(
                StoreRules.withUnseenCreate(
                    changed, createdAt: cascade?.createdAt ?? 0, unseen: cascade?.unseen ?? false, fields: current),
                entity: entity, id: id, current: current, body: body, base: base, now: now)
        {
            writes.append(.conflicts([conflict]))
        }
        writes.append(.tombstone(entity, id: id, body: body, device: device(base)))
        return writes
    }
}
