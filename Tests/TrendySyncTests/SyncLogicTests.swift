import Foundation
import Testing
import TrendyAPI
import TrendyModels
import TrendySync

struct SyncLogicTests {
    typealias D = OutboxCoalescing.Decision

    @Test(arguments: [
        (MutationKind.create, MutationKind.update, D.replace(.create)),
        (.create, .delete, D.dropExisting),
        (.update, .update, D.replace(.update)),
        (.update, .delete, D.replace(.delete)),
        (.delete, .create, D.append(.create)),
    ])
    func coalescingKeepsMeaning(existing: MutationKind, incoming: MutationKind, expected: D) {
        #expect(OutboxCoalescing.decide(existing: (existing, .pending, false), incoming: incoming) == expected)
    }

    @Test func nothingWaitingAppends() {
        #expect(OutboxCoalescing.decide(existing: nil, incoming: .update) == .append(.update))
    }

    @Test func inFlightOrAttemptedEntriesAreNeverChanged() {
        #expect(OutboxCoalescing.decide(existing: (.create, .inFlight, true), incoming: .update) == .append(.update))
        #expect(OutboxCoalescing.decide(existing: (.create, .pending, true), incoming: .delete) == .append(.delete))
        // Failed after running out of retries: it may have been applied.
        #expect(OutboxCoalescing.decide(existing: (.update, .failed, true), incoming: .update) == .append(.update))
    }

    @Test(arguments: [
        (MutationKind.create, MutationKind.update, D.revive(.create)),
        (.update, .update, .revive(.update)),
        (.update, .delete, .revive(.delete)),
        (.create, .delete, .dropExisting),
        (.delete, .create, .append(.create)),
    ])
    func aRefusedEntryIsRevivedWithTheLatestChange(existing: MutationKind, incoming: MutationKind, expected: D) {
        #expect(OutboxCoalescing.decide(existing: (existing, .failed, false), incoming: incoming) == expected)
    }

    @Test func breakerOpensOnTheThirdConsecutive429AndHonoursRetryAfter() {
        var b = CircuitBreaker()
        let t0 = Date(timeIntervalSince1970: 1_000)
        #expect(b.record429(retryAfter: 1, now: t0) == nil)
        #expect(b.record429(retryAfter: 1, now: t0) == nil)
        let allowedBeforeOpening = b.allowsRequest(now: t0)
        #expect(allowedBeforeOpening)
        let until = b.record429(retryAfter: 30, now: t0)
        #expect(until == t0.addingTimeInterval(30))
        let allowedTooEarly = b.allowsRequest(now: t0.addingTimeInterval(29))
        #expect(!allowedTooEarly)
        let allowedAfterTheWait = b.allowsRequest(now: t0.addingTimeInterval(30))
        #expect(allowedAfterTheWait)
        #expect(b.state == .halfOpen(level: 0))
        // A 429 on the probe doubles the wait (base 2 s → 4 s, unless Retry-After asks for more).
        #expect(b.record429(retryAfter: nil, now: t0.addingTimeInterval(30)) == t0.addingTimeInterval(34))
        let allowedAfterTheLongerWait = b.allowsRequest(now: t0.addingTimeInterval(34))
        #expect(allowedAfterTheLongerWait)
        b.recordSuccess()
        #expect(b.state == .closed(consecutive429: 0))
    }

    @Test func successBetween429sResetsTheCount() {
        var b = CircuitBreaker()
        let t = Date()
        b.record429(retryAfter: nil, now: t)
        b.record429(retryAfter: nil, now: t)
        b.recordSuccess()
        #expect(b.record429(retryAfter: nil, now: t) == nil)
    }

    @Test func breakerWaitIsCapped() {
        var b = CircuitBreaker(threshold: 1, baseWait: 2, maxWait: 10)
        let t = Date(timeIntervalSince1970: 0)
        for _ in 0..<10 { _ = b.record429(retryAfter: nil, now: t) }
        #expect(b.openUntil == t.addingTimeInterval(10))
        #expect(b.record429(retryAfter: 3_600, now: t) == t.addingTimeInterval(10))
    }

    @Test func retryDelaysGrowAndCap() {
        #expect(RetryPolicy.delay(afterAttempts: 1) == 1)
        #expect(RetryPolicy.delay(afterAttempts: 2) == 2)
        #expect(RetryPolicy.delay(afterAttempts: 4) == 8)
        #expect(RetryPolicy.delay(afterAttempts: 20) == 60)
    }

    @Test func bannerCountsOpenConflictsOnEveryPhase() {
        var status = SyncStatus(lastSuccessfulSync: Date(timeIntervalSince1970: 0))
        status.conflictCount = 1
        #expect(status.bannerText.hasSuffix(" · 1 conflict"))
        status.conflictCount = 3
        status.phase = .offline
        #expect(status.bannerText == "Offline · 3 conflicts")
        status.conflictCount = 0
        #expect(status.bannerText == "Offline")
    }

    @Test func bannerTextsSayWhatIsHappening() {
        #expect(SyncStatus(phase: .pushing(done: 1_200, total: 5_000)).bannerText == "Syncing 1,200 of 5,000")
        #expect(SyncStatus(phase: .offline, pendingCount: 3).bannerText == "Offline — 3 pending")
        #expect(SyncStatus(phase: .idle, pendingCount: 2).bannerText == "2 pending")
        #expect(SyncStatus(phase: .idle, failedCount: 1).bannerText.hasPrefix("1 change(s) could not sync"))
        #expect(SyncStatus(phase: .error("boom")).bannerText.contains("retry"))
        #expect(SyncStatus().bannerText == "Not synced yet")
    }
}

/// Field patches: the difference of two states, merging, references.
struct FieldPatchTests {
    let ids = UUIDv7Generator()

    @Test func aDiffHoldsOnlyTheChangedFieldsAndNullForCleared() throws {
        let e = Event(id: ids.next(), eventTypeId: ids.next(), timestamp: Date(timeIntervalSince1970: 1e9), notes: "a")
        var f = e
        f.notes = nil
        f.isAllDay = true
        let patch = try #require(try FieldPatch.diff(EventUpdate.self, from: e, to: f))
        #expect(FieldPatch.fields(patch) == ["is_all_day", "notes"])
        #expect(FieldPatch.object(text: patch)["notes"] is NSNull)
        #expect(try FieldPatch.diff(EventUpdate.self, from: e, to: e) == nil)
        #expect(try FieldPatch.decode(EventUpdate.self, patch).apply(to: e) == f)
    }

    @Test func mergeKeepsEveryFieldAndTheLaterValue() {
        let merged = FieldPatch.merge(#"{"notes":"a","timestamp":"t"}"#, #"{"notes":null,"is_all_day":true}"#)
        #expect(merged == #"{"is_all_day":true,"notes":null,"timestamp":"t"}"#)
    }

    @Test func referencesNameTypesAndGeofences() {
        let refs = FieldPatch.references(#"{"event_type_id":"x","notes":"y","geofence_id":"g"}"#)
        #expect(refs.map { "\($0.entity):\($0.id)" }.sorted() == ["event_type:x", "geofence:g"])
        let geofence = FieldPatch.references(#"{"event_type_entry_id":"e","event_type_exit_id":null}"#)
        #expect(geofence.map(\.id) == ["e"])
    }
}

/// Outcomes are stored by their raw values and read leniently (`StoredEnum`).
@Suite struct StoredOutcomeTests {
    @Test func aRunReadsBackAndAnUnknownOutcomeReadsAsError() throws {
        let run = SyncRun(
            startedAt: Date(timeIntervalSince1970: 1_800_000_000), duration: 1.5, pushed: 2, pulled: 3,
            outcome: .rateLimited, error: "rate limited")
        let json = try TrendyJSON.encoder().encode(run)
        #expect(String(decoding: json, as: UTF8.self).contains(#""outcome":"rate_limited""#))
        #expect(try TrendyJSON.decoder().decode(SyncRun.self, from: json) == run)
        let later = String(decoding: json, as: UTF8.self).replacingOccurrences(of: "rate_limited", with: "throttled")
        #expect(try TrendyJSON.decoder().decode(SyncRun.self, from: Data(later.utf8)).outcome == .error)
        #expect(SyncOutcome(stored: "signed_out") == .signedOut)
        #expect(SyncOutcome.signedOut.description == "signed_out")
    }
}
