import Foundation
import GRDB
import TrendyInsights
import TrendyInsightsLive
import TrendyInsightsTesting
import TrendyLogging
import TrendyModels
import TrendySync
import TrendySyncLive

/// Insights (issue 34): everything but correlations for a big history from the aggregates the
/// store keeps, against the same from a scan of the events in the same run; correlations for 20
/// types and 5 numeric properties over a year, permutations included; one new event to its
/// type's streak and week; and the write path with the aggregates' triggers on, against the same
/// schema without them (alternating writes, the same run).
enum InsightBenchmarks {
    static let zone = "Europe/Berlin"

    static func makeStore(_ dir: URL, name: String) throws -> (SQLiteLocalStore, SQLiteInsightStore, DatabasePool) {
        var migrator = DatabaseMigrator()
        SyncSchema.register(in: &migrator)
        InsightSchema.register(in: &migrator)
        var config = Configuration()
        let path = dir.appendingPathComponent(name).path
        LocalDatabaseSettings.apply(to: &config, path: path)
        let pool = try DatabasePool(path: path, configuration: config)
        try migrator.migrate(pool)
        let store = SQLiteLocalStore(database: pool, zone: { zone }, logger: LogSystem.disabled().logger(.data))
        return (store, SQLiteInsightStore(database: pool, defaultZone: { zone }), pool)
    }

    static func run(smoke: Bool, size: Int?) async throws -> [BenchResult] {
        let total = smoke ? 20_000 : (size ?? 1_000_000)
        let dir = BenchHarness.temporaryDirectory("insights")
        defer { try? FileManager.default.removeItem(at: dir) }
        let ids = UUIDv7Generator()
        let (store, insights, pool) = try makeStore(dir, name: "insights.sqlite")
        _ = try await insights.settings()
        let types = (0..<20).map { EventType(id: ids.next(), name: "Type\($0)") }
        for t in types { try await store.createEventType(t) }
        for t in types.prefix(5) {
            try await store.createPropertyDefinition(
                PropertyDefinition(id: ids.next(), eventTypeId: t.id, key: "dose", propertyType: .number))
        }
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        let clock = ContinuousClock()
        let filled = clock.now
        try await fill(pool, total: total, types: types.map(\.id), ids: ids, now: now)
        var results = [
            BenchResult(
                suite: "insights", name: "fill_\(total)_events_over_5_years_with_aggregates (s)",
                value: BenchHarness.seconds(clock.now - filled), unit: "s", baseline: nil, ratio: nil, target: "report",
                met: nil)
        ]
        let settings = try await insights.settings()
        var fast: [Double] = []
        var slow: [Double] = []
        for round in 0..<(smoke ? 2 : 7) {
            let t0 = clock.now
            let data = try await insights.data(now: now, zone: zone, typeId: nil)
            _ = Insights.report(data, settings: settings, correlate: false, cache: insights.zones)
            fast.append(BenchHarness.seconds(clock.now - t0) * 1000)
            if round < (smoke ? 1 : 3) {
                let t1 = clock.now
                let scanned = try await insights.scan(now: now, zone: zone, settings: settings)
                _ = Insights.report(scanned, settings: settings, correlate: false, cache: insights.zones)
                slow.append(BenchHarness.seconds(clock.now - t1) * 1000)
            }
        }
        let fastMedian = BenchHarness.median(fast)
        let slowMedian = BenchHarness.median(slow)
        results.append(
            BenchResult(
                suite: "insights",
                name: "everything_but_correlations_from_aggregates (\(total) events, 20 types; baseline: a scan)",
                value: fastMedian, unit: "ms", baseline: slowMedian, ratio: fastMedian / slowMedian, target: "≤ 50 ms",
                met: fastMedian <= 50))
        var correlations: [Double] = []
        for seed in UInt64(1)...(smoke ? 1 : 5) {
            let input = NullHistories.benchmarkInput(types: 20, properties: 5, days: 365, seed: seed)
            let t0 = clock.now
            _ = Correlations.run(input.series, firstDay: input.firstDay)
            correlations.append(BenchHarness.seconds(clock.now - t0) * 1000)
        }
        let worst = correlations.max() ?? 0
        results.append(
            BenchResult(
                suite: "insights", name: "correlations_20_types_5_properties_365_days (slowest of 5 seeds)",
                value: worst, unit: "ms", baseline: nil, ratio: nil, target: "≤ 300 ms", met: worst <= 300))
        // One new event: its type's streak and week brought up to date from the aggregates, once
        // the write (its own figure, below) has committed.
        var incremental: [Double] = []
        let type = InsightType(id: types[0].id.description, name: types[0].name)
        for i in 0..<(smoke ? 20 : 300) {
            try await store.createEvent(
                Event(id: ids.next(), eventTypeId: types[0].id, timestamp: now.addingTimeInterval(Double(-i))))
            let t0 = clock.now
            let data = try await insights.data(now: now, zone: zone, typeId: type.id)
            _ = Streaks.streak(
                type, daily: data.daily[type.id] ?? [:], dayZones: data.dayZones[type.id] ?? [:], today: data.today,
                settings: settings, clock: settings.clock(cache: insights.zones))
            _ = WeekComparison.compare(
                type, daily: data.daily[type.id] ?? [:], partial: data.partial[type.id] ?? PartialDays(),
                today: data.today)
            incremental.append(BenchHarness.seconds(clock.now - t0) * 1000)
        }
        if ProcessInfo.processInfo.environment["TRENDY_BENCH_PROFILE"] != nil {
            var parts: [String: [Double]] = [:]
            for i in 0..<50 {
                var t = clock.now
                func lap(_ name: String) {
                    parts[name, default: []].append(BenchHarness.seconds(clock.now - t) * 1000)
                    t = clock.now
                }
                try await store.createEvent(
                    Event(
                        id: ids.next(), eventTypeId: types[0].id, timestamp: now.addingTimeInterval(Double(-1000 - i))))
                lap("create")
                _ = try await insights.settings()
                lap("settings")
                let data = try await insights.data(now: now, zone: zone, typeId: type.id)
                lap("data")
                _ = Streaks.streak(
                    type, daily: data.daily[type.id] ?? [:], dayZones: data.dayZones[type.id] ?? [:], today: data.today,
                    settings: settings, clock: settings.clock(cache: insights.zones))
                lap("streak")
                let full = try await insights.data(now: now, zone: zone, typeId: nil)
                lap("full data")
                _ = Insights.report(full, settings: settings, correlate: false, cache: insights.zones)
                lap("full report")
            }
            if ProcessInfo.processInfo.environment["TRENDY_BENCH_PROFILE"] == "loop" {
                for _ in 0..<3000 { _ = try await insights.data(now: now, zone: zone, typeId: type.id) }
            }
            for (name, values) in parts.sorted(by: { $0.key < $1.key }) {
                print("profile \(name): median \(BenchHarness.median(values)) ms")
            }
        }
        let incrementalP95 = BenchHarness.percentile(incremental, 95)
        results.append(
            BenchResult(
                suite: "insights", name: "one_new_event_to_its_streak_and_week_p95 (after the write)",
                value: incrementalP95, unit: "ms", baseline: nil, ratio: nil, target: "≤ 1 ms", met: incrementalP95 <= 1
            ))
        results.append(try await writes(dir, ids: ids, now: now, smoke: smoke))
        return results
    }

    /// The write path's p95 with the aggregates' triggers, against the same schema without them.
    static func writes(_ dir: URL, ids: UUIDv7Generator, now: Date, smoke: Bool) async throws -> BenchResult {
        let (with, _, _) = try makeStore(dir, name: "with.sqlite")
        let (without, _, withoutPool) = try makeStore(dir, name: "without.sqlite")
        try await withoutPool.write { db in try db.execute(sql: InsightSchema.bulkLoadBegin) }
        let type = EventType(id: ids.next(), name: "Coffee")
        try await with.createEventType(type)
        try await without.createEventType(type)
        let (on, off) = try await BenchHarness.alternatingWrites(with, without, count: smoke ? 200 : 6_000) { i in
            Event(
                id: ids.next(), eventTypeId: type.id, timestamp: now.addingTimeInterval(Double(i)),
                notes: "note \(i % 97)", properties: ["dose": .number(Double(i % 5))])
        }
        let p95 = BenchHarness.percentile(on, 95)
        let baseline = BenchHarness.percentile(off, 95)
        return BenchResult(
            suite: "insights", name: "write_p95_with_aggregates (baseline: the same schema without them)", value: p95,
            unit: "ms", baseline: baseline, ratio: p95 / baseline, target: "≤ 0.5 ms", met: p95 <= 0.5)
    }

    /// `total` events over five years, 20 types (a few a day each, at waking hours), a dose on the
    /// first five types' events, a tenth logged in Tokyo; the triggers keep the aggregates as the
    /// rows go in.
    static func fill(_ pool: DatabasePool, total: Int, types: [UUIDv7], ids: UUIDv7Generator, now: Date) async throws {
        var rng = SplitMix64(seed: 34)
        let span = 5.0 * 365 * 86_400
        for chunk in stride(from: 0, to: total, by: 20_000) {
            var rows: [(String, String, Int64, String)] = []
            for i in chunk..<min(chunk + 20_000, total) {
                let at = now.addingTimeInterval(-span + span * Double(i) / Double(total))
                let type = types[Int(rng.next() % UInt64(types.count))]
                var event = Event(
                    id: ids.next(), eventTypeId: type, timestamp: at, sourceType: .imported,
                    timeZone: rng.next() % 10 == 0 ? "Asia/Tokyo" : nil)
                if types.prefix(5).contains(type) { event.properties = ["dose": .number(Double(rng.next() % 40) / 4)] }
                rows.append(
                    (event.id.description, type.description, Int64(at.timeIntervalSince1970 * 1000), event.wireJSON()))
            }
            try await SearchBenchmarks.insertSynced(pool, rows)
        }
    }
}
