import Foundation
import Testing
import TrendyAPI
import TrendyModels

@testable import TrendyServer

/// The decisions both stores take from the same facts (StoreRules, StoreFlows), without a database.
@Suite struct StoreDecisionTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func facts(revokedAgo: Double?, sessionRevoked: Bool = false, current: String? = "t2") -> StoreRules.RefreshFacts {
        StoreRules.RefreshFacts(
            sessionId: "s", userId: "u", revokedAt: revokedAgo.map { now.timeIntervalSince1970 - $0 },
            sessionRevoked: sessionRevoked, current: current)
    }

    @Test func refreshTokensRotateAreReusedBrieflyThenEndTheSession() {
        let rotate = StoreRules.refresh(facts(revokedAgo: nil), now: now, reuseInterval: 10)
        #expect(rotate == .rotate)
        #expect(
            StoreRules.outcome(rotate, facts(revokedAgo: nil), newToken: "t3")
                == .rotated(sessionId: "s", userId: "u", newToken: "t3"))
        #expect(StoreRules.refresh(facts(revokedAgo: 10), now: now, reuseInterval: 10) == .reuse("t2"))
        #expect(StoreRules.refresh(facts(revokedAgo: 11), now: now, reuseInterval: 10) == .endSession)
        #expect(
            StoreRules.refresh(facts(revokedAgo: 1, current: nil), now: now, reuseInterval: 10) == .endSession,
            "no current token to answer")
        #expect(
            StoreRules.refresh(facts(revokedAgo: nil, sessionRevoked: true), now: now, reuseInterval: 10) == .notFound)
        #expect(StoreRules.refresh(nil, now: now, reuseInterval: 10) == .notFound)
        #expect(StoreRules.outcome(.endSession, facts(revokedAgo: 11), newToken: "t3") == .alreadyUsed)
    }

    @Test func aCreateOfATakenDeletedOrFreeIdIsDecidedOnce() throws {
        let type = EventType(id: UUIDv7Generator().next(), name: "Coffee")
        let stored = Timestamped(type, createdAt: now, updatedAt: now)
        let free = try StoreFlows.createEventType(
            type, facts: CreateFacts(taken: false, stored: nil, deleted: false), nameTaken: false, now: now)
        #expect(free.answer.1 && free.writes.count == 2)
        let retry = try StoreFlows.createEventType(
            type, facts: CreateFacts(taken: true, stored: stored, deleted: false), nameTaken: true, now: now)
        #expect(!retry.answer.1 && retry.writes.isEmpty, "an idempotent retry writes nothing")
        #expect(throws: StoreError.conflict("the id \(type.id) is already in use")) {
            try StoreFlows.createEventType(
                type, facts: CreateFacts(taken: true, stored: nil, deleted: false), nameTaken: false, now: now)
        }
        // A deleted id is never brought back; the sender learns it was deleted.
        #expect(throws: StoreError.deletedId(type.id.description, version: 7)) {
            try StoreFlows.createEventType(
                type, facts: CreateFacts(taken: false, stored: nil, deleted: true, deletedVersion: 7),
                nameTaken: false, now: now)
        }
        #expect(throws: StoreError.conflict("an event type named \"Coffee\" already exists")) {
            try StoreFlows.createEventType(
                type, facts: CreateFacts(taken: false, stored: nil, deleted: false), nameTaken: true, now: now)
        }
    }

    @Test func anEditOfADeletedEntityIsKeptAsAConflictAndAnswersGone() throws {
        let type = EventType(id: UUIDv7Generator().next(), name: "Coffee")
        let body = try StoreRules.encode(Timestamped(type, createdAt: now, updatedAt: now))
        let facts = EditFacts<EventType>(
            stored: nil, tombstone: Tombstone(body: body, device: "phone", deletedAt: now.timeIntervalSince1970),
            changed: [])
        let update = EventTypeUpdate(name: "Tea")
        let plan = try StoreFlows.edit(
            .eventType, id: type.id.description, what: "event type", update, facts: facts,
            edited: try StoreFlows.edited(facts, update), refusal: nil, base: nil, now: now
        ) { type, _ in .updateEventType(type) }
        #expect(plan.answer == .failure(.gone("event type")))
        guard case .conflicts(let kept) = plan.writes.first, plan.writes.count == 1 else {
            Issue.record("expected one conflict write, got \(plan.writes)")
            return
        }
        #expect(kept.first?.conflict.keptBy == "phone" && kept.first?.conflict.entity?.contains("Tea") == true)
        let nothing = try StoreFlows.edit(
            .eventType, id: type.id.description, what: "event type", update,
            facts: EditFacts<EventType>(stored: nil, tombstone: nil, changed: []), edited: nil, refusal: nil,
            base: nil, now: now
        ) { type, _ in .updateEventType(type) }
        #expect(nothing.answer == .failure(.notFound("event type")) && nothing.writes.isEmpty)
    }

    @Test func aRefusalStopsAnEditOfAStoredEntityButNotTheAnswerForAMissingOne() throws {
        let type = EventType(id: UUIDv7Generator().next(), name: "Coffee")
        let stored = EditFacts<EventType>(
            stored: Timestamped(type, createdAt: now, updatedAt: now), tombstone: nil, changed: [])
        let update = EventTypeUpdate(name: "Tea")
        let refusal = StoreError.conflict("an event type named \"Tea\" already exists")
        #expect(throws: refusal) {
            try StoreFlows.edit(
                .eventType, id: type.id.description, what: "event type", update, facts: stored,
                edited: try StoreFlows.edited(stored, update), refusal: refusal, base: nil, now: now
            ) { type, _ in .updateEventType(type) }
        }
        let missing = try StoreFlows.edit(
            .eventType, id: type.id.description, what: "event type", update,
            facts: EditFacts<EventType>(stored: nil, tombstone: nil, changed: []), edited: nil, refusal: refusal,
            base: nil, now: now
        ) { type, _ in .updateEventType(type) }
        #expect(missing.answer == .failure(.notFound("event type")) && missing.writes.isEmpty)
        let plan = try StoreFlows.edit(
            .eventType, id: type.id.description, what: "event type", update, facts: stored,
            edited: try StoreFlows.edited(stored, update), refusal: nil, base: nil, now: now
        ) { type, _ in .updateEventType(type) }
        #expect((try plan.answer.get()).value.name == "Tea")
        #expect(plan.writes.count == 4, "row, change, field versions, conflicts")
    }
}
