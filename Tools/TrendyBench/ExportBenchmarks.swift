import Foundation
import GRDB
import TrendyModels
import TrendySync
import TrendySyncLive

/// Taking data out (issue 33): `trendy export` of a million events as a child process (wall time
/// and its peak resident memory), and an archive of 100,000 events with properties read back
/// into a fresh store, compared field by field.
enum ExportBenchmarks {
    static func run(smoke: Bool, size: Int?) async throws -> [BenchResult] {
        var results: [BenchResult] = []
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let trendy = here.appendingPathComponent("trendy")
        let dir = BenchHarness.temporaryDirectory("export")
        defer { try? FileManager.default.removeItem(at: dir) }
        let ids = UUIDv7Generator()
        var rng = SplitMix64(seed: 54)
        if FileManager.default.isExecutableFile(atPath: trendy.path) {
            let total = smoke ? 5_000 : (size ?? 1_000_000)
            let data = dir.appendingPathComponent("data")
            try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
            let (store, pool) = try SyncBenchmarks.makeStore(data, name: "trendy.sqlite")
            let types = (0..<5).map { EventType(id: ids.next(), name: "Type\($0)") }
            for t in types { try await store.createEventType(t) }
            // The index is not what is measured here: its triggers go for the fill.
            try await pool.write { db in
                for suffix in ["insert", "update", "delete"] {
                    try db.execute(sql: "DROP TRIGGER local_events_search_\(suffix)")
                }
            }
            try await SearchBenchmarks.fill(pool, total: total, types: types.map(\.id), ids: ids, rng: &rng)
            try pool.close()
            let clock = ContinuousClock()
            let t0 = clock.now
            let status = try MemoryBenchmarks.child(
                trendy, ["export", "-o", dir.appendingPathComponent("out.csv").path, "--data-dir", data.path])
            let seconds = BenchHarness.seconds(clock.now - t0)
            let peakMB = Double(MemoryBenchmarks.childrenPeakKilobytes()) / 1024
            let lines = try String(contentsOf: dir.appendingPathComponent("out.csv"), encoding: .utf8)
                .split(separator: "\n").count
            results.append(
                BenchResult(
                    suite: "export", name: "csv_export_\(total)_events (exit \(status), \(lines - 1) rows)",
                    value: seconds, unit: "s", baseline: nil, ratio: nil, target: "≤ 10 s",
                    met: seconds <= 10 && lines - 1 == total))
            results.append(
                BenchResult(
                    suite: "export", name: "csv_export_peak_rss", value: peakMB, unit: "MB", baseline: nil, ratio: nil,
                    target: "≤ 64 MB", met: peakMB <= 64))
        } else {
            print("export: the CLI figure is skipped — build the trendy product next to trendy-bench first")
        }
        results.append(try await archiveRoundTrip(smoke ? 2_000 : 100_000, dir, ids: ids, rng: &rng))
        return results
    }

    /// An archive of `count` events with properties, read back into a fresh store: exact?
    static func archiveRoundTrip(_ count: Int, _ dir: URL, ids: UUIDv7Generator, rng: inout SplitMix64) async throws
        -> BenchResult
    {
        let (source, sourcePool) = try SyncBenchmarks.makeStore(dir, name: "archive-source.sqlite")
        let type = EventType(id: ids.next(), name: "Coffee")
        try await source.createEventType(type)
        let definitions = [
            PropertyDefinition(id: ids.next(), eventTypeId: type.id, key: "shots", propertyType: .number),
            PropertyDefinition(
                id: ids.next(), eventTypeId: type.id, key: "milk", propertyType: .select, options: ["oat", "whole"]),
            PropertyDefinition(id: ids.next(), eventTypeId: type.id, key: "brewed", propertyType: .duration),
            PropertyDefinition(id: ids.next(), eventTypeId: type.id, key: "at", propertyType: .date),
        ]
        for d in definitions { try await source.createPropertyDefinition(d) }
        var events: [Event] = []
        for i in 0..<count {
            var e = Event(
                id: ids.next(), eventTypeId: type.id,
                timestamp: Date(timeIntervalSince1970: 1.6e9 + Double(i) * 60 + Double(rng.next() % 1_000) / 1_000),
                notes: i % 3 == 0 ? SearchBenchmarks.note(&rng) + ", \"quoted\"\nline" : nil)
            e.properties = [
                "shots": .number(Double(rng.next() % 40) / 8), "milk": .select(i % 2 == 0 ? "oat" : "whole"),
                "brewed": .duration(Double(rng.next() % 600)),
                "at": .date(Date(timeIntervalSince1970: 1.6e9 + Double(rng.next() % 1_000_000_000) / 1_000)),
            ]
            events.append(e)
        }
        _ = try await source.insertEvents(events)
        let file = dir.appendingPathComponent("archive.json")
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        let clock = ContinuousClock()
        let t0 = clock.now
        _ = try await Archive.write(source, now: Date()) { handle.write(Data($0.utf8)) }
        try handle.close()
        let (target, _) = try SyncBenchmarks.makeStore(dir, name: "archive-target.sqlite")
        _ = try await ArchiveImport(store: target).run(try Data(contentsOf: file))
        let seconds = BenchHarness.seconds(clock.now - t0)
        let before = try await source.eventPage(offset: 0, limit: count + 1, filter: EventFilter()).map(\.value)
        let after = try await target.eventPage(offset: 0, limit: count + 1, filter: EventFilter()).map(\.value)
        let definitionsBack = Set(try await target.propertyDefinitions(ofType: nil).map(\.value))
        let definitionsThere = Set(try await source.propertyDefinitions(ofType: nil).map(\.value))
        let exact = before.count == count && before == after && definitionsBack == definitionsThere
        _ = sourcePool
        return BenchResult(
            suite: "export", name: "archive_round_trip_\(count)_events_with_properties (exact: \(exact))",
            value: seconds, unit: "s", baseline: nil, ratio: nil, target: "exact, field by field", met: exact)
    }
}
