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
    enum How: String, CaseIterable, Sendable { case pullCut, pulled, skipToLatest }

    @Test(arguments: How.allCases)
    func whatTheServerLostOfAnEditGoesAgain(how: How) async throws {
        try await SyncHarness.with { h in
            let (type, kept) = try await NeverLoseEngineTests.synced(h)
            // Another device's edit, pulled here: the server's loss of it is seen here too.
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
            let run = how == .skipToLatest ? await h.engine.skipToLatest() : await h.engine.sync(full: false)
            #expect(run.outcome == .ok, "\(run)")
            #expect(try await h.store.outboxCounts().pending == 0)
            #expect(try await h.direct.event(id: kept.id).value.notes == "edited here")
            #expect(try await h.direct.event(id: kept.id).value.timestamp == Self.t0 + 3_600)
            #expect(try await h.direct.eventType(id: type.id).value.name == "Renamed here")
            #expect(try await h.store.event(id: kept.id)?.value.notes == "edited here")
            #expect(try await h.store.event(id: kept.id)?.value.timestamp == Self.t0 + 3_600)
            #expect(try await h.store.eventType(id: type.id)?.value.name == "Renamed here")
            if how != .pullCut {
                // Known here from the pull: it goes back to the server too.
                #expect(try await h.direct.event(id: other.id).value.notes == "edited there")
            }
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
