import Foundation
import GRDB
import PostgresNIO
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyAPITesting
import TrendyModels
import TrendySync
import TrendyTestSupport

@testable import TrendyServer
@testable import TrendySyncLive

/// The outsider's R1 (D60): a device pushes, the pull after the push fails, and the server is
/// then restored from a backup taken before the push. The cursor's own change is still on the
/// server, with its time, so D59's check passes: what was pushed stayed "synced" here and was
/// lost everywhere else. The device now remembers the server's newest change after each push
/// and checks that too.
@Suite(.timeLimit(.minutes(6)))
struct PushedThroughTests {
    static let t0 = Date(timeIntervalSince1970: 1_780_000_000)

    /// What a restore from a backup taken at `cursor` loses of this user: every later change,
    /// and `events`, which those changes made. Real rows of the harness's real store.
    static func restored(_ h: SyncHarness, toCursor cursor: Int64, losing events: [Event]) async throws {
        let ids = events.map(\.id.description)
        switch h.server.store {
        case let store as SQLiteServerStore:
            try await store.db.write { db in
                try db.execute(
                    sql: "DELETE FROM change_log WHERE user_id = ? AND seq > ?", arguments: [h.userId, cursor])
                for id in ids {
                    try db.execute(sql: "DELETE FROM events WHERE id = ?", arguments: [id])
                    try db.execute(sql: "DELETE FROM echo_state WHERE entity_id = ?", arguments: [id])
                }
            }
        case let store as PostgresServerStore:
            let user = h.userId
            _ = try await store.database.read { s in
                var rows = try await s.run("DELETE FROM change_log WHERE user_id = \(user) AND seq > \(cursor)")
                for id in ids {
                    rows += try await s.run("DELETE FROM events WHERE id = \(id)")
                    rows += try await s.run("DELETE FROM echo_state WHERE entity_id = \(id)")
                }
                return rows
            }
        default:
            Issue.record("a store this test cannot restore: \(type(of: h.server.store))")
        }
    }

    /// How the device goes on after the restore: a plain sync, `--skip-to-latest`, or a sync
    /// with a new change queued first (a phone's normal case: the next push used to replace the
    /// mark with one from the restored server before anything checked it — an outsider's F1).
    /// `newChangeFailing`: the pass that finds the loss stops in its download; the next one must
    /// still download everything (the mark it checked is gone by then).
    enum Next: String, CaseIterable, Sendable { case sync, skip, newChangeFirst, newChangeFailing }

    @Test(arguments: Next.allCases)
    func whatThisDevicePushedBeforeTheServerLostItGoesAgain(next: Next) async throws {
        try await SyncHarness.with { h in
            let (type, kept) = try await NeverLoseEngineTests.synced(h)
            let backup = try await h.direct.latestCursor().cursor
            let pushed = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0, notes: "pushed")
            try await h.store.createEvent(pushed)
            // The push reaches the server; the pull after it does not. The mark came with the
            // push's answer: nothing else is asked of a server that may have died right after.
            let reads = h.api.calls("latestCursor").count
            h.api.fail("changes", with: .transport(.timedOut))
            let cut = await h.engine.sync(full: false)
            #expect(cut.outcome == .waiting && cut.pushed == 1, "\(cut)")
            #expect(try await h.direct.event(id: pushed.id).value.notes == "pushed")
            #expect(h.api.calls("latestCursor").count == reads)
            #expect(try await h.store.pushedThrough()?.cursor == (try await h.direct.latestCursor().cursor))

            // The server is restored from the backup; another device logs five events after it,
            // so the feed passes every cursor this device knows.
            try await Self.restored(h, toCursor: backup, losing: [pushed])
            var since: [Event] = []
            for i in 0..<5 {
                let e = Event(
                    id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0 + 60 + Double(i), notes: "since \(i)")
                _ = try await h.direct.createEvents([e], idempotencyKey: nil)
                since.append(e)
            }

            h.clock.advance(3_600)
            var later: [Event] = []
            if next == .newChangeFirst || next == .newChangeFailing {
                let e = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0 + 600, notes: "later")
                try await h.store.createEvent(e)
                later.append(e)
            }
            if next == .newChangeFailing {
                // The pass that finds the loss downloads everything before it pushes (D61); the
                // download stops part-way.
                h.api.fail("listEvents", with: .transport(.timedOut))
                let stopped = await h.engine.sync(full: false)
                #expect(stopped.outcome == .waiting, "\(stopped)")
                #expect(try await h.store.mustDownloadEverything())
                h.clock.advance(3_600)
            }
            let run = next == .skip ? await h.engine.skipToLatest() : await h.engine.sync(full: false)
            #expect(run.outcome == .ok, "\(run)")
            let everywhere = Set(([kept, pushed] + since + later).map(\.id.description))
            #expect(Set(try await h.serverEventIds()) == everywhere)
            #expect(Set(try await h.localEventIds()) == everywhere)
            #expect(try await h.store.outboxCounts().pending == 0)
            #expect(try await h.store.pushedThrough() == nil)
            let now = try await h.direct.latestCursor()
            #expect(try await h.store.cursor() == now.cursor)
        }
    }

    /// The mark costs no request: it comes with the push's answers (`Trendy-Cursor`), the pull
    /// in the same pass does not check it, and it is gone once a pull reads past it.
    @Test func theMarkComesWithThePushAndGoesWithThePull() async throws {
        try await SyncHarness.with { h in
            let (type, _) = try await NeverLoseEngineTests.synced(h)
            let before = h.api.calls("latestCursor").count
            #expect(await h.engine.sync(full: false).outcome == .ok)
            try await h.store.createEvent(
                Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0, notes: "one more"))
            let changes = h.api.calls("changes").count
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(h.api.calls("latestCursor").count == before)
            #expect(h.api.calls("changes").count == changes + 1, "the pull after the push checks no mark")
            #expect(try await h.store.pushedThrough() == nil)
        }
    }

    /// The check before a push (D61) fails transiently (a timeout, a 503): the pass stops as
    /// `waiting` with nothing sent — a push without the check could make an entity newer on a
    /// server that lost changes — and the next pass checks and sends.
    @Test(arguments: [TrendyAPIError.transport(.timedOut), .server(status: 503, problem: nil)])
    func aCheckThatFailsStopsThePassBeforeItSends(failure: TrendyAPIError) async throws {
        try await SyncHarness.with { h in
            let (type, kept) = try await NeverLoseEngineTests.synced(h)
            let e = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0, notes: "waits")
            try await h.store.createEvent(e)
            h.api.fail("checkCursor", with: failure)
            let stopped = await h.engine.sync(full: false)
            #expect(stopped.outcome == .waiting && stopped.pushed == 0, "\(stopped)")
            #expect(Set(try await h.serverEventIds()) == [kept.id.description])
            #expect(try await h.store.outboxCounts().pending == 1)
            h.clock.advance(3_600)
            let run = await h.engine.sync(full: false)
            #expect(run.outcome == .ok && run.pushed == 1, "\(run)")
            #expect(Set(try await h.serverEventIds()) == Set([kept, e].map(\.id.description)))
        }
    }

    /// A `--skip-to-latest` pass with changes to send checks its cursor once: the check before
    /// the push serves the skip after it.
    @Test func aSkipWithChangesChecksItsCursorOnce() async throws {
        try await SyncHarness.with { h in
            let (type, _) = try await NeverLoseEngineTests.synced(h)
            try await h.store.createEvent(
                Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0, notes: "one more"))
            let checks = h.api.calls("checkCursor").count
            let run = await h.engine.skipToLatest()
            #expect(run.outcome == .ok && run.pushed == 1, "\(run)")
            #expect(h.api.calls("checkCursor").count == checks + 1)
            #expect(try await h.store.cursor() == (try await h.direct.latestCursor().cursor))
        }
    }

    /// Every successful write's answer names the user's newest change and its time, a replay
    /// and a single delete included; a failed write names nothing.
    @Test func writeAnswersNameTheNewestChange() async throws {
        try await SyncHarness.with { h in
            let (type, _) = try await NeverLoseEngineTests.synced(h)
            _ = h.direct.takeWriteMark()
            let e = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0, notes: "marked")
            _ = try await h.direct.createEvents([e], idempotencyKey: "k-1")
            let latest = try await h.direct.latestCursor()
            #expect(h.direct.takeWriteMark() == latest)
            #expect(h.direct.takeWriteMark() == nil, "taken once")
            _ = try await h.direct.createEvents([e], idempotencyKey: "k-1")
            #expect(h.direct.takeWriteMark() == latest, "a replay names the newest too")
            // A single delete too (D61: the device books when the server took it).
            try await h.direct.deleteEvent(id: e.id)
            #expect(h.direct.takeWriteMark() == (try await h.direct.latestCursor()))
            var update = EventUpdate()
            update.notes = .set("none")
            let refused: TrendyAPIError?
            do {
                _ = try await h.direct.updateEvent(id: h.ids.next(), update, idempotencyKey: nil)
                refused = nil
            } catch {
                refused = error as? TrendyAPIError ?? .decoding("\(error)")
            }
            #expect(refused != nil)
            #expect(h.direct.takeWriteMark() == nil)
        }
    }
}
