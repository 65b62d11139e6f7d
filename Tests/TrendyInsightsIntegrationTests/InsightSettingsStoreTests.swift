import Foundation
import GRDB
import Testing
import TrendyInsights
import TrendyInsightsLive
import TrendySyncLive

/// The settings' failure paths on a real install database: settings that cannot be kept are
/// refused with nothing changed, and settings that cannot be read count as the defaults.
struct InsightSettingsStoreTests {
    static func store() throws -> (SQLiteInsightStore, DatabaseQueue) {
        var migrator = DatabaseMigrator()
        SyncSchema.register(in: &migrator)
        InsightSchema.register(in: &migrator)
        let db = try DatabaseQueue()
        try migrator.migrate(db)
        return (SQLiteInsightStore(database: db, defaultZone: { "Europe/Berlin" }), db)
    }

    @Test func settingsThatCannotBeKeptAreRefusedAndChangeNothing() async throws {
        let (store, _) = try Self.store()
        var settings = try await store.settings()
        #expect(settings.timeZone == "Europe/Berlin")
        settings.dayStartHour = 4
        try await store.save(settings)
        for bad in [
            InsightSettings(timeZone: "Mars/Olympus_Mons"), InsightSettings(timeZone: "UTC", dayStartHour: 13),
            InsightSettings(timeZone: "UTC", skipWeekdays: Array(0...6)),
            InsightSettings(timeZone: "UTC", skipDays: [Day(year: 999, month: 6, day: 1)]),
            InsightSettings(timeZone: "UTC", gracePerMonth: 32),
        ] {
            await #expect(throws: InsightSettingsError.self) { try await store.save(bad) }
        }
        #expect(try await store.settings() == settings)
    }

    @Test func settingsThatCannotBeReadCountAsTheDefaults() async throws {
        let (store, db) = try Self.store()
        _ = try await store.settings()
        try await db.write { db in
            try db.execute(sql: "UPDATE insight_settings SET body = '{\"time_zone\": 7}' WHERE id = 1")
        }
        let read = try await store.settings()
        #expect(read == InsightSettings(timeZone: "Europe/Berlin"))
        // And the data still reads (an outside tester's install failed for ever instead).
        _ = try await store.data(now: Date(), zone: "Europe/Berlin", typeId: nil)
    }
}
