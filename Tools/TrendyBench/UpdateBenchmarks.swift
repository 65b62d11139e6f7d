import Foundation
import GRDB
import TrendyAPI
import TrendyLogging
import TrendyModels
import TrendySync
import TrendySyncLive

/// Field-level updates (D37) against whole-entity updates in the same run: one device edits the
/// note of every event and syncs; alternately, the same edits are sent as the old whole-entity
/// updates (every field, no base: what the outbox queued before). Push (the updates reaching the
/// server) and pull (the server's resulting changes applied back) are timed separately; medians
/// of the rounds. Edits go in batches (`POST /events/edits`, issue 35); each round also pushes as
/// many new events, so the edit push rate is compared with the create push rate of the same run.
enum UpdateBenchmarks {
    enum Mode: String, CaseIterable {
        case fieldLevel = "field-level"
        case wholeEntity = "whole-entity"
    }

    static func run(smoke: Bool) async throws -> [BenchResult] {
        let dir = BenchHarness.temporaryDirectory("updates")
        defer { try? FileManager.default.removeItem(at: dir) }
        let ids = UUIDv7Generator()
        let n = smoke ? 100 : 5_000
        let rounds = smoke ? 1 : 5
        return try await SyncBenchmarks.withRig(dir) { rig in
            let (store, pool) = try SyncBenchmarks.makeStore(dir, name: "updates.sqlite")
            // The update figures apply the server's changes back (this device's own: another device's
            // cost the same to apply), so this engine pulls its echoes; `echoEngine` leaves them out (D57).
            var pullsBack = OutboxSyncEngine.Configuration()
            pullsBack.omitsOwnChanges = false
            let engine = OutboxSyncEngine(
                store: store, api: rig.api, identity: { rig.userId }, configuration: pullsBack,
                logger: LogSystem.disabled().logger(.sync))
            let echoEngine = OutboxSyncEngine(
                store: store, api: rig.api, identity: { rig.userId }, logger: LogSystem.disabled().logger(.sync))
            let type = EventType(id: ids.next(), name: "T")
            try await store.createEventType(type)
            var events = SyncBenchmarks.events(n, type: type.id, ids: ids, start: Date().addingTimeInterval(-1e6))
            _ = try await store.insertEvents(events)
            let first = await engine.sync(full: false)
            guard first.outcome == .ok else {
                throw SyncBenchmarks.BenchError.passFailed("the first sync failed: \(first.error ?? "")")
            }
            var push: [Mode: [Double]] = [:]
            var pull: [Mode: [Double]] = [:]
            var creates: [Double] = []
            // The pull after an edit pass: its own edits pulled back against left out (D57).
            var echoPull: [Double] = []
            var omittedPull: [Double] = []
            var omittedApplied = 0
            // A person's edits on this device, one transaction each (what a bulk edit in the app does).
            var localEdits: [Double] = []
            for round in 0..<rounds {
                let fresh = SyncBenchmarks.events(
                    n, type: type.id, ids: ids, start: Date().addingTimeInterval(-2e6 - Double(round * n)))
                _ = try await store.insertEvents(fresh)
                let createEnd = SyncBenchmarks.pushEnd(of: engine)
                let c0 = ContinuousClock.now
                let created = await engine.sync(full: false)
                guard created.outcome == .ok, created.pushed == n else {
                    throw SyncBenchmarks.BenchError.passFailed("a create pass failed: \(created.error ?? "")")
                }
                creates.append(Double(n) / BenchHarness.seconds(await createEnd.value - c0))
                // Alternate which mode goes first, so drift on a shared machine hits both alike.
                for mode in round % 2 == 0 ? Mode.allCases : Mode.allCases.reversed() {
                    let e0 = ContinuousClock.now
                    for i in events.indices {
                        events[i].notes = "\(mode.rawValue) \(round) \(i)"
                        try await store.updateEvent(events[i])
                    }
                    localEdits.append(Double(n) / BenchHarness.seconds(ContinuousClock.now - e0))
                    if mode == .wholeEntity {
                        let whole = Dictionary(uniqueKeysWithValues: events.map { ($0.id.description, $0) })
                        try await pool.write { db in
                            for row in try Row.fetchAll(db, sql: "SELECT seq, entity_id FROM outbox") {
                                guard let e = whole[row["entity_id"]] else { continue }
                                try db.execute(
                                    sql: "UPDATE outbox SET payload = ?, base_version = NULL WHERE seq = ?",
                                    arguments: [
                                        FieldPatch.text(try FieldPatch.object(EventUpdate(everyFieldOf: e))),
                                        row["seq"] as Int64,
                                    ])
                            }
                        }
                    }
                    let clock = ContinuousClock()
                    let pushEnd = SyncBenchmarks.pushEnd(of: engine)
                    let t0 = clock.now
                    let run = await engine.sync(full: false)
                    let t1 = clock.now
                    let pushed = await pushEnd.value
                    guard run.outcome == .ok, run.pushed == n else {
                        throw SyncBenchmarks.BenchError.passFailed(
                            "an update pass failed: \(run.outcome) \(run.error ?? "") pushed \(run.pushed)")
                    }
                    push[mode, default: []].append(Double(n) / BenchHarness.seconds(pushed - t0))
                    pull[mode, default: []].append(Double(run.pulled) / BenchHarness.seconds(t1 - pushed))
                    if mode == .fieldLevel { echoPull.append(BenchHarness.seconds(t1 - pushed) * 1000) }
                }
                for i in events.indices {
                    events[i].notes = "left out \(round) \(i)"
                    try await store.updateEvent(events[i])
                }
                let pushEnd = SyncBenchmarks.pushEnd(of: echoEngine)
                let run = await echoEngine.sync(full: false)
                let t1 = ContinuousClock.now
                let pushed = await pushEnd.value
                guard run.outcome == .ok, run.pushed == n else {
                    throw SyncBenchmarks.BenchError.passFailed("an edit pass failed: \(run.error ?? "")")
                }
                omittedPull.append(BenchHarness.seconds(t1 - pushed) * 1000)
                omittedApplied += run.pulled
            }
            var results: [BenchResult] = []
            let edits = BenchHarness.median(push[.fieldLevel] ?? [])
            let create = BenchHarness.median(creates)
            results.append(
                BenchResult(
                    suite: "updates",
                    name:
                        "edit_push_throughput (\(n) note edits, batched; baseline: \(n) creates pushed, median of \(rounds))",
                    value: edits, unit: "edits/s", baseline: create, ratio: edits / create,
                    target: "≥ 10,000/s and ratio ≥ 0.5", met: edits >= 10_000 && edits / create >= 0.5))
            for (name, rates) in [("update_push_throughput", push), ("update_pull_apply_throughput", pull)] {
                let field = BenchHarness.median(rates[.fieldLevel] ?? [])
                let whole = BenchHarness.median(rates[.wholeEntity] ?? [])
                results.append(
                    BenchResult(
                        suite: "updates",
                        name: "\(name) (\(n) note edits, field-level; baseline: whole-entity, median of \(rounds))",
                        value: field, unit: "changes/s", baseline: whole, ratio: field / whole,
                        target: "ratio ≥ 0.9", met: field / whole >= 0.9))
            }
            let local = BenchHarness.median(localEdits)
            results.append(
                BenchResult(
                    suite: "updates",
                    name:
                        "local_edit_throughput (\(n) note edits on this device, one transaction each; "
                        + "baseline: the same edits pushed, median of \(2 * rounds))",
                    value: local, unit: "edits/s", baseline: edits, ratio: local / edits, target: "report",
                    met: nil))
            let omitted = BenchHarness.median(omittedPull)
            let echoed = BenchHarness.median(echoPull)
            results.append(
                BenchResult(
                    suite: "updates",
                    name:
                        "pull_after_own_edits (\(n) note edits pushed, own changes left out, \(omittedApplied) applied; "
                        + "baseline: pulled back, median of \(rounds))",
                    value: omitted, unit: "ms", baseline: echoed, ratio: omitted / max(echoed, 0.001),
                    target: "nothing pulled back", met: omittedApplied == 0))
            return results
        }
    }
}
