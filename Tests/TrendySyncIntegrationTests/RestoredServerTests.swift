import Foundation
import GRDB
import PostgresNIO
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyAPITesting
import TrendyLogging
import TrendyModels
import TrendyServerTestSupport
import TrendySync
import TrendyTestSupport

@testable import TrendyServer
@testable import TrendySyncLive

/// A copy of the harness's whole server store, put back under the running server as an operator
/// restores a backup: every table (accounts, sessions, the feed, field versions, idempotency keys).
struct StoreBackup {
    private let sqlite: DatabaseQueue?
    private let tables: [String]

    /// Copies the store as it is now.
    static func take(_ h: SyncHarness) async throws -> StoreBackup {
        switch h.server.store {
        case let store as SQLiteServerStore:
            let copy = try DatabaseQueue()
            try store.db.backup(to: copy)
            return StoreBackup(sqlite: copy, tables: [])
        case let store as PostgresServerStore:
            let tables = try await store.database.read { s in
                try await s.all(
                    "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1",
                    as: String.self)
            }
            _ = try await store.database.read { s in
                for table in tables {
                    _ = try await s.run(PostgresQuery(unsafeSQL: "CREATE TABLE backup_\(table) AS TABLE \(table)"))
                }
                return 0
            }
            return StoreBackup(sqlite: nil, tables: tables)
        default:
            throw CannotBackUp(store: "\(type(of: h.server.store))")
        }
    }

    /// Puts the copy back: everything written since it was taken is gone.
    func restore(_ h: SyncHarness) async throws {
        switch h.server.store {
        case let store as SQLiteServerStore:
            try sqlite?.backup(to: store.db)
        case let store as PostgresServerStore:
            let tables = tables
            _ = try await store.database.read { s in
                // Rows as they were, without the triggers and checks a restore does not run either.
                _ = try await s.run("SET session_replication_role = replica")
                _ = try await s.run(PostgresQuery(unsafeSQL: "TRUNCATE \(tables.joined(separator: ", "))"))
                for table in tables {
                    _ = try await s.run(
                        PostgresQuery(unsafeSQL: "INSERT INTO \(table) SELECT * FROM backup_\(table)"))
                }
                _ = try await s.run("SET session_replication_role = DEFAULT")
                return 0
            }
        default:
            throw CannotBackUp(store: "\(type(of: h.server.store))")
        }
    }

    struct CannotBackUp: Error { var store: String }
}

/// B4, the edit half of the outsider's R1, and R4 (D61): a server restored from a backup has an
/// entity in an older version than a device knows (the device's edit reached it after the
/// backup), or has again one the device deleted. The download that follows the loss took the
/// server's version: the edit was undone on every device without a conflict, the deleted event came
/// back. Now the fields this device sent after the server's copy go again, and so does the delete.
@Suite(.timeLimit(.minutes(6)))
struct RestoredServerTests {
    static let t0 = Date(timeIntervalSince1970: 1_780_000_000)

    /// How the device learns of the loss: its pull after the push failed and the mark the push
    /// was answered with is gone (D60), or its pull went through and its cursor is gone (D59),
    /// or the same through `--skip-to-latest`.
    enum How: String, CaseIterable, Sendable { case pullCut, pulled, skipToLatest, fullNothingQueued }

    @Test(arguments: How.allCases)
    func whatTheServerLostOfAnEditGoesAgain(how: How) async throws {
        try await SyncHarness.with { h in
            let (type, kept) = try await NeverLoseEngineTests.synced(h)
            // Another device's event; its edit, pulled here, is not this device's to send again.
            let other = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0 + 1, notes: "other's")
            _ = try await h.direct.createEvents([other], idempotencyKey: nil)
            let doomed = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0 + 2, notes: "doomed")
            try await h.store.createEvent(doomed)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            // Another device moves this device's event; the backup has it, this device has not
            // pulled it when it pushes its own edit (never in `pullCut`): its stale time must not
            // go back over the server's.
            var moved = EventUpdate()
            moved.timestamp = .set(Self.t0 + 3_600)
            _ = try await h.direct.updateEvent(id: kept.id, moved, idempotencyKey: nil)
            let backup = try await StoreBackup.take(h)
            try await Task.sleep(for: .milliseconds(20))

            var edited = kept
            edited.notes = "edited here"
            try await h.store.updateEvent(edited)
            var renamed = type
            renamed.name = "Renamed here"
            try await h.store.updateEventType(renamed)
            try await h.store.deleteEvent(id: doomed.id)
            var update = EventUpdate()
            update.notes = .set("edited there")
            _ = try await h.direct.updateEvent(id: other.id, update, idempotencyKey: nil)
            if how == .pullCut { h.api.fail("changes", with: .transport(.timedOut)) }
            let first = await h.engine.sync(full: false)
            #expect(first.pushed == 3, "\(first)")
            #expect(try await h.direct.event(id: kept.id).value.notes == "edited here")
            if how != .pullCut {
                #expect(try await h.store.event(id: other.id)?.value.notes == "edited there")
            }

            // The server is restored; another device writes after it, past every cursor here.
            try await backup.restore(h)
            #expect(try await h.direct.event(id: kept.id).value.notes == "kept")
            for i in 0..<5 {
                let e = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0 + 60 + Double(i))
                _ = try await h.direct.createEvents([e], idempotencyKey: nil)
            }
            h.clock.advance(3_600)
            let run: SyncRun
            switch how {
            case .skipToLatest: run = await h.engine.skipToLatest()
            // The advice for a server that lost data, with nothing waiting here (an outsider's F2:
            // the full download took the server's older copies and its baseline hid the loss).
            case .fullNothingQueued: run = await h.engine.sync(full: true)
            case .pullCut, .pulled: run = await h.engine.sync(full: false)
            }
            #expect(run.outcome == .ok, "\(run)")
            #expect(try await h.store.outboxCounts().pending == 0)
            #expect(try await h.direct.event(id: kept.id).value.notes == "edited here")
            #expect(try await h.direct.event(id: kept.id).value.timestamp == Self.t0 + 3_600)
            #expect(try await h.direct.eventType(id: type.id).value.name == "Renamed here")
            #expect(try await h.store.event(id: kept.id)?.value.notes == "edited here")
            #expect(try await h.store.event(id: kept.id)?.value.timestamp == Self.t0 + 3_600)
            #expect(try await h.store.eventType(id: type.id)?.value.name == "Renamed here")
            // Another device's edit the server lost stays lost unless that device sends it again:
            // a copy pulled here, sent first, would make the entity newer on the server than that
            // device's own edit, which it would then never send.
            #expect(try await h.direct.event(id: other.id).value.notes == "other's")
            #expect(try await h.store.event(id: other.id)?.value.notes == "other's")
            // The delete the server lost goes again (a batch's answer named its time).
            #expect(try await !h.serverEventIds().contains(doomed.id.description))
            #expect(try await h.store.event(id: doomed.id) == nil)
            #expect(try await h.store.openConflictCount() == 0)
        }
    }

    /// What another device changed after the restore is newer than anything this device knows:
    /// it is taken, not overwritten; and a plain full download (no loss) sends nothing again.
    @Test func aChangeMadeAfterTheRestoreWins() async throws {
        try await SyncHarness.with { h in
            let (type, kept) = try await NeverLoseEngineTests.synced(h)
            let backup = try await StoreBackup.take(h)
            try await Task.sleep(for: .milliseconds(20))
            var edited = kept
            edited.notes = "edited here"
            try await h.store.updateEvent(edited)
            #expect(await h.engine.sync(full: false).outcome == .ok)
            try await backup.restore(h)
            try await Task.sleep(for: .milliseconds(20))
            var update = EventUpdate()
            update.notes = .set("after the restore")
            _ = try await h.direct.updateEvent(id: kept.id, update, idempotencyKey: nil)
            for i in 0..<5 {
                let e = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0 + 60 + Double(i))
                _ = try await h.direct.createEvents([e], idempotencyKey: nil)
            }
            let run = await h.engine.sync(full: false)
            #expect(run.outcome == .ok, "\(run)")
            #expect(try await h.direct.event(id: kept.id).value.notes == "after the restore")
            #expect(try await h.store.event(id: kept.id)?.value.notes == "after the restore")

            // A full download with nothing lost: the server's copies are taken as they are.
            let edits = h.api.calls("editEvents").count
            #expect(await h.engine.sync(full: true).outcome == .ok)
            #expect(h.api.calls("editEvents").count == edits)
            #expect(try await h.store.outboxCounts().pending == 0)
        }
    }
}

/// An outsider's F1 (D61): an entity created after the backup, pulled by another device, then
/// edited or deleted by its author. After the restore the other device synced first and, as the
/// server lacked the entity, sent its pulled copy again; the author's recovery then saw a server
/// copy newer than its edit or delete and took it: the edit undone, the deleted entity back, on
/// every device, without a conflict. A copy created after this device's write is a re-creation.
/// The other order lost the delete too: the author recovered first (the server lacked the
/// entity: nothing to do), the other device then re-created it, and the author's tombstone kept
/// the pulled copy out: the author and the server disagreed for good (the seeded test, seed 95).
@Suite(.timeLimit(.minutes(6)))
struct RecreatedCopyTests {
    static let t0 = Date(timeIntervalSince1970: 1_780_000_000)

    enum First: String, CaseIterable, Sendable { case other, author }

    @Test(arguments: First.allCases)
    func aCopyAnotherDeviceSentAgainDoesNotHideTheAuthorsEditOrDelete(first: First) async throws {
        try await SyncHarness.with { h in
            let author = h.device
            let other = try h.anotherDevice()
            let (_, kept) = try await NeverLoseEngineTests.synced(h)
            let backup = try await StoreBackup.take(h)
            try await Task.sleep(for: .milliseconds(20))

            // After the backup: the author makes a type, two events of it and a place; the other
            // device pulls them.
            var type = EventType(id: h.ids.next(), name: "Made")
            try await author.store.createEventType(type)
            var edited = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0 + 10, notes: "made")
            let doomed = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0 + 20, notes: "doomed")
            try await author.store.createEvent(edited)
            try await author.store.createEvent(doomed)
            var place = Geofence(
                id: h.ids.next(), name: "Made", center: Coordinate(latitude: 52.5, longitude: 13.4), radius: 100,
                entryEventTypeId: type.id)
            try await author.store.createGeofence(place)
            #expect(await author.engine.sync(full: false).outcome == .ok)
            h.clock.advance(60)
            #expect(await other.engine.sync(full: false).outcome == .ok)
            #expect(try await other.store.event(id: edited.id)?.value.notes == "made")
            try await Task.sleep(for: .milliseconds(20))

            // The author changes them; the other device does not pull that before the restore.
            edited.notes = "edited by the author"
            try await author.store.updateEvent(edited)
            try await author.store.deleteEvent(id: doomed.id)
            type.name = "Renamed by the author"
            try await author.store.updateEventType(type)
            place.name = "Renamed place"
            try await author.store.updateGeofence(place)
            h.clock.advance(60)
            #expect(await author.engine.sync(full: false).outcome == .ok)

            try await backup.restore(h)
            try await Task.sleep(for: .milliseconds(20))
            // One device finds the loss first and sends its copies again; the other then sends what
            // the server lacks in its copies.
            h.clock.advance(3_600)
            let run = await (first == .other ? other : author).engine.sync(full: false)
            #expect(run.outcome == .ok && run.pushed >= 3, "\(run)")
            if first == .other { #expect(try await h.direct.event(id: edited.id).value.notes == "made") }
            let then = first == .other ? [author, other, author, other] : [other, author, other]
            for (i, d) in then.enumerated() {
                h.clock.advance(3_600)
                let run = await d.engine.sync(full: false)
                #expect(run.outcome == .ok, "settle \(i): \(run)")
            }

            #expect(try await h.direct.event(id: edited.id).value.notes == "edited by the author")
            #expect(try await !h.serverEventIds().contains(doomed.id.description))
            #expect(try await h.direct.eventType(id: type.id).value.name == "Renamed by the author")
            #expect(try await h.direct.geofence(id: place.id).value.name == "Renamed place")
            for d in [author, other] {
                #expect(try await d.store.event(id: edited.id)?.value.notes == "edited by the author")
                #expect(try await d.store.event(id: doomed.id) == nil)
                #expect(try await d.store.event(id: kept.id)?.value.notes == "kept")
                #expect(try await d.store.eventType(id: type.id)?.value.name == "Renamed by the author")
                #expect(try await d.store.geofences().first { $0.value.id == place.id }?.value.name == "Renamed place")
                #expect(try await d.store.outboxCounts().pending == 0)
                #expect(try await d.store.openConflictCount() == 0)
            }
        }
    }
}

/// An outsider's N1 and N2 (D61): a type's, place's or property's delete the restored server lost
/// came back — its single `DELETE` answered without a time, so nothing recorded when the server
/// took it — and when the author recovered first and another device then re-created the entity,
/// the author's tombstone kept the copy out: they disagreed for good. `alone`: the entities are in
/// the backup and only their author syncs.
extension RecreatedCopyTests {
    enum Who: String, CaseIterable, Sendable { case alone, otherFirst, authorFirst }

    @Test(arguments: Who.allCases)
    func deletesOfTypesPlacesAndPropertiesTheServerLostGoAgain(who: Who) async throws {
        try await SyncHarness.with { h in
            let author = h.device
            let other = try h.anotherDevice()
            let (kind, _) = try await NeverLoseEngineTests.synced(h)
            func make() async throws -> (EventType, PropertyDefinition, Geofence) {
                let type = EventType(id: h.ids.next(), name: "Swim")
                try await author.store.createEventType(type)
                let property = PropertyDefinition(
                    id: h.ids.next(), eventTypeId: kind.id, key: "dist", propertyType: .number)
                try await author.store.createPropertyDefinition(property)
                let place = Geofence(
                    id: h.ids.next(), name: "Pool", center: Coordinate(latitude: 52.5, longitude: 13.4), radius: 100)
                try await author.store.createGeofence(place)
                #expect(await author.engine.sync(full: false).outcome == .ok)
                return (type, property, place)
            }
            var made: (EventType, PropertyDefinition, Geofence)?
            if who == .alone { made = try await make() }
            let backup = try await StoreBackup.take(h)
            try await Task.sleep(for: .milliseconds(20))
            if who != .alone {
                made = try await make()
                h.clock.advance(60)
                #expect(await other.engine.sync(full: false).outcome == .ok)
                #expect(try await other.store.eventTypes().contains { $0.value.name == "Swim" })
            }
            guard let (type, property, place) = made else { return }
            try await Task.sleep(for: .milliseconds(20))
            try await author.store.deleteEventType(id: type.id)
            try await author.store.deletePropertyDefinition(id: property.id)
            try await author.store.deleteGeofence(id: place.id)
            h.clock.advance(60)
            #expect(await author.engine.sync(full: false).outcome == .ok)

            try await backup.restore(h)
            try await Task.sleep(for: .milliseconds(20))
            let order: [SyncHarness.Device] =
                switch who {
                case .alone: [author, author]
                case .otherFirst: [other, author, other, author, other]
                case .authorFirst: [author, other, author, other]
                }
            for (i, d) in order.enumerated() {
                h.clock.advance(3_600)
                let run = await d.engine.sync(full: false)
                #expect(run.outcome == .ok, "pass \(i): \(run)")
            }

            #expect(try await !h.direct.listEventTypes().contains { $0.value.id == type.id })
            #expect(try await !h.direct.listPropertyDefinitions().contains { $0.value.id == property.id })
            #expect(try await !h.direct.listGeofences(active: nil).contains { $0.value.id == place.id })
            for d in who == .alone ? [author] : [author, other] {
                #expect(try await !d.store.eventTypes().contains { $0.value.id == type.id })
                #expect(try await !d.store.propertyDefinitions(ofType: nil).contains { $0.value.id == property.id })
                #expect(try await !d.store.geofences().contains { $0.value.id == place.id })
                #expect(try await d.store.outboxCounts().pending == 0)
            }
        }
    }
}

extension RecreatedCopyTests {
    /// A type whose booked delete (D61) holds a pulled re-created copy back sends its delete
    /// again once, however many pages name the copy: a delete waiting here again is not queued
    /// twice.
    @Test func aRecreatedTypeIsDeletedAgainOnce() async throws {
        let store = try SyncHarness.memoryStore()
        let type = EventType(id: UUIDv7Generator().next(), name: "Swim")
        let delivered = Self.t0
        try await store.db.write { db in
            try db.execute(
                sql: "INSERT INTO pushed_versions (entity, entity_id, field, at) VALUES ('event_type', ?, ?, ?)",
                arguments: [type.id.description, SQLiteLocalStore.deletedField, ISO8601.format(delivered)])
        }
        func page(_ cursor: Int64) -> ChangesPage {
            let copy = Timestamped(type, createdAt: delivered + 60, updatedAt: delivered + 60 + Double(cursor))
            return ChangesPage(
                changes: [
                    Change(
                        cursor: cursor, entityType: .eventType, entityId: type.id.description,
                        operation: cursor == 1 ? .create : .update, data: .eventType(copy), createdAt: copy.updatedAt)
                ], nextCursor: cursor, hasMore: false)
        }
        _ = try await store.apply(page(1))
        _ = try await store.apply(page(2))
        #expect(try await store.eventType(id: type.id) == nil, "held back")
        let deletes = try await store.db.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox WHERE entity = 'event_type' AND kind = 'delete'")
        }
        #expect(deletes == 1)
    }
}

/// Seeded sequences around a restore (D61): two devices create, edit, move and delete events, sync (some
/// pulls cut after the push), the server is backed up, more of the same, the server is restored,
/// a little more, then both sync until quiet. Replay one with `TRENDY_RESTORE_FIRST_SEED=N
/// TRENDY_RESTORE_SEEDS=1`.
@Suite(.timeLimit(.minutes(6)))
struct SeededRestoreTests {
    static let t0 = Date(timeIntervalSince1970: 1_780_000_000)

    @Test func whatOneDeviceAloneWroteSinceTheBackupSurvivesTheRestore() async throws {
        let env = ProcessInfo.processInfo.environment
        let count = env["TRENDY_RESTORE_SEEDS"].flatMap(Int.init) ?? 8
        let first = env["TRENDY_RESTORE_FIRST_SEED"].flatMap(Int.init) ?? 1
        for seed in first..<(first + count) { try await Self.run(seed: UInt64(seed)) }
    }

    /// A write after the backup: which device, which event and field, the value, whether after the restore.
    struct Write {
        var device: Int
        var event: String
        var field: String
        var value: String
    }

    static func run(seed: UInt64) async throws {
        try await SyncHarness.with { h in
            var rng = SplitMix64(seed: seed)
            func int(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
            let devices = [h.device, try h.anotherDevice()]
            let type = try await h.type()
            var ids = (0..<6).map { _ in h.ids.next() }
            for (i, id) in ids.enumerated() {
                try await h.store.createEvent(
                    Event(id: id, eventTypeId: type.id, timestamp: Self.t0 + Double(i) * 60, notes: "n\(i)"))
            }
            for d in devices { #expect(await d.engine.sync(full: false).outcome == .ok, "seed \(seed)") }

            var counter = 0
            var trace: [String] = []
            var writes: [Write] = []
            var deletes: [(device: Int, event: String, afterBackup: Bool)] = []
            var afterBackup = false
            func step() async throws {
                let d = int(2)
                let device = devices[d]
                // Half the time the newest event, as people change what they just logged.
                let id = int(2) == 0 ? ids[ids.count - 1] : ids[int(ids.count)]
                counter += 1
                switch int(10) {
                case 0..<6:
                    guard var event = try await device.store.event(id: id)?.value else { return }
                    let field: String
                    let value: String
                    if int(2) == 0 {
                        field = "notes"
                        value = "s\(seed)-\(counter)"
                        event.notes = value
                    } else {
                        field = "timestamp"
                        event.timestamp = Self.t0 + 100_000 + Double(counter) * 7
                        value = ISO8601.format(event.timestamp)
                    }
                    try await device.store.updateEvent(event)
                    trace.append("\(d) \(field) \(id.description.suffix(4)) = \(value)")
                    if afterBackup {
                        writes.append(Write(device: d, event: id.description, field: field, value: value))
                    }
                case 6 where int(3) == 0:
                    guard try await device.store.event(id: id) != nil else { return }
                    try await device.store.deleteEvent(id: id)
                    trace.append("\(d) delete \(id.description.suffix(4))")
                    deletes.append((d, id.description, afterBackup))
                case 7:
                    // A new event: another device may pull it, and its author change it, before the
                    // restore loses it (an outsider's F1).
                    let new = Event(
                        id: h.ids.next(), eventTypeId: type.id, timestamp: Self.t0 + 200_000 + Double(counter) * 7,
                        notes: "c\(seed)-\(counter)")
                    try await device.store.createEvent(new)
                    ids.append(new.id)
                    trace.append("\(d) create \(new.id.description.suffix(4))")
                    if afterBackup {
                        let event = new.id.description
                        writes.append(Write(device: d, event: event, field: "notes", value: new.notes ?? ""))
                        writes.append(
                            Write(device: d, event: event, field: "timestamp", value: ISO8601.format(new.timestamp)))
                    }
                default:
                    let cut = int(3) == 0
                    if cut { device.api.fail("changes", with: .transport(.timedOut)) }
                    h.clock.advance(120)
                    let run = await device.engine.sync(full: false)
                    trace.append("\(d) sync\(cut ? " (pull cut)" : ""): \(run.outcome) pushed \(run.pushed)")
                }
                try await Task.sleep(for: .milliseconds(3))
            }
            for _ in 0..<6 { try await step() }
            for d in devices { _ = await d.engine.sync(full: false) }
            let backup = try await StoreBackup.take(h)
            trace.append("backup")
            afterBackup = true
            try await Task.sleep(for: .milliseconds(5))
            for _ in 0..<24 { try await step() }
            try await backup.restore(h)
            trace.append("restore")
            for _ in 0..<4 { try await step() }
            // Either device may find the loss first.
            let order = int(2) == 0 ? [0, 1] : [1, 0]
            for _ in 0..<3 {
                for i in order {
                    let d = devices[i]
                    h.clock.advance(3_600)
                    let run = await d.engine.sync(full: false)
                    trace.append("\(i) settle: \(run.outcome) pushed \(run.pushed) pulled \(run.pulled)")
                }
            }
            let why = "seed \(seed):\n" + trace.joined(separator: "\n")

            // Everyone agrees.
            var server: [String: Event] = [:]
            var after: String?
            repeat {
                let page = try await h.direct.listEvents(limit: 500, after: after)
                for e in page.items { server[e.value.id.description] = e.value }
                after = page.hasMore ? page.next : nil
            } while after != nil
            for (i, d) in devices.enumerated() {
                let why = "device \(i), " + why
                #expect(try await d.store.outboxCounts().pending == 0, "\(why)")
                let local = try await d.store.events(limit: 1_000, since: nil).map(\.value)
                #expect(Set(local.map(\.id.description)) == Set(server.keys), "\(why)")
                for e in local {
                    #expect(server[e.id.description]?.notes == e.notes, "\(why)")
                    #expect(server[e.id.description]?.timestamp == e.timestamp, "\(why)")
                }
            }
            // What one device alone changed of an event since the backup is there.
            // (A delete before the backup that the writer had not seen wins over its later edit,
            // which is kept as a conflict, D37.)
            let late = deletes.filter(\.afterBackup)
            for id in Set(writes.map(\.event)).union(late.map(\.event)) {
                let writers = Set(
                    writes.filter { $0.event == id }.map(\.device) + late.filter { $0.event == id }.map(\.device))
                guard writers.count == 1, !deletes.contains(where: { $0.event == id && !writers.contains($0.device) })
                else { continue }
                if late.contains(where: { $0.event == id }) {
                    #expect(server[id] == nil, "deleted by one device alone: \(id)\n\(why)")
                    continue
                }
                for field in ["notes", "timestamp"] {
                    guard let last = writes.last(where: { $0.event == id && $0.field == field }) else { continue }
                    let now = server[id].map { field == "notes" ? $0.notes ?? "" : ISO8601.format($0.timestamp) }
                    #expect(now == last.value, "\(field) of \(id)\n\(why)")
                }
            }
        }
    }
}
