import Foundation
import GRDB
import NIOHTTP1
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyModels
import TrendyServer
import TrendyServerTestSupport
import TrendyTestSupport

/// Change-feed cursors are numbered per user: a cursor tells a user nothing about how much
/// anyone else has written, and existing databases keep every cursor a device already holds.
@Suite(.timeLimit(.minutes(5)))
struct FeedCursorTests {
    @Test func aNewUsersCursorsStartAtOneWhateverOthersWrote() async throws {
        try await ServerHarness.with { h in
            let (busy, _) = try await h.newUserClient()
            let type = try await h.makeType(busy)
            _ = try await busy.createEvents(
                (0..<40).map { h.event(type, at: h.clock.now.addingTimeInterval(Double(-100 - $0))) },
                idempotencyKey: nil)
            let busyCursor = try await busy.latestCursor().cursor
            #expect(busyCursor == 41)

            let (newcomer, _) = try await h.newUserClient()
            #expect(try await newcomer.latestCursor().cursor == 0)
            let own = try await h.makeType(newcomer, "Mine")
            let page = try await newcomer.changes(since: 0, limit: 10)
            #expect(page.changes.map(\.cursor) == [1])
            #expect(page.changes.first?.entityId == own.id.description)
            #expect(page.nextCursor == 1)
            #expect(try await newcomer.syncSummary().latestCursor == 1)

            // Interleaved writes: each user's numbers stay dense and their own.
            _ = try await h.makeType(busy, "Later")
            _ = try await h.makeType(newcomer, "Also mine")
            #expect(try await busy.latestCursor().cursor == busyCursor + 1)
            #expect(try await newcomer.changes(since: 1, limit: 10).changes.map(\.cursor) == [2])
        }
    }

    /// A field-level conflict still needs the base a device sends (its cursor) to compare with
    /// the per-user numbers the server records for each field.
    @Test func conflictDetectionUsesPerUserCursors() async throws {
        try await ServerHarness.with { h in
            let (noise, _) = try await h.newUserClient()
            for index in 0..<5 { _ = try await h.makeType(noise, "Noise \(index)") }
            let (api, _) = try await h.newUserClient()
            let type = try await h.makeType(api)
            let base = try await api.latestCursor().cursor
            #expect(base == 1)
            for (device, name) in [("phone", "Tea"), ("laptop", "Mate")] {
                try await ChangeBase.$current.withValue(ChangeBase(version: base, deviceId: device)) {
                    _ = try await api.updateEventType(id: type.id, EventTypeUpdate(name: name), idempotencyKey: nil)
                }
            }
            let lost = try await api.changes(since: base, limit: 100).changes.compactMap { change -> String? in
                if case .conflict(let conflict) = change.data { return conflict.lostValue }
                return nil
            }
            #expect(lost == [#""Tea""#])
        }
    }

    func signIn(_ h: ServerHarness, _ email: String) async throws -> String {
        let r = try await h.raw(
            .POST, "/auth/v1/token?grant_type=password", body: #"{"email":"\#(email)","password":"password-123"}"#)
        return try TrendyJSON.decoder().decode(GoTrueSession.self, from: r.body).accessToken
    }

    /// A database written before per-user cursors keeps every cursor it handed out: a device
    /// that synced up to its cursor pulls exactly the changes after it, and each user's next
    /// change is numbered after that user's last, not after everyone's.
    @Test func anExistingDatabaseKeepsItsCursors() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "feed-cursors-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("server.sqlite").path
        let configuration = ServerConfiguration.testing { $0.databasePath = path }
        let alice = "alice-\(UUID().uuidString.prefix(8))@example.com"
        let bob = "bob-\(UUID().uuidString.prefix(8))@example.com"
        var aliceId = ""
        var aliceCursors: [Int64] = []
        try await ServerHarness.with(configuration) { h in
            let aliceSession = try await h.signUp(alice)
            aliceId = aliceSession.user.id
            let a = h.client(aliceSession.accessToken)
            let b = h.client(try await h.signUp(bob).accessToken)
            _ = try await h.makeType(a, "A1")
            _ = try await h.makeType(b, "B1")
            _ = try await h.makeType(a, "A2")
            _ = try await h.makeType(b, "B2")
            _ = try await h.makeType(a, "A3")
        }
        // Make it the database an older server wrote: one numbering across users.
        do {
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in
                try db.execute(
                    sql: """
                        DROP INDEX change_log_user_seq;
                        ALTER TABLE change_log DROP COLUMN seq;
                        CREATE INDEX change_log_user_cursor ON change_log(user_id, id);
                        DELETE FROM grdb_migrations WHERE identifier = 'v3-per-user-cursors';
                        """)
            }
            let id = aliceId
            aliceCursors = try await queue.read { db in
                try Int64.fetchAll(db, sql: "SELECT id FROM change_log WHERE user_id = ? ORDER BY id", arguments: [id])
            }
            try queue.close()
        }
        #expect(aliceCursors == [1, 3, 5])
        try await ServerHarness.with(configuration) { h in
            let a = h.client(try await signIn(h, alice))
            // A device that had synced up to Alice's second change sees exactly her third.
            #expect(try await a.changes(since: 3, limit: 10).changes.map(\.cursor) == [5])
            #expect(try await a.latestCursor().cursor == 5)
            _ = try await h.makeType(a, "A4")
            #expect(try await a.changes(since: 5, limit: 10).changes.map(\.cursor) == [6])
            let b = h.client(try await signIn(h, bob))
            _ = try await h.makeType(b, "B3")
            #expect(try await b.changes(since: 4, limit: 10).changes.map(\.cursor) == [5])
        }
    }
}
