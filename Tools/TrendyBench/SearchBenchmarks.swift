import Foundation
import GRDB
import TrendyModels
import TrendySync
import TrendySyncLive

/// Finding things in a big store (issue 33): a text search's first page through the full-text
/// index against the scan it replaced (the same words, `LIKE` over the time index, in the same
/// run); a type and time range's page; and a write with a note and a property, which the index's
/// triggers now follow in the same transaction.
enum SearchBenchmarks {
    /// Words of notes: a few common, many rare (a Zipf-like draw), so a search meets every density.
    static let vocabulary: [String] = (0..<3_000).map { i in
        let syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "qu"]
        var word = ""
        var n = i + 17
        repeat {
            word += syllables[n % 10]
            n /= 10
        } while n > 0
        return word
    }

    static func note(_ rng: inout SplitMix64) -> String {
        (0..<(2 + Int(rng.next() % 6))).map { _ in
            // Squaring a uniform draw favours the first words: "kalo" is common, the last rare.
            let u = Double(rng.next() % 1_000_000) / 1_000_000
            return vocabulary[Int(u * u * u * Double(vocabulary.count))]
        }.joined(separator: " ")
    }

    static func run(smoke: Bool, size: Int?) async throws -> [BenchResult] {
        let total = smoke ? 5_000 : (size ?? 1_000_000)
        let dir = BenchHarness.temporaryDirectory("search")
        defer { try? FileManager.default.removeItem(at: dir) }
        let ids = UUIDv7Generator()
        let (store, pool) = try SyncBenchmarks.makeStore(dir, name: "search.sqlite")
        let types = (0..<5).map { EventType(id: ids.next(), name: "Type\($0)") }
        for t in types { try await store.createEventType(t) }
        var rng = SplitMix64(seed: 33)
        let clock = ContinuousClock()
        let filled = clock.now
        try await fill(pool, total: total, types: types.map(\.id), ids: ids, rng: &rng)
        let fillSeconds = BenchHarness.seconds(clock.now - filled)
        var results = [
            BenchResult(
                suite: "search", name: "fill_\(total)_events_with_the_index (s)", value: fillSeconds, unit: "s",
                baseline: nil, ratio: nil, target: "report", met: nil)
        ]
        // Words at every density: the most common, middling, rare, and two words at once.
        let words = [vocabulary[0], vocabulary[3], vocabulary[40], vocabulary[400], vocabulary[2_900]]
        var indexed: [Double] = []
        var scanned: [Double] = []
        for round in 0..<(smoke ? 1 : 20) {
            for (i, word) in words.enumerated() {
                let text = i == words.count - 1 && round % 2 == 0 ? "\(words[1]) \(words[2])" : word
                let t0 = clock.now
                _ = try await store.eventPage(offset: 0, limit: 50, filter: EventFilter(text: text))
                indexed.append(BenchHarness.seconds(clock.now - t0) * 1000)
                let t1 = clock.now
                _ = try await scan(pool, text.split(separator: " ").map(String.init))
                scanned.append(BenchHarness.seconds(clock.now - t1) * 1000)
            }
        }
        let p95 = BenchHarness.percentile(indexed, 95)
        let scanP95 = BenchHarness.percentile(scanned, 95)
        results.append(
            BenchResult(
                suite: "search", name: "text_search_first_page_p95 (\(total) events; baseline: the LIKE scan)",
                value: p95, unit: "ms", baseline: scanP95, ratio: p95 / scanP95, target: "≤ 20 ms", met: p95 <= 20))
        var ranged: [Double] = []
        for round in 0..<(smoke ? 5 : 100) {
            let since = Date(timeIntervalSince1970: 1.6e9 + Double(round % 50) * Double(total) * 0.6)
            let filter = EventFilter(
                typeId: types[round % types.count].id, since: since, until: since.addingTimeInterval(14 * 86_400))
            let t0 = clock.now
            _ = try await store.eventPage(offset: 0, limit: 50, filter: filter)
            ranged.append(BenchHarness.seconds(clock.now - t0) * 1000)
        }
        let rangeP95 = BenchHarness.percentile(ranged, 95)
        results.append(
            BenchResult(
                suite: "search", name: "type_and_range_page_p95", value: rangeP95, unit: "ms", baseline: nil,
                ratio: nil, target: "≤ 5 ms", met: rangeP95 <= 5))
        // The same writes into a store without the index's triggers, alternating, as the baseline.
        let (plain, plainPool) = try SyncBenchmarks.makeStore(dir, name: "plain.sqlite")
        try await plain.createEventType(types[0])
        try await plainPool.write { db in
            for suffix in ["insert", "update", "delete"] {
                try db.execute(sql: "DROP TRIGGER local_events_search_\(suffix)")
            }
        }
        let (writes, plainWrites) = try await BenchHarness.alternatingWrites(store, plain, count: smoke ? 100 : 4_000) {
            i in
            var e = Event(
                id: ids.next(), eventTypeId: types[0].id, timestamp: Date().addingTimeInterval(Double(i)),
                notes: note(&rng))
            e.properties = ["mood": .text(vocabulary[i % 100])]
            return e
        }
        let writeP95 = BenchHarness.percentile(writes, 95)
        let plainP95 = BenchHarness.percentile(plainWrites, 95)
        results.append(
            BenchResult(
                suite: "search",
                name: "write_with_note_and_property_p95 (indexed in the same transaction; baseline: no index)",
                value: writeP95, unit: "ms", baseline: plainP95, ratio: writeP95 / plainP95, target: "≤ 0.5 ms",
                met: writeP95 <= 0.5))
        return results
    }

    /// The scan the index replaced: every word in the note, newest first, through the time index.
    static func scan(_ pool: DatabasePool, _ words: [String]) async throws -> Int {
        try await pool.read { db in
            let conditions = words.map { _ in "lower(coalesce(json_extract(body, '$.notes'), '')) LIKE ?" }
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT body FROM local_events WHERE \(conditions.joined(separator: " AND "))
                    ORDER BY timestamp_ms DESC, id DESC LIMIT 50
                    """, arguments: StatementArguments(words.map { "%\($0)%" })
            ).count
        }
    }

    /// `total` events a minute apart with notes and, on every fifth, a property; the index's
    /// triggers fill it as the rows go in.
    static func fill(_ pool: DatabasePool, total: Int, types: [UUIDv7], ids: UUIDv7Generator, rng: inout SplitMix64)
        async throws
    {
        let start = Date(timeIntervalSince1970: 1.6e9)
        for chunk in stride(from: 0, to: total, by: 20_000) {
            var rows: [(String, String, Int64, String)] = []
            for i in chunk..<min(chunk + 20_000, total) {
                var event = Event(
                    id: ids.next(), eventTypeId: types[i % types.count],
                    timestamp: start.addingTimeInterval(Double(i) * 60),
                    notes: note(&rng), sourceType: .imported)
                if i % 5 == 0 { event.properties = ["mood": .select(vocabulary[Int(rng.next() % 50)])] }
                rows.append(
                    (
                        event.id.description, event.eventTypeId.description,
                        Int64(event.timestamp.timeIntervalSince1970 * 1000), event.wireJSON()
                    ))
            }
            try await insertSynced(pool, rows)
        }
    }

    /// Rows (id, type id, timestamp in ms, body) straight into `local_events` as synced imports,
    /// in one transaction: the triggers run as for any write, the store's checks do not.
    static func insertSynced(_ pool: DatabasePool, _ rows: [(String, String, Int64, String)]) async throws {
        try await pool.write { db in
            let insert = try db.makeStatement(
                sql: """
                    INSERT INTO local_events (id, event_type_id, timestamp_ms, source_type, body, sync_status)
                    VALUES (?, ?, ?, 'imported', ?, 'synced')
                    """)
            for row in rows { try insert.execute(arguments: [row.0, row.1, row.2, row.3]) }
        }
    }
}
