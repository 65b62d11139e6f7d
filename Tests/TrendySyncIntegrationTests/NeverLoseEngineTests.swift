import Foundation
import GRDB
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyAPITesting
import TrendyModels
import TrendySync
import TrendyTestSupport

@testable import TrendySyncLive

/// The engine's answers to the rarer ways a change is refused or overtaken (issue 30), each
/// on a real server: a refused edit revived after a later change of the same field reached the
/// server, an event read back after its type's cascade, a change answered `410 Gone`.
@Suite(.timeLimit(.minutes(5)))
struct NeverLoseEngineTests {
    private static let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    /// An edit refused for its time (another event is there), then an import of a row at the
    /// event's old (type, time): the server merges the row into the event and the merge patch
    /// sets the note after the refused edit had set its own. Reviving the refused edit (the
    /// person moves the time again) must not send its older note over the newer one.
    /// Simulation seed 5822; on the code before, the server ended with "mine, older".
    @Test func aRevivedRefusedEditNeverSendsAFieldALaterDeliveredChangeSet() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            var x = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0, notes: "first")
            try await h.store.createEvent(x)
            #expect(await h.engine.sync(full: false).outcome == .ok)

            // Another device already has an event at the time this one moves x to.
            let taken = Self.t0.addingTimeInterval(3_600)
            _ = try await h.direct.createEvent(
                Event(id: h.ids.next(), eventTypeId: type.id, timestamp: taken), idempotencyKey: nil)
            x.timestamp = taken
            x.notes = "mine, older"
            try await h.store.updateEvent(x)
            // Then a row at x's old time comes in (x is elsewhere here, so no twin locally).
            let row = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0, notes: "from the file")
            try await h.store.createEvent(row)

            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.store.mergedInto(row.id.description) == x.id.description)
            #expect(try await h.direct.event(id: x.id).value.notes == "from the file")
            let refused = try await h.store.failedChanges()
            #expect(refused.map(\.entityId) == [x.id.description])

            // Here too the note is the merged row's; the refused time is still this device's.
            x = try #require(try await h.store.event(id: x.id)).value
            #expect(x.notes == "from the file")
            #expect(x.timestamp == taken)
            // The way out: another time. Only the time is this device's to send.
            x.timestamp = Self.t0.addingTimeInterval(7_200)
            try await h.store.updateEvent(x)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.store.failedChanges().isEmpty)
            let server = try await h.direct.event(id: x.id).value
            #expect(server.notes == "from the file")
            #expect(server.timestamp == x.timestamp)
            #expect(try await h.store.event(id: x.id)?.value.notes == "from the file")
            #expect(try await h.store.event(id: x.id)?.syncStatus == .synced)
        }
    }

    /// Another device's create of (type, time) merges into this device's event; this device's
    /// move of that event to another time, made before it could see the merge, carries it away —
    /// the merged create's time is kept as a conflict, not dropped (simulation seed 6,890).
    @Test func movingAnEventAnotherDeviceMergedIntoKeepsTheMergedTimeAsAConflict() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            var x = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0, notes: "mine")
            try await h.store.createEvent(x)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            x.timestamp = Self.t0.addingTimeInterval(3_600)
            try await h.store.updateEvent(x)
            // Meanwhile another device imports a row at x's time on the server: merged into x.
            let row = Event(
                id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0, notes: "mine", sourceType: .imported)
            #expect(try await h.direct.createEvents([row], idempotencyKey: nil).results.first?.id == x.id.description)

            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.direct.event(id: x.id).value.timestamp == x.timestamp)
            let kept = try await h.direct.conflicts().filter { $0.entityId == x.id.description }
            #expect(kept.map(\.field) == ["timestamp"])
            #expect(kept.first?.lostValue == "\"\(ISO8601.format(Self.t0))\"")
        }
    }

    /// An outsider's attack: an event logged here and deleted before it was ever sent, whose
    /// copy with the same id reached the server from elsewhere (a copy of this database, an
    /// archive imported on another device). The server and every other device have it; no pull
    /// brought it here, because the delete left a tombstone though it sent nothing.
    @Test func anUnsentCreateDeletedHereDoesNotHideTheSameEventFromElsewhere() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            #expect(await h.engine.sync(full: false).outcome == .ok)
            let x = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0, notes: "from the archive")
            try await h.store.createEvent(x)
            try await h.store.deleteEvent(id: x.id)
            // The same event, from the copy.
            #expect(try await h.direct.createEvents([x], idempotencyKey: nil).results.first?.status == .created)

            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.store.event(id: x.id)?.value.notes == "from the archive")
            // Nothing was sent for the deleted create: the server keeps the copy.
            #expect(h.api.calls("deleteEvent").isEmpty && h.api.calls("editEvents").isEmpty)
            #expect(try await h.direct.event(id: x.id).value.id == x.id)
        }
    }

    /// A type and one event of it, synced: what the server still has after a restore.
    static func synced(_ h: SyncHarness) async throws -> (EventType, Event) {
        let type = try await h.type()
        let kept = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: t0, notes: "kept")
        try await h.store.createEvent(kept)
        #expect(await h.engine.sync(full: false).outcome == .ok)
        return (type, kept)
    }

    /// What a server restored from a backup lost: every entity in `tables` is held here as synced
    /// and nothing waits to be sent, whether or not the server has it.
    static func lostByTheServer(_ h: SyncHarness, _ tables: String...) async throws {
        try await h.store.db.write { db in
            try db.execute(sql: "DELETE FROM outbox")
            for table in tables { try db.execute(sql: "UPDATE \(table) SET sync_status = 'synced'") }
        }
    }

    /// A restore's lost history as this device read it: its cursor `ahead` of the server's latest,
    /// naming a change written an hour ago.
    static func cursorFromLostHistory(_ h: SyncHarness, ahead: Int64) async throws {
        let latest = try await h.direct.latestCursor().cursor
        try await h.store.setCursor(
            latest + ahead, at: ISO8601.format(Date().addingTimeInterval(-3_600)), force: true)
    }

    /// An event "keep me" logged, synced, deleted here and synced: what an archive exported
    /// before the delete still holds.
    static func deletedEverywhere(_ h: SyncHarness) async throws -> Event {
        let type = try await h.type()
        let x = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: t0, notes: "keep me")
        try await h.store.createEvent(x)
        #expect(await h.engine.sync(full: false).outcome == .ok)
        try await h.store.deleteEvent(id: x.id)
        #expect(await h.engine.sync(full: false).outcome == .ok)
        return x
    }

    /// An outsider's attack: an archive exported, its event deleted and synced, then the archive
    /// imported again. The server answered "already there" for the deleted id, so the event showed
    /// here as synced while the server and every other device lacked it, and a full sync later
    /// removed it without a word. Now it goes again under a new id and is back everywhere; a
    /// second import of the same archive adds nothing.
    @Test func anEventImportedAgainAfterItWasDeletedEverywhereComesBackEverywhere() async throws {
        try await SyncHarness.with { h in
            let x = try await Self.deletedEverywhere(h)
            #expect(try await h.serverEventIds().isEmpty)

            #expect(try await h.store.insertEvents([x]).inserted == 1)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            let explained = try await h.store.explain(entityId: x.id.description)
            let revived = try #require(explained.revivedAs)
            #expect(explained.local == nil)
            #expect(explained.nextStep.contains("went again as \(revived)"))
            #expect(try await h.serverEventIds() == [revived])
            let server = try await h.direct.listEvents(limit: 10, after: nil).items.map(\.value)
            #expect(server.map(\.notes) == ["keep me"])
            #expect(server.first?.timestamp == Self.t0)
            #expect(try await h.localEventIds() == [revived])
            let revivedId = try #require(UUIDv7(revived))
            let local = try #require(try await h.store.event(id: revivedId))
            #expect(local.syncStatus == .synced)
            #expect(local.value.notes == "keep me")
            // Another device's edit of it reaches this one (the old id's tombstone stays behind).
            var edit = EventUpdate()
            edit.notes = .set("edited elsewhere")
            _ = try await h.direct.updateEvent(id: revivedId, edit, idempotencyKey: nil)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.store.event(id: revivedId)?.value.notes == "edited elsewhere")

            // The same archive again: the event is here (same type and time), nothing is added.
            #expect(try await h.store.insertEvents([x]).inserted == 0)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.serverEventIds() == [revived])
            #expect(try await h.store.failedChanges().isEmpty)
        }
    }

    /// An outsider's attack on the revival: the re-imported event's first send failed — its
    /// answer lost, or the request never arrived (a killed process) — and the retry, "sent
    /// before", read as a late resend: the event was kept here only, then dropped. The server's
    /// cursor at the delete decides instead: the import was queued after it.
    @Test(arguments: [true, false])
    func anEventImportedAgainWhoseFirstSendFailedStillComesBack(answerLost: Bool) async throws {
        try await SyncHarness.with { h in
            let x = try await Self.deletedEverywhere(h)

            #expect(try await h.store.insertEvents([x]).inserted == 1)
            if answerLost {
                h.api.loseAnswer("createEvents", with: .transport(.timedOut))
            } else {
                h.api.fail("createEvents", with: .transport(.timedOut))
            }
            #expect(await h.engine.sync(full: false).outcome != .ok)
            h.clock.advance(65)  // past the backoff
            #expect(await h.engine.sync(full: false).outcome == .ok)
            let revived = try #require(try await h.store.explain(entityId: x.id.description).revivedAs)
            #expect(try await h.serverEventIds() == [revived])
            #expect(try await h.localEventIds() == [revived])
            #expect(try await h.store.outboxCounts().pending == 0)
        }
    }

    /// The same for a type: an archive's type deleted everywhere since came back here under its
    /// old id marked synced, the server lacked it, and each of its events was refused for want of
    /// it. Now the type goes again under a new id, its events with it.
    @Test func aTypeImportedAgainAfterItWasDeletedEverywhereComesBackWithItsEvents() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type("Run")
            let x = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0, notes: "ran")
            try await h.store.createEvent(x)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            try await h.store.deleteEventType(id: type.id)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.direct.listEventTypes().isEmpty)

            // The archive: the type under its id, then its event.
            #expect(try await h.store.findOrCreateEventType(type).created)
            #expect(try await h.store.insertEvents([x]).inserted == 1)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.store.failedChanges().isEmpty)
            let serverTypes = try await h.direct.listEventTypes().map(\.value)
            #expect(serverTypes.map(\.name) == ["Run"])
            let revivedType = try #require(serverTypes.first?.id)
            #expect(revivedType != type.id)
            #expect(try await h.store.eventTypes().map(\.value.id) == [revivedType])
            let server = try await h.direct.listEvents(limit: 10, after: nil).items.map(\.value)
            #expect(server.map(\.notes) == ["ran"])
            #expect(server.map(\.eventTypeId) == [revivedType])
            let local = try await h.store.events(limit: 10, since: nil)
            #expect(local.map(\.value.eventTypeId) == [revivedType])
            #expect(local.map(\.syncStatus) == [.synced])
        }
    }

    /// An outsider's attack: a server restored from a backup lacks what devices had synced after
    /// the backup. A full download dropped every synced entity the server did not list, so the
    /// device lost them too. Now each goes to the server again, types first, within the one
    /// `sync --full`; one the server deleted (a delete this device missed) goes here as the
    /// delete takes it, and stays deleted there.
    @Test func aFullSyncSendsAgainWhatTheServerLostAndDropsWhatItDeleted() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            let kept = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0, notes: "on the server")
            let deleted = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0 + 60, notes: "deleted")
            for event in [kept, deleted] { try await h.store.createEvent(event) }
            #expect(await h.engine.sync(full: false).outcome == .ok)
            // Another device deletes one; this device misses that delete (its cursor is past it).
            try await h.direct.deleteEvent(id: deleted.id)
            try await h.store.setCursor(try await h.direct.latestCursor().cursor, force: true)
            // What the server lost in its restore: a type and two events this device holds as synced.
            let lostType = EventType(id: h.ids.next(), name: "Run")
            try await h.store.createEventType(lostType)
            let lost = [
                Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0 + 120, notes: "lost"),
                Event(id: h.ids.next(), eventTypeId: lostType.id, timestamp: Self.t0 + 180, notes: "lost run"),
            ]
            for event in lost { try await h.store.createEvent(event) }
            try await Self.lostByTheServer(h, "local_events", "local_event_types")
            // A change waiting here that names the lost type goes after the type.
            var moved = kept
            moved.eventTypeId = lostType.id
            try await h.store.updateEvent(moved)

            let run = await h.engine.sync(full: true)
            #expect(run.outcome == .ok, "\(run)")
            #expect(try await h.store.outboxCounts().pending == 0)
            let failed = try await h.store.failedChanges()
            #expect(failed.isEmpty, "\(failed)")
            #expect(Set(try await h.direct.listEventTypes().map(\.value.name)) == ["Coffee", "Run"])
            let server = try await h.direct.listEvents(limit: 10, after: nil).items.map(\.value)
            #expect(Set(server.map(\.id)) == Set([kept.id] + lost.map(\.id)))
            #expect(server.first { $0.id == kept.id }?.eventTypeId == lostType.id)
            let local = try await h.store.events(limit: 10, since: nil)
            #expect(Set(local.map(\.value.id)) == Set([kept.id] + lost.map(\.id)), "the deleted one goes here too")
            #expect(local.allSatisfy { $0.syncStatus == .synced })
        }
    }

    /// The same for the two other kinds a full download lists: a place and a property
    /// definition the server lost go to it again (the definition before the values that use it);
    /// one it deleted while this device missed the delete goes here.
    @Test func aFullSyncSendsAgainLostPlacesAndPropertiesAndDropsDeletedOnes() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            let gone = Geofence(
                id: h.ids.next(), name: "Old gym", center: Coordinate(latitude: 52, longitude: 13), radius: 100,
                entryEventTypeId: type.id)
            let goneKey = PropertyDefinition(id: h.ids.next(), eventTypeId: type.id, key: "cup", propertyType: .text)
            try await h.store.createGeofence(gone)
            try await h.store.createPropertyDefinition(goneKey)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            // Another device deletes both; this device misses the deletes (its cursor is past them).
            try await h.direct.deleteGeofence(id: gone.id)
            try await h.direct.deletePropertyDefinition(id: goneKey.id)
            try await h.store.setCursor(try await h.direct.latestCursor().cursor, force: true)
            // What the server lost: a place, a definition and an event with a value of it.
            let place = Geofence(
                id: h.ids.next(), name: "Park", center: Coordinate(latitude: 52.5, longitude: 13.4), radius: 150,
                entryEventTypeId: type.id)
            let shots = PropertyDefinition(id: h.ids.next(), eventTypeId: type.id, key: "shots", propertyType: .number)
            try await h.store.createGeofence(place)
            try await h.store.createPropertyDefinition(shots)
            let event = Event(
                id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0, properties: ["shots": .number(2)])
            try await h.store.createEvent(event)
            try await Self.lostByTheServer(h, "local_events", "local_geofences", "local_property_definitions")

            let run = await h.engine.sync(full: true)
            #expect(run.outcome == .ok, "\(run)")
            #expect(try await h.store.outboxCounts().pending == 0)
            let failed = try await h.store.failedChanges()
            #expect(failed.isEmpty, "\(failed)")
            #expect(try await h.direct.listGeofences(active: nil).map(\.value.id) == [place.id])
            #expect(try await h.direct.listPropertyDefinitions().map(\.value.id) == [shots.id])
            #expect(try await h.direct.event(id: event.id).value.properties["shots"] == .number(2))
            #expect(try await h.store.geofences().map(\.value.id) == [place.id], "the deleted place goes here too")
            #expect(try await h.store.propertyDefinitions(ofType: nil).map(\.value.id) == [shots.id])
        }
    }

    /// An outsider's attack: after the server was restored from a backup, a device's cursor was
    /// ahead of its feed. The feed answered "nothing new" up to that cursor, so the device skipped
    /// every change made since the restore, and kept what the server lost as synced, for good.
    /// Now the server says so (`409 cursor_ahead`) and an ordinary pass downloads everything and
    /// sends back what the server lacks.
    @Test func aDeviceAheadOfARestoredServerCatchesUpAndSendsWhatItLost() async throws {
        try await SyncHarness.with { h in
            let (type, kept) = try await Self.synced(h)
            // What the restore lost: an event this device synced, and the changes after it.
            let lost = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0 + 60, notes: "lost")
            try await h.store.createEvent(lost)
            try await Self.lostByTheServer(h, "local_events")
            let latest = try await h.direct.latestCursor().cursor
            try await h.store.setCursor(latest + 5, force: true)
            // After the restore another device logs an event: its change is numbered below this
            // device's cursor.
            let since = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0 + 120, notes: "since")
            _ = try await h.direct.createEvents([since], idempotencyKey: nil)

            let run = await h.engine.sync(full: false)
            #expect(run.outcome == .ok, "\(run)")
            // The run reports both of its passes: the download, then the one that sent `lost`.
            #expect(run.pushed == 1 && run.pulled >= 3, "\(run)")
            let everywhere: Set<UUIDv7> = [kept.id, lost.id, since.id]
            #expect(Set(try await h.localEventIds()) == Set(everywhere.map(\.description)))
            #expect(Set(try await h.serverEventIds()) == Set(everywhere.map(\.description)))
            #expect(try await h.store.outboxCounts().pending == 0)
            #expect(try await h.store.cursor() == (try await h.direct.latestCursor().cursor))
        }
    }

    /// The outsider's next attack on the test above (B1): once the restored server's new changes
    /// pass this device's old cursor, "ahead of every change" no longer shows — the cursor names
    /// a change again, just not the one this device read. The device skipped the changes below
    /// its cursor and kept what the server lost as synced. Now each page names the time of its
    /// cursor's change and the device sends it back (D59); a different change is `cursor_ahead`.
    /// `skipToLatest` checks the same before it skips (it used to hide the loss for good).
    @Test(arguments: [false, true])
    func aDeviceWhoseCursorTheRestoredServerOvertookCatchesUp(skipping: Bool) async throws {
        try await SyncHarness.with { h in
            let (type, kept) = try await Self.synced(h)
            #expect(try await h.store.cursorAt() == (try await h.direct.latestCursor().at))
            // What the restore lost: an event this device synced, and two changes after it, read
            // an hour ago.
            let lost = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0 + 60, notes: "lost")
            try await h.store.createEvent(lost)
            try await Self.lostByTheServer(h, "local_events")
            try await Self.cursorFromLostHistory(h, ahead: 2)
            // After the restore another device logs five events, one by one: the feed passes this
            // device's cursor, so a page after it is not empty.
            var since: [Event] = []
            for i in 0..<5 {
                let e = Event(
                    id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0 + 120 + Double(i), notes: "since \(i)")
                _ = try await h.direct.createEvents([e], idempotencyKey: nil)
                since.append(e)
            }
            #expect(try await h.direct.latestCursor().cursor > (try await h.store.cursor() ?? 0))

            let run = skipping ? await h.engine.skipToLatest() : await h.engine.sync(full: false)
            #expect(run.outcome == .ok, "\(run)")
            #expect(run.pushed == 1, "\(run)")
            let everywhere = Set(([kept, lost] + since).map(\.id.description))
            #expect(Set(try await h.localEventIds()) == everywhere)
            #expect(Set(try await h.serverEventIds()) == everywhere)
            #expect(try await h.store.outboxCounts().pending == 0)
            let now = try await h.direct.latestCursor()
            #expect(try await h.store.cursor() == now.cursor)
            #expect(try await h.store.cursorAt() == now.at)
        }
    }

    /// A recovery cut short — the download, or the re-send after it — is finished by the next
    /// sync: nothing the server lost stays unsent, nothing is pulled twice.
    @Test(arguments: ["listEvents", "createEvents"])
    func aRecoveryCutShortIsFinishedByTheNextSync(failing call: String) async throws {
        try await SyncHarness.with { h in
            let (type, _) = try await Self.synced(h)
            let lost = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0 + 60, notes: "lost")
            try await h.store.createEvent(lost)
            try await Self.lostByTheServer(h, "local_events")
            try await Self.cursorFromLostHistory(h, ahead: 1)
            let since = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0 + 120, notes: "since")
            for event in [since, Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0 + 180)] {
                _ = try await h.direct.createEvents([event], idempotencyKey: nil)
            }

            h.api.fail(call, with: .transport(.timedOut))
            let cut = await h.engine.sync(full: false)
            #expect(cut.outcome == .waiting, "\(cut)")
            h.clock.advance(3_600)
            let run = await h.engine.sync(full: false)
            #expect(run.outcome == .ok, "\(run)")
            let server = Set(try await h.serverEventIds())
            #expect(server.contains(lost.id.description) && server.contains(since.id.description))
            #expect(Set(try await h.localEventIds()) == server)
            #expect(try await h.store.outboxCounts().pending == 0)
            let now = try await h.direct.latestCursor()
            #expect(try await h.store.cursor() == now.cursor)
            #expect(try await h.store.cursorAt() == now.at)
        }
    }

    /// The outsider's B3: a person deletes, on another device, what the restored server lost
    /// (`404` there); this device, recovering, sends it again as lost. It used to come back
    /// everywhere but on the deleting device, whose tombstone kept it out for good. The server now
    /// marks a deleted unknown id, answers the re-send `deleted`, and it goes here too.
    @Test func whatAnotherDeviceDeletedWhileTheServerLackedItStaysDeleted() async throws {
        try await SyncHarness.with { h in
            let (type, kept) = try await Self.synced(h)
            // Lost by the restore: synced here, unknown to the server.
            let lostType = EventType(id: h.ids.next(), name: "Run")
            try await h.store.createEventType(lostType)
            let lost = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0 + 60, notes: "lost")
            let run = Event(id: h.ids.next(), eventTypeId: lostType.id, timestamp: Self.t0 + 120, notes: "run")
            for event in [lost, run] { try await h.store.createEvent(event) }
            try await Self.lostByTheServer(h, "local_events", "local_event_types")
            // The person deletes the event and the type on another device, which still showed them.
            for delete in [
                { try await h.direct.deleteEvent(id: lost.id) },
                { try await h.direct.deleteEventType(id: lostType.id) },
            ] {
                await #expect(throws: TrendyAPIError.self, "the server never had it") { try await delete() }
            }

            let full = await h.engine.sync(full: true)
            #expect(full.outcome == .ok, "\(full)")
            #expect(try await h.store.outboxCounts().pending == 0)
            #expect(Set(try await h.serverEventIds()) == [kept.id.description])
            // The deleted event goes here too. The event of the deleted type, which the other
            // device's delete did not name (its cascade found nothing on the server), is not
            // dropped unseen: refused for want of its type, it waits for the person, as an event
            // made here in a type deleted elsewhere does.
            #expect(Set(try await h.localEventIds()) == [kept.id.description, run.id.description])
            let failed = try await h.store.failedChanges()
            #expect(failed.map(\.entityId) == [run.id.description], "\(failed)")
            #expect(failed.first?.error.contains("no such event type") == true)
            #expect(try await h.store.eventTypes().map(\.value.id) == [type.id])
            #expect(try await h.direct.listEventTypes().map(\.value.id) == [type.id])
        }
    }

    /// The third outsider round: what the server lost that has a change waiting here (a type's
    /// new colour, an event's note) went first as edits, was refused as not found, and the
    /// re-send skipped it as not synced — the type never went again, and every event of it failed
    /// for want of it, for good. Such an entity now goes again as one create of it as it is here.
    @Test func whatTheServerLostWithAChangeWaitingGoesAgainAsItIsHere() async throws {
        try await SyncHarness.with { h in
            let base = try await h.type()
            #expect(await h.engine.sync(full: false).outcome == .ok)
            var run = EventType(id: h.ids.next(), name: "Run")
            try await h.store.createEventType(run)
            var noted = Event(id: h.ids.next(), eventTypeId: run.id, timestamp: Self.t0, notes: "before")
            let plain = Event(id: h.ids.next(), eventTypeId: run.id, timestamp: Self.t0 + 60)
            for event in [noted, plain] { try await h.store.createEvent(event) }
            try await Self.lostByTheServer(h, "local_events", "local_event_types")
            try await Self.cursorFromLostHistory(h, ahead: 3)
            run.color = "#FF0000"
            try await h.store.updateEventType(run)
            noted.notes = "after"
            try await h.store.updateEvent(noted)

            let sync = await h.engine.sync(full: false)
            #expect(sync.outcome == .ok, "\(sync)")
            let failed = try await h.store.failedChanges()
            #expect(failed.isEmpty, "\(failed)")
            #expect(try await h.store.outboxCounts().pending == 0)
            let types = try await h.direct.listEventTypes().map(\.value)
            #expect(Set(types.map(\.id)) == [base.id, run.id])
            #expect(types.first { $0.id == run.id }?.color == "#FF0000")
            #expect(Set(try await h.serverEventIds()) == [noted.id.description, plain.id.description])
            #expect(try await h.direct.event(id: noted.id).value.notes == "after")
        }
    }

    /// The other side of the test above: an entity another device deleted while this device
    /// missed the delete, with an edit waiting here. A full download re-sends it ahead of the edit;
    /// answered `deleted`, it goes here, and the edit is kept as a conflict of the delete, as an
    /// edit answered `410` is (a first cut folded the edit into the re-send, and lost it).
    @Test func anEditOfWhatTheServerDeletedIsKeptWhenAFullSyncResendsIt() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            var event = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0, notes: "before")
            try await h.store.createEvent(event)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            try await h.direct.deleteEvent(id: event.id)
            try await h.store.setCursor(try await h.direct.latestCursor().cursor, force: true)
            event.notes = "mine"
            try await h.store.updateEvent(event)

            let sync = await h.engine.sync(full: true)
            #expect(sync.outcome == .ok, "\(sync)")
            #expect(try await h.localEventIds().isEmpty)
            #expect(try await h.serverEventIds().isEmpty)
            #expect(try await h.store.outboxCounts().pending == 0)
            let kept = try await h.store.conflicts(includeClosed: false).map(\.conflict)
            #expect(
                kept.contains {
                    $0.kind == .deleted && $0.entityId == event.id.description && $0.lostValue.contains("mine")
                }, "\(kept)")
        }
    }

    /// The recovery's re-sends go in batches like any create (each went alone: 1,392 requests
    /// for 3,000 events, and the run ended rate limited).
    @Test func aRecoveryResendsEventsInBatches() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            #expect(await h.engine.sync(full: false).outcome == .ok)
            let lost = (0..<120).map { i in
                Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0 + Double(i) * 60)
            }
            _ = try await h.store.insertEvents(lost)
            try await Self.lostByTheServer(h, "local_events")
            let before = h.api.calls("createEvents").count
            let sync = await h.engine.sync(full: true)
            #expect(sync.outcome == .ok, "\(sync)")
            #expect(Set(try await h.serverEventIds()) == Set(lost.map(\.id.description)))
            let requests = h.api.calls("createEvents").count - before
            #expect(requests == 3, "120 events in batches of 50: \(requests) requests")
        }
    }

    /// A cursor kept from before D59 has no time: it is read unchecked, as before, and learns the
    /// time of its change from the next page, even an empty one.
    @Test func aCursorWithoutItsTimeLearnsItFromTheNextPage() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            try await h.store.createEvent(Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0))
            #expect(await h.engine.sync(full: false).outcome == .ok)
            try await h.store.db.write { db in try db.execute(sql: "DELETE FROM sync_state WHERE key = 'cursor_at'") }
            #expect(try await h.store.cursorAt() == nil)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.store.cursorAt() == (try await h.direct.latestCursor().at))
        }
    }

    /// Found writing the test above: an edit the server refused in a batch, sent again by `sync
    /// --retry-failed` once the reason was gone, went under the batch's old key, and the server
    /// (which keeps a batch's 2xx answer, per-item refusals and all) replayed the refusal.
    @Test func aRefusedEditRetriedGoesUnderANewKeyNotAnsweredWithTheOldRefusal() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            var event = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0, notes: "x")
            try await h.store.createEvent(event)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            // A type this device holds as synced that the server does not have (yet).
            let run = EventType(id: h.ids.next(), name: "Run")
            try await h.store.createEventType(run)
            try await Self.lostByTheServer(h, "local_event_types")
            event.eventTypeId = run.id
            try await h.store.updateEvent(event)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.store.failedChanges().map(\.entityId) == [event.id.description])

            _ = try await h.direct.createEventType(EventTypeCreate(id: run.id, name: "Run"), idempotencyKey: nil)
            #expect(try await h.store.retryFailed() == 1)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.store.failedChanges().isEmpty)
            #expect(try await h.direct.event(id: event.id).value.eventTypeId == run.id)
        }
    }

    /// The other side of the revival: a create this device had sent (its answer lost), deleted on
    /// another device meanwhile, then sent again. That is a late resend, not an import: the delete
    /// was made by someone who saw the event, so it stays deleted everywhere.
    @Test func aLateResendOfACreateDeletedMeanwhileStaysDeleted() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            #expect(await h.engine.sync(full: false).outcome == .ok)
            let x = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0, notes: "sent once")
            try await h.store.createEvent(x)
            h.api.loseAnswer("createEvents", with: .transport(.timedOut))
            #expect(await h.engine.sync(full: false).outcome != .ok)
            #expect(try await h.serverEventIds() == [x.id.description], "applied, answer lost")
            try await h.direct.deleteEvent(id: x.id)
            h.clock.advance(65)  // past the backoff

            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.serverEventIds().isEmpty)
            #expect(try await h.localEventIds().isEmpty)
            #expect(try await h.store.explain(entityId: x.id.description).revivedAs == nil)
            #expect(try await h.store.failedChanges().isEmpty)
        }
    }

    /// Another device moved an event to 09:00. This device, not yet knowing, edits that event's
    /// note and moves its own unsent event to 09:00: the server merges the unsent event into the
    /// moved one. The note written last wins, whichever copy it was written on: with
    /// `copyWritesLast`, the copy's note is written after the event's edit (though its create was
    /// queued before it: simulation seed 80,084, where the older edit was sent after the copy's
    /// note and overwrote it, with no conflict); without, the copy's note was written first and
    /// only its time moved later.
    @Test(arguments: [true, false])
    func theNoteWrittenLastWinsWhenACopyIsMergedIntoAnEditedEvent(copyWritesLast: Bool) async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            var event = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0, notes: "first")
            try await h.store.createEvent(event)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            let nine = try await Self.moveElsewhere(event, h)

            var copy = Event(
                id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0.addingTimeInterval(60),
                notes: copyWritesLast ? "copy" : "older")
            try await h.store.createEvent(copy)
            event.notes = copyWritesLast ? "older" : "newest"
            try await h.store.updateEvent(event)
            copy.timestamp = nine
            if copyWritesLast { copy.notes = "newest" }
            try await h.store.updateEvent(copy)

            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.store.mergedInto(copy.id.description) == event.id.description)
            #expect(try await h.direct.event(id: event.id).value.notes == "newest")
            #expect(try await h.store.event(id: event.id)?.value.notes == "newest")
            #expect(try await h.store.outboxCounts() == (pending: 0, failed: 0))
        }
    }

    /// Another device moves `event` an hour later on the server, unseen here; returns its time.
    private static func moveElsewhere(_ event: Event, _ h: SyncHarness) async throws -> Date {
        var move = EventUpdate()
        move.timestamp = .set(t0.addingTimeInterval(3_600))
        _ = try await h.direct.updateEvent(id: event.id, move, idempotencyKey: nil)
        return t0.addingTimeInterval(3_600)
    }

    /// A refused edit whose every field a later delivered change set is gone: nothing is left to
    /// surface or to send.
    @Test func aRefusedEditWhollyOvertakenIsDropped() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type()
            var x = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0, notes: "first")
            try await h.store.createEvent(x)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            x.notes = "refused"
            try await h.store.updateEvent(x)
            let row = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0.addingTimeInterval(60))
            try await h.store.createEvent(row)
            h.refuseNext("editEvents")
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.store.outboxCounts() == (pending: 0, failed: 1))

            // A later change of the same field, delivered while the refused one waits: what the
            // store does with a merge patch, done here through the store's own hook.
            let later = OutboxEntry(
                seq: Int64.max, entity: .event, entityId: x.id.description, kind: .update,
                payload: #"{"notes":"later"}"#, idempotencyKey: "k", attempts: 0)
            try await h.store.db.write { db in try SQLiteLocalStore.supersedeRefused(db, by: later) }
            #expect(try await h.store.outboxCounts() == (pending: 0, failed: 0))
            #expect(try await h.store.failedChanges().isEmpty)
        }
    }

    /// An event of Nap, synced; then moved here into Gym (with `note` when given) while another
    /// device deletes Gym first, and Gym deleted here too. Returns the event and Nap.
    func moveIntoATypeDeletedEverywhere(_ h: SyncHarness, note: String? = nil) async throws -> (Event, EventType) {
        let nap = try await h.type("Nap")
        let gym = try await h.type("Gym")
        var x = Event(id: h.ids.next(), eventTypeId: nap.id, timestamp: Self.t0, notes: "kept")
        try await h.store.createEvent(x)
        #expect(await h.engine.sync(full: false).outcome == .ok)
        x.eventTypeId = gym.id
        if let note { x.notes = note }
        try await h.store.updateEvent(x)
        try await h.direct.deleteEventType(id: gym.id)
        try await h.store.deleteEventType(id: gym.id)
        #expect(try await h.store.event(id: x.id) == nil)
        return (x, nap)
    }

    /// The device deletes a type after moving an event into it, while another device already
    /// deleted that type: the server refuses the move and keeps the event in its old type, so the
    /// feed never sends it again. It is read back, and shows here in the type it has everywhere.
    @Test func anEventWhoseMoveIntoADeletedTypeWasRefusedIsReadBack() async throws {
        try await SyncHarness.with { h in
            let (x, nap) = try await moveIntoATypeDeletedEverywhere(h)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(h.api.calls("event").map(\.ids) == [[x.id.description]])
            let back = try await h.store.event(id: x.id)
            #expect(back?.value.eventTypeId == nap.id)
            #expect(back?.value.notes == "kept")
            #expect(try await h.store.failedChanges().isEmpty)
            #expect(try await h.store.outboxCounts() == (pending: 0, failed: 0))
            // Read once: the next pass asks nothing.
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(h.api.calls("event").count == 1)
        }
    }

    /// The same with a note written together with the move: the event stays where the server
    /// kept it, and the note the person wrote reaches it (outside tester: the note vanished with the
    /// refused move, in no conflict on any device).
    @Test func aNoteWrittenWithARefusedMoveReachesTheEventReadBack() async throws {
        try await SyncHarness.with { h in
            let (x, nap) = try await moveIntoATypeDeletedEverywhere(h, note: "written with the move")
            #expect(await h.engine.sync(full: false).outcome == .ok)
            let server = try await h.direct.event(id: x.id).value
            #expect(server.eventTypeId == nap.id)
            #expect(server.notes == "written with the move")
            let here = try await h.store.event(id: x.id)
            #expect(here?.value.eventTypeId == nap.id)
            #expect(here?.value.notes == "written with the move")
            #expect(here?.syncStatus == .synced)
            #expect(try await h.store.outboxCounts() == (pending: 0, failed: 0))
        }
    }

    /// The same, when the read-back finds nothing (404: the event went meanwhile): nothing is
    /// stored, nothing stays to read, nothing is surfaced. A read-back that fails for a while
    /// (5xx) keeps the event to read and the pass waits to retry.
    @Test func aReadBackThatFindsNothingOrFailsForAWhile() async throws {
        try await SyncHarness.with { h in
            let (x, _) = try await moveIntoATypeDeletedEverywhere(h)

            h.api.fail("event", with: .server(status: 503, problem: nil))
            let waiting = await h.engine.sync(full: false)
            #expect(waiting.outcome == .waiting)
            #expect(try await h.store.eventsToRefetch() == [x.id.description])

            h.api.fail(
                "event", with: .notFound(APIProblem(status: 404, code: "not_found", title: "Not found by the test")))
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.store.eventsToRefetch().isEmpty)
            #expect(try await h.store.event(id: x.id) == nil)
            #expect(try await h.store.failedChanges().isEmpty)
        }
    }

    /// A type delete keeps as conflicts only the events its device had not seen: none of its own
    /// events it pulled back, however close their times are to its base (an outside tester saw a
    /// conflict "from unknown" for the last batch of an import, decided by time); an event another
    /// device created after the base is kept as one.
    @Test func aTypeDeleteRecordsOnlyTheEventsItsDeviceHadNotSeen() async throws {
        try await SyncHarness.with(batchSize: 50) { h in  // an import's last batch of several
            let mine = try await h.type("Bulk")
            let events = (0..<120).map { i in
                Event(
                    id: h.ids.next(), eventTypeId: mine.id, timestamp: Self.t0.addingTimeInterval(Double(i)),
                    notes: "n\(i)")
            }
            _ = try await h.store.insertEvents(events)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            try await h.store.deleteEventType(id: mine.id)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.direct.conflicts().isEmpty)
            #expect(try await h.store.openConflictCount() == 0)

            // Another device logs into a type after this device last pulled; this one deletes the
            // type before it has seen that event: the event is kept as a conflict.
            let other = try await h.type("Other")
            #expect(await h.engine.sync(full: false).outcome == .ok)
            let unseen = Event(id: h.ids.next(), eventTypeId: other.id, timestamp: Self.t0, notes: "theirs")
            _ = try await h.direct.createEvent(unseen, idempotencyKey: nil)
            try await h.store.deleteEventType(id: other.id)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            let kept = try await h.direct.conflicts()
            #expect(kept.map(\.entityId) == [unseen.id.description])
            #expect(kept.first?.kind == .deleted)

            // Its type is gone too: restored as it was, it could never be sent; it comes back in a
            // type that exists (outside tester: the advice "add a type and restore again" could
            // never work — a new type has a new id).
            let conflict = try #require(try await h.store.conflicts(includeClosed: false).first).conflict
            await #expect(throws: LocalStoreError.self) {
                _ = try await h.store.restoreConflict(id: conflict.id, newId: h.ids.next())
            }
            let home = try await h.type("Home")
            let restored = try await h.store.restoreConflict(id: conflict.id, newId: h.ids.next(), eventType: home.id)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            let back = try await h.direct.event(id: try #require(UUIDv7(restored))).value
            #expect(back.eventTypeId == home.id)
            #expect(back.notes == "theirs")
            #expect(try await h.store.failedChanges().isEmpty)
        }
    }

    /// This device logs what another device already logged (same type and time); its create is
    /// merged on the server, but the answer is lost. The person then deletes their copy. Without
    /// the lost answer the create and the delete fold into nothing and the other device's event
    /// stays; with it, the same must hold — the copy's delete is not the survivor's (outside
    /// tester: one dropped answer deleted the other device's event everywhere).
    @Test func deletingACopyWhoseMergeAnswerWasLostKeepsTheOtherDevicesEvent() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type("Dup")
            #expect(await h.engine.sync(full: false).outcome == .ok)
            let theirs = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0, notes: "A keeps")
            _ = try await h.direct.createEvent(theirs, idempotencyKey: nil)
            let mine = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0, notes: "B deletes")
            try await h.store.createEvent(mine)
            h.api.loseAnswer("createEvents", with: .transport(.timedOut))
            #expect(await h.engine.sync(full: false).outcome == .waiting)
            try await h.store.deleteEvent(id: mine.id)

            h.clock.advance(600)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            let server = try await h.direct.event(id: theirs.id).value
            #expect(server.notes == "A keeps")
            #expect(h.api.calls("editEvents").isEmpty)
            #expect(try await h.store.event(id: theirs.id)?.value.notes == "A keeps")
            #expect(try await h.store.event(id: mine.id) == nil)
            #expect(try await h.store.outboxCounts() == (pending: 0, failed: 0))
            #expect(try await h.direct.conflicts().isEmpty)
        }
    }

    /// A type renamed here that another device deleted: the server answers the rename `410 Gone`
    /// and its delete wins here too — the type goes, and no failed change is left behind.
    @Test func aChangeAnsweredGoneDeletesTheEntityHere() async throws {
        try await SyncHarness.with { h in
            var type = try await h.type("Tea")
            #expect(await h.engine.sync(full: false).outcome == .ok)
            try await h.direct.deleteEventType(id: type.id)
            type.name = "Green tea"
            try await h.store.updateEventType(type)

            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.store.eventType(id: type.id) == nil)
            #expect(try await h.store.failedChanges().isEmpty)
            #expect(try await h.store.outboxCounts() == (pending: 0, failed: 0))
            #expect(try await h.direct.listEventTypes().isEmpty)
        }
    }

    /// A device that has never pulled sends a place when its first download fails; the server
    /// stores it, the answer is lost; another device deletes it. The next download does not list
    /// it, and the resent create replays the server's first answer ("created"): the device held
    /// the place as synced for ever (simulation seed 27,359). Such a create goes once more with a
    /// new key after delivery, is answered `deleted`, and goes here as the delete takes it (D70).
    /// (The type, whose resend was answered before the download, was already taken care of by the
    /// download's check, D61.)
    @Test func aCreateTheServerTookThenAnotherDeviceDeletedBeforeTheFirstDownloadGoesHereToo() async throws {
        try await SyncHarness.with { h in
            let type = EventType(id: h.ids.next(), name: "Swim")
            let place = Geofence(
                id: h.ids.next(), name: "Pool", center: Coordinate(latitude: 52, longitude: 13), radius: 100)
            let kept = Geofence(
                id: h.ids.next(), name: "Park", center: Coordinate(latitude: 52.1, longitude: 13), radius: 100)
            try await h.store.createEventType(type)
            try await h.store.createGeofence(place)
            try await h.store.createGeofence(kept)
            // Each first download fails; what waits is pushed, the type's and the pool's first
            // answers are lost (their resends get the server's answers replayed).
            h.api.observe("listEventTypes") { _ in .transport(.connectionLost("dropped")) }
            h.api.loseAnswer("createEventType", with: .transport(.connectionLost("dropped")))
            h.api.loseAnswer("createGeofence", with: .transport(.connectionLost("dropped")))
            for _ in 0..<2 {
                #expect(await h.engine.sync(full: false).outcome == .waiting)
                h.clock.advance(600)
            }
            h.api.observe("listEventTypes") { _ in nil }
            // The type's resend was answered; the pool's create waits, sent once, and the park's.
            #expect(try await h.store.outboxCounts() == (2, 0))
            #expect(try await h.store.cursor() == nil)
            #expect(try await h.direct.listGeofences(active: nil).count == 1)
            // Another device deletes the pool and the type.
            try await h.direct.deleteGeofence(id: place.id)
            try await h.direct.deleteEventType(id: type.id)
            h.clock.advance(600)
            let sent = h.api.calls("createGeofence").count
            let run = await h.engine.sync(full: false)
            #expect(run.outcome == .ok, "\(run)")
            // The pool's replay and the park's create (sent once before, while the pool was on the
            // wire); each read back, the pool found gone.
            #expect(h.api.calls("createGeofence").count - sent == 2)
            #expect(h.api.calls("geofence").count == 2)
            #expect(try await h.store.outboxCounts() == (0, 0))
            #expect(try await h.store.eventTypes().isEmpty, "the type deleted elsewhere goes here too")
            #expect(try await h.store.geofences().map(\.value.id) == [kept.id])
            #expect(try await h.direct.listGeofences(active: nil).map(\.value.id) == [kept.id])
            // Read back either way, neither is marked any more.
            for id in [place.id, kept.id] {
                let entry = OutboxEntry(
                    seq: 0, entity: .geofence, entityId: id.description, kind: .create, idempotencyKey: "k", attempts: 0
                )
                #expect(try await h.store.unlistedCreateMarked(entry) == false)
            }
        }
    }

    /// The same for a create that gave up after its retries (failed, sent once): the download
    /// marks it too; `--retry-failed` sends it, the replay is read back and the place goes (a
    /// review of D70: only waiting creates were marked).
    @Test func aGivenUpCreateTheServerTookAndAnotherDeviceDeletedGoesHereOnRetry() async throws {
        try await SyncHarness.with { h in
            let place = Geofence(
                id: h.ids.next(), name: "Pool", center: Coordinate(latitude: 52, longitude: 13), radius: 100)
            try await h.store.createGeofence(place)
            h.api.observe("listEventTypes") { _ in .transport(.connectionLost("dropped")) }
            h.api.loseAnswer("createGeofence", with: .transport(.connectionLost("dropped")))
            h.api.fail("createGeofence", with: .transport(.connectionLost("dropped")), times: 30)
            for _ in 0..<15 where try await h.store.outboxCounts().failed == 0 {
                _ = await h.engine.sync(full: false)
                h.clock.advance(3_600)
            }
            h.api.clearScript()
            h.api.observe("listEventTypes") { _ in nil }
            #expect(try await h.store.outboxCounts() == (0, 1), "given up")
            #expect(try await h.direct.listGeofences(active: nil).count == 1)
            try await h.direct.deleteGeofence(id: place.id)
            _ = await h.engine.sync(full: false)
            #expect(try await h.store.cursor() != nil, "the first download")
            _ = try await h.store.retryFailed()
            #expect(await h.engine.sync(full: false).outcome == .ok)
            #expect(try await h.store.outboxCounts() == (0, 0))
            #expect(try await h.store.geofences().isEmpty)
            #expect(try await h.direct.listGeofences(active: nil).isEmpty)
        }
    }

    /// An event whose create was taken once (so not cancelled as unsent) but never reached the
    /// server, moved here, then deleted here with its type; the server refuses the create, and the
    /// move, taken while the create was on the wire, is answered "No such event". The event was
    /// never there: the move was read back, its tombstone lifted, the rest of it sent again and
    /// answered the same, and it stayed failed for ever (simulation seed 28,596 on two PostgreSQL
    /// instances). A read-back that finds no such event now drops what is still queued or failed
    /// for it.
    @Test func aRefusedCreateOfAnEventDeletedHereWithItsTypeTakesItsLaterEditsWithIt() async throws {
        try await SyncHarness.with { h in
            let type = try await h.type("Gym")
            #expect(await h.engine.sync(full: false).outcome == .ok)
            let e = h.event(type)
            try await h.store.createEvent(e)
            // Taken (marked sent), then the connection fails before the server sees it.
            h.api.fail("createEvents", with: .transport(.connectionLost("dropped")))
            _ = await h.engine.sync(full: false)
            #expect(try await h.serverEventIds().isEmpty)
            var moved = e
            moved.timestamp = e.timestamp.addingTimeInterval(60)
            try await h.store.updateEvent(moved)
            try await h.store.deleteEventType(id: type.id)
            h.refuseNext("createEvents")
            for _ in 0..<3 {
                h.clock.advance(600)
                _ = await h.engine.sync(full: false)
            }
            let stuck = try await h.store.failedChanges()
            #expect(stuck.isEmpty, "\(stuck)")
            #expect(try await h.store.outboxCounts() == (0, 0))
            #expect(try await h.serverEventIds().isEmpty)
            #expect(try await h.direct.listEventTypes().isEmpty)
        }
    }
}
