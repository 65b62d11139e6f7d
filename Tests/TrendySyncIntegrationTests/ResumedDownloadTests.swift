import Foundation
import GRDB
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyAPITesting
import TrendyModels
import TrendySync
import TrendySyncLive
import TrendySyncTesting
import TrendyTestSupport

/// A full download a lost connection or a kill cut short goes on from the page after the last
/// one stored, to the cursor it began at (D69): on a phone on a flaky link, each try used to
/// start from the first page again (a kill at 99,000 of 140,000 events downloaded all 140,000
/// again), and might never finish.
@Suite struct ResumedDownloadTests {
    /// The `after` token of each event-listing request so far (nil: the first page).
    static func listed(_ h: SyncHarness) -> [String?] { h.api.calls("listEvents").map(\.ids.first) }

    /// Everything the server has, as "id notes".
    static func serverEvents(_ h: SyncHarness) async throws -> Set<String> {
        var out: Set<String> = []
        var after: String?
        while true {
            let page = try await h.direct.listEvents(limit: 500, after: after)
            out.formUnion(page.items.map { "\($0.value.id) \($0.value.notes ?? "")" })
            guard page.hasMore, let next = page.next else { return out }
            after = next
        }
    }

    /// A fresh device whose first download of `n` events another device wrote is cut at the
    /// `cut`th listing request (pages of 50; the next page is requested while one is stored);
    /// the listing works again afterwards, a minute later.
    static func cutDownload(_ h: SyncHarness, events n: Int, cut: Int = 3) async throws -> (
        remote: [Event], store: SQLiteLocalStore, database: DatabaseQueue, engine: OutboxSyncEngine
    ) {
        let remote = try await BulkLoadTests().remoteEvents(h, n)
        let (store, database) = try MemoryLocalStore.makeWithDatabase()
        h.api.observe("listEvents") { number in number == cut ? .transport(.timedOut) : nil }
        let engine = h.engine(on: store, pageSize: 50)
        #expect(await engine.sync(full: false).outcome == .waiting)
        h.api.observe("listEvents") { _ in nil }
        h.clock.advance(60)
        return (remote, store, database, engine)
    }

    /// Writes a download's record as the store keeps it.
    static func keep(_ progress: DownloadProgress, _ database: some DatabaseWriter) async throws {
        let text = String(decoding: try TrendyJSON.encoder().encode(progress), as: UTF8.self)
        try await database.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES ('download_progress', ?)", arguments: [text]
            )
            try db.execute(
                sql: "INSERT OR IGNORE INTO bootstrap_seen (entity, id) VALUES ('download', ?)",
                arguments: [progress.nonce])
        }
    }

    static func localEvents(_ store: SQLiteLocalStore) async throws -> Set<String> {
        Set(try await store.events(limit: 100_000, since: nil).map { "\($0.value.id) \($0.value.notes ?? "")" })
    }

    /// A new device's download (a bulk load: its events are not remembered) cut after three of its
    /// seven pages goes on from the fourth, sends nothing back, and counts what it stored once.
    @Test func aDownloadCutShortGoesOnFromThePageAfterTheLastOneStored() async throws {
        try await SyncHarness.with { h in
            // The fourth page fails while the third is stored (it was requested ahead).
            let (remote, store, _, engine) = try await Self.cutDownload(h, events: 330, cut: 4)
            #expect(try await store.events(limit: 1_000, since: nil).count == 150)
            #expect(try await store.cursor() == nil)
            let kept = try #require(try await store.downloadProgress())
            #expect(kept.remember == false && !kept.listed && kept.after != nil)
            // What `trendy status` says meanwhile.
            #expect(try await store.downloadCutShort() == 150)

            let before = Self.listed(h).count
            let resumed = await engine.sync(full: false)
            #expect(resumed.outcome == .ok)
            let again = Array(Self.listed(h)[before...])
            #expect(again.count == 4, "pages 4 to 7, not 1 to 7: \(again.count)")
            #expect(again.first == kept.after)
            // The type listed again and the 180 events not yet stored; nothing sent back (the end's
            // check knows the first 150 came with this download too).
            #expect(resumed.pulled == 181)
            #expect(resumed.pushed == 0)
            #expect(try await store.outboxCounts() == (0, 0))
            #expect(Set(try await store.events(limit: 1_000, since: nil).map(\.value.id)) == Set(remote.map(\.id)))
            #expect(try await store.downloadProgress() == nil)
            #expect(try await store.downloadCutShort() == nil)
            #expect(try await store.cursor() == kept.cursor)
            #expect(try await h.serverEventIds().count == 330)
        }
    }

    /// What changed on the server between the cut and the next try — in the part already stored
    /// and in the part still to come — arrives: the download ends at the cursor it began at, and
    /// the feed after it brings every change since.
    @Test func whatTheServerChangedDuringThePauseArrives() async throws {
        try await SyncHarness.with { h in
            let (remote, store, _, engine) = try await Self.cutDownload(h, events: 260)
            let stored = try await store.events(limit: 1_000, since: nil).map(\.value)
            #expect(stored.count == 100)
            let storedIds = Set(stored.map(\.id))
            let notYet = remote.filter { !storedIds.contains($0.id) }
            // Another device: deletes and edits on both sides of the cut, and new events.
            for e in stored.prefix(5) + notYet.prefix(5) { try await h.direct.deleteEvent(id: e.id) }
            for e in stored.dropFirst(5).prefix(5) + notYet.dropFirst(5).prefix(5) {
                var edit = EventUpdate()
                edit.notes = .set("edited during the pause")
                _ = try await h.direct.updateEvent(id: e.id, edit, idempotencyKey: nil)
            }
            let type = remote[0].eventTypeId
            let added = (0..<30).map {
                Event(
                    id: h.ids.next(), eventTypeId: type, timestamp: Date().addingTimeInterval(Double($0 - 15) * 3_600))
            }
            _ = try await h.direct.createEvents(added, idempotencyKey: nil)

            let before = Self.listed(h).count
            #expect(await engine.sync(full: false).outcome == .ok)
            #expect(Self.listed(h)[before...].first.flatMap { $0 } != nil, "went on from where it stopped")
            #expect(try await Self.localEvents(store) == Self.serverEvents(h))
            #expect(try await store.outboxCounts() == (0, 0))
            #expect(try await h.serverEventIds().count == 260 - 10 + 30)
        }
    }

    /// A device with changes of its own sends them when its first download fails (a flaky link
    /// must not keep them from the server pass after pass); what that push delivers is not in
    /// the part already downloaded, so the download after it starts over — and nothing is lost.
    @Test func aPushBetweenTheTriesStartsTheDownloadOver() async throws {
        try await SyncHarness.with { h in
            let (remote, store, _, engine) = try await Self.cutDownload(h, events: 200)
            #expect(try await store.downloadProgress() != nil)
            let own = Event(id: h.ids.next(), eventTypeId: remote[0].eventTypeId, timestamp: Date(), notes: "mine")
            try await store.createEvent(own)
            // Once the record is dropped (the pass below drops it before it pushes), `trendy
            // status` still says the history is unfinished (an outsider found it silent).
            try await store.forgetDownloadProgress()
            #expect(try await store.downloadCutShort() == 100)
            // The next pass's first try fails at once; it pushes, then downloads from the start.
            h.api.observe("listEvents") { number in number == 4 ? .transport(.timedOut) : nil }
            h.clock.advance(60)
            let before = Self.listed(h).count
            let run = await engine.sync(full: false)
            #expect(run.outcome == .ok)
            #expect(run.pushed == 1)
            #expect(Self.listed(h)[before...].dropFirst().first == .some(nil), "started over after the push")
            #expect(try await Self.localEvents(store) == Self.serverEvents(h))
            #expect(try await h.serverEventIds().count == 201)
            #expect(try await store.downloadProgress() == nil)
        }
    }

    /// Another account's download is never continued, nor one of another kind (a first download
    /// when the server turned out to have lost changes), nor one a repair or a `--full` of a device
    /// that has its history replaces, nor a recovery's after a new loss is found.
    @Test func onlyTheSameDownloadOfTheSameAccountIsContinued() async throws {
        try await SyncHarness.with { h in
            let (_, store, database, engine) = try await Self.cutDownload(h, events: 120)
            var kept = try #require(try await store.downloadProgress())
            // Someone else's record (as a copied database could hold): started over.
            kept.user = "another-user"
            try await Self.keep(kept, database)
            var before = Self.listed(h).count
            #expect(await engine.sync(full: false).outcome == .ok)
            #expect(Self.listed(h)[before...].first == .some(nil))
            #expect(try await store.events(limit: 1_000, since: nil).count == 120)
            // A `--full` of a device with its history: a record left behind is not continued.
            kept.user = h.userId
            try await Self.keep(kept, database)
            before = Self.listed(h).count
            #expect(await engine.sync(full: true).outcome == .ok)
            #expect(Self.listed(h)[before...].first == .some(nil))
            #expect(try await store.downloadProgress() == nil)
            // A recovery's download left unfinished (one begun when the feed said the server lost
            // changes, with a cursor kept), then a new loss found: what it saw may be gone too.
            kept.recovering = true
            try await Self.keep(kept, database)
            try await store.lostWhatItPushed()
            before = Self.listed(h).count
            #expect(await engine.sync(full: false).outcome == .ok)
            #expect(Self.listed(h)[before...].first == .some(nil))
            #expect(try await store.events(limit: 1_000, since: nil).count == 120)
        }
    }

    /// A record whose mark another program took out of `bootstrap_seen` (an older `trendy`'s
    /// download or repair clears or skips that table, and with it the ids the download saw) is
    /// not continued: the download starts over (a review of D69: continuing failed on every pass
    /// for want of the table, and skipped what a repair had lost).
    @Test(arguments: ["DELETE FROM bootstrap_seen", "DROP TABLE bootstrap_seen"])
    func aRecordWithoutItsSeenIdsStartsOver(olderProgram: String) async throws {
        try await SyncHarness.with { h in
            let (_, store, database, engine) = try await Self.cutDownload(h, events: 120)
            #expect(try await store.continuableDownload() != nil)
            try await database.write { db in try db.execute(sql: olderProgram) }
            #expect(try await store.downloadProgress() != nil)
            #expect(try await store.continuableDownload() == nil)
            let before = Self.listed(h).count
            #expect(await engine.sync(full: false).outcome == .ok)
            #expect(Self.listed(h)[before...].first == .some(nil))
            #expect(try await store.events(limit: 1_000, since: nil).count == 120)
            #expect(try await store.outboxCounts() == (0, 0))
        }
    }

    /// `--full` on a device whose first download was cut short pushes before it downloads: what
    /// the push delivers is not in the part already stored, so the download starts over (a
    /// review of D69: it continued, with the end's check blind to events).
    @Test func aFullSyncThatPushesFirstStartsTheDownloadOver() async throws {
        try await SyncHarness.with { h in
            let (remote, store, _, engine) = try await Self.cutDownload(h, events: 150)
            #expect(try await store.downloadProgress()?.remember == false)
            try await store.createEvent(Event(id: h.ids.next(), eventTypeId: remote[0].eventTypeId, timestamp: Date()))
            let before = Self.listed(h).count
            let run = await engine.sync(full: true)
            #expect(run.outcome == .ok)
            #expect(run.pushed == 1)
            #expect(Self.listed(h)[before...].first == .some(nil))
            #expect(try await Self.localEvents(store) == Self.serverEvents(h))
        }
    }

    /// A recovery the feed asked for (`cursor_ahead`: the server has no change the cursor names)
    /// is recorded as owed, so one cut short goes on where it stopped, downloading before it
    /// pushes (a review of D69: it started over on every pass).
    @Test func aRecoveryCutShortGoesOnWhereItStopped() async throws {
        try await SyncHarness.with { h in
            _ = try await BulkLoadTests().remoteEvents(h, 200)
            let (store, _) = try MemoryLocalStore.makeWithDatabase()
            let engine = h.engine(on: store, pageSize: 50)
            #expect(await engine.sync(full: false).outcome == .ok)
            // A cursor the server does not have: it lost changes (as after a restore).
            let latest = try await h.direct.latestCursor()
            try await store.setCursor(latest.cursor + 1_000, at: latest.at, force: true)
            let listedBefore = h.api.calls("listEvents").count
            h.api.observe("listEvents") { number in number == listedBefore + 3 ? .transport(.timedOut) : nil }
            #expect(await engine.sync(full: false).outcome == .waiting)
            #expect(try await store.mustDownloadEverything())
            let kept = try #require(try await store.continuableDownload())
            #expect(kept.recovering && kept.after != nil)
            #expect(try await store.downloadCutShort() != nil)
            h.api.observe("listEvents") { _ in nil }
            h.clock.advance(60)
            let before = Self.listed(h).count
            #expect(await engine.sync(full: false).outcome == .ok)
            #expect(Self.listed(h)[before...].first == kept.after)
            #expect(try await store.mustDownloadEverything() == false)
            #expect(try await Self.localEvents(store) == Self.serverEvents(h))
            #expect(try await store.outboxCounts() == (0, 0))
        }
    }
}
