import Foundation
import GRDB
import Logging
import Synchronization
import Testing
import TrendyModels
import TrendySyncLive
import TrendyTestSupport

@testable import TrendyApp

/// Opening the install's database (`AppDatabase.open`).
@Suite(.timeLimit(.minutes(2)))
struct AppDatabaseTests {
    /// D63: derived tables whose triggers a load left down are put back at open. When that fails
    /// (a damaged table, a full disk), the database still opens and takes the person's writes; the
    /// failure is heard (the composition root logs it), and a later open tries again.
    @Test func aDerivedTableThatCannotBeMendedDoesNotKeepTheDatabaseShut() async throws {
        let dir = TemporaryDirectory("trendy-db")
        let url = dir.url.appendingPathComponent("trendy.sqlite")
        let broken = DerivedFromEvents(begin: "", end: "INSERT INTO no_such_table VALUES (1)", present: "SELECT 0")
        let heard = Heard()
        let pool = try AppDatabase.open(
            at: url, migrator: AppPlugins.migrator(AppPlugins.active), derived: [broken],
            derivedNotMended: { heard.add(String(describing: $0)) })
        #expect(heard.all.count == 1)
        #expect(heard.all.first?.contains("no_such_table") == true)
        let store = SQLiteLocalStore(database: pool, derived: [broken], logger: Logger(label: "test"))
        let type = EventType(id: UUIDv7Generator().next(), name: "Coffee")
        try await store.createEventType(type)
        try await store.createEvent(Event(id: UUIDv7Generator().next(), eventTypeId: type.id, timestamp: Date()))
        #expect(try await store.events(limit: 10, since: nil).count == 1)
        try pool.close()

        // The next open tries again (and hears it again while it still fails).
        let again = try AppDatabase.open(
            at: url, migrator: AppPlugins.migrator(AppPlugins.active), derived: [broken],
            derivedNotMended: { heard.add(String(describing: $0)) })
        #expect(heard.all.count == 2)
        try again.close()
    }

    final class Heard: Sendable {
        private let lines = Mutex<[String]>([])
        func add(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }
}
