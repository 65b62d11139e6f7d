import AsyncHTTPClient
import Foundation
import GRDB
import TrendyAPI
import TrendyAPILive
import TrendyInsightsLive
import TrendyLogging
import TrendyModels
import TrendyServer
import TrendySync
import TrendySyncLive

/// Sync figures: local write latency, first screen under a huge store and outbox, push vs a
/// bare client, pull-and-apply, main-actor responsiveness during a sync, and peak memory.
enum SyncBenchmarks {
    struct Rig {
        let api: LiveTrendyAPIClient
        let userId: String
        /// Where the server runs: `separate process` (the client gets its own core, as on a
        /// phone) or `in process` when the `trendy-server` binary is not next to this one.
        let placement: String
        /// The server's process id when it runs apart (for its CPU time).
        let serverPid: Int32?
        /// Signs up another account on the same server (a measurement that must not see the
        /// events an earlier one left).
        let newAccount: @Sendable () async throws -> Account
    }

    /// An account on the rig's server and a client signed in to it.
    struct Account {
        let api: LiveTrendyAPIClient
        let userId: String
    }

    /// The `trendy-server` built next to this binary, if any.
    static func serverBinary() -> URL? {
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let candidate = here.appendingPathComponent("trendy-server")
        return FileManager.default.isExecutableFile(atPath: candidate.path) ? candidate : nil
    }

    /// Starts `trendy-server` as a child process and waits for its "listening on" line.
    static func spawnServer(_ binary: URL, db: URL) throws -> (Process, URL) {
        try spawnServer(binary, database: ["--db", db.path])
    }

    /// Starts `trendy-server` with `database` (`--db FILE` or `--database URL`).
    static func spawnServer(_ binary: URL, database: [String]) throws -> (Process, URL) {
        let process = Process()
        process.executableURL = binary
        process.arguments =
            ["--port", "0", "--bcrypt-cost", "4", "--api-burst", "1000000", "--api-rate", "1000000"]
            + ["--auth-burst", "1000", "--log-level", "error"] + database
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var buffer = Data()
        let reader = out.fileHandleForReading
        while true {
            let chunk = reader.availableData
            if chunk.isEmpty { throw BenchError.serverDidNotStart }
            buffer.append(chunk)
            let text = String(decoding: buffer, as: UTF8.self)
            if let range = text.range(of: "listening on "), let end = text[range.upperBound...].firstIndex(of: "\n") {
                guard let url = URL(string: String(text[range.upperBound..<end])) else {
                    throw BenchError.serverDidNotStart
                }
                // Keep draining so the child never blocks on a full pipe.
                Thread.detachNewThread { while !reader.availableData.isEmpty {} }
                return (process, url)
            }
        }
    }

    enum BenchError: Error {
        case serverDidNotStart
        /// The server refused an event of a benchmark's batch (the figure would be wrong).
        case batchFailed(String)
        /// A sync pass the benchmark needed did not end `ok`.
        case passFailed(String)
    }

    /// Starts the dev server, signs up a user and runs `body` against it; the server is stopped and
    /// the client shut down however `body` ends.
    static func withRig<T>(_ dir: URL, _ body: (Rig) async throws -> T) async throws -> T {
        let baseURL: URL
        let placement: String
        let serverPid: Int32?
        let stopServer: @Sendable () async -> Void
        if let binary = serverBinary() {
            let (process, url) = try spawnServer(binary, db: dir.appendingPathComponent("server.sqlite"))
            baseURL = url
            placement = "separate process"
            serverPid = process.processIdentifier
            stopServer = {
                process.terminate()
                process.waitUntilExit()
            }
        } else {
            let running = try await BenchHarness.startServer(in: dir) {
                $0.apiRateLimit = RateLimit(capacity: 1_000_000, refillPerSecond: 1_000_000)
            }.running
            baseURL = running.baseURL
            placement = "in process"
            serverPid = nil
            stopServer = { await running.stop() }
        }
        return try await BenchHarness.ensuring(
            {
                try await BenchHarness.withHTTPClient { http in
                    let signUp: @Sendable () async throws -> Account = {
                        let session = try await ServerBenchmarks.signUp(http, baseURL)
                        let api = LiveTrendyAPIClient(
                            configuration: .init(baseURL: baseURL, budget: NetworkBudget(request: .seconds(120))),
                            http: http,
                            tokens: StaticTokenProvider(session.accessToken), logger: LogSystem.disabled().logger(.api))
                        return Account(api: api, userId: session.user.id)
                    }
                    let first = try await signUp()
                    return try await body(
                        Rig(
                            api: first.api, userId: first.userId, placement: placement, serverPid: serverPid,
                            newAccount: signUp))
                }
            }, cleanup: stopServer)
    }

    /// `asBeforeD62`: writes at GRDB's default QoS (`userInitiated`) instead of the app's utility queue.
    static func makeStore(_ dir: URL, name: String, asBeforeD62: Bool = false) throws -> (
        SQLiteLocalStore, DatabasePool
    ) {
        var migrator = DatabaseMigrator()
        SyncSchema.register(in: &migrator)
        // The app's store has the insights plugin's triggers on every event row too (issue 34).
        InsightSchema.register(in: &migrator)
        var config = Configuration()
        // As the app opens its database (AppDatabase).
        let path = dir.appendingPathComponent(name).path
        LocalDatabaseSettings.apply(to: &config, path: path)
        if asBeforeD62 { config.writeTargetQueue = nil }
        let pool = try DatabasePool(path: path, configuration: config)
        try migrator.migrate(pool)
        // As the app hands the insights plugin's aggregates to the store for bulk loads (D63, D67).
        let derived = DerivedFromEvents(
            begin: InsightSchema.bulkLoadBegin, end: InsightSchema.bulkLoadEnd, present: InsightSchema.bulkLoadPresent,
            inParts: InsightSchema.bulkLoadInParts)
        return (
            SQLiteLocalStore(database: pool, derived: [derived], logger: LogSystem.disabled().logger(.data)), pool
        )
    }

    static func events(_ n: Int, type: UUIDv7, ids: UUIDv7Generator, start: Date) -> [Event] {
        (0..<n).map {
            Event(
                id: ids.next(), eventTypeId: type, timestamp: start.addingTimeInterval(Double($0)), notes: "n\($0)",
                sourceType: .imported)
        }
    }

    static func run(smoke: Bool, size: Int?) async throws -> [BenchResult] {
        var results: [BenchResult] = []
        let dir = BenchHarness.temporaryDirectory("sync")
        defer { try? FileManager.default.removeItem(at: dir) }
        let ids = UUIDv7Generator()

        // 1. Local write + enqueue.
        do {
            let (store, _) = try makeStore(dir, name: "writes.sqlite")
            let type = EventType(id: ids.next(), name: "T")
            try await store.createEventType(type)
            var samples: [Double] = []
            let clock = ContinuousClock()
            for i in 0..<(smoke ? 100 : 3_000) {
                let e = Event(id: ids.next(), eventTypeId: type.id, timestamp: Date().addingTimeInterval(Double(i)))
                let t0 = clock.now
                try await store.createEvent(e)
                samples.append(BenchHarness.seconds(clock.now - t0) * 1000)
            }
            let p95 = BenchHarness.percentile(samples, 95)
            results.append(
                BenchResult(
                    suite: "sync", name: "local_write_p50", value: BenchHarness.percentile(samples, 50), unit: "ms",
                    baseline: nil, ratio: nil, target: "report", met: nil))
            results.append(
                BenchResult(
                    suite: "sync", name: "local_write_p95", value: p95, unit: "ms", baseline: nil, ratio: nil,
                    target: "≤ 1 ms", met: p95 <= 1))
        }

        // 2. First screen with a huge store and outbox vs an empty store.
        do {
            let total = smoke ? 10_000 : (size ?? 1_000_000)
            let pending = total / 10
            let (big, bigPool) = try makeStore(dir, name: "big.sqlite")
            let (empty, _) = try makeStore(dir, name: "empty.sqlite")
            let (small, smallPool) = try makeStore(dir, name: "small.sqlite")
            let type = EventType(id: ids.next(), name: "T")
            try await big.createEventType(type)
            try await empty.createEventType(type)
            try await small.createEventType(type)
            try await fill(bigPool, type: type.id, events: total, pending: pending, ids: ids)
            try await fill(smallPool, type: type.id, events: 1_000, pending: 100, ids: ids)
            func firstScreen(_ store: SQLiteLocalStore) async throws -> Double {
                var samples: [Double] = []
                let clock = ContinuousClock()
                for _ in 0..<(smoke ? 5 : 50) {
                    let t0 = clock.now
                    _ = try await store.events(limit: 50, since: nil)
                    _ = try await store.outboxCounts()
                    samples.append(BenchHarness.seconds(clock.now - t0) * 1000)
                }
                return BenchHarness.percentile(samples, 50)
            }
            let emptyMs = try await firstScreen(empty)
            let smallMs = try await firstScreen(small)
            let bigMs = try await firstScreen(big)
            results.append(
                BenchResult(
                    suite: "sync", name: "first_screen_\(total)_events_\(pending)_pending", value: bigMs, unit: "ms",
                    baseline: emptyMs, ratio: bigMs / emptyMs,
                    target: "≤ 50 ms, ratio ≤ 1.2 (ratio is of sub-ms times)",
                    met: bigMs <= 50))
            // The same screen (50 events to show) from a store a thousandth the size: how much of
            // the cost grows with the store rather than with the screen.
            results.append(
                BenchResult(
                    suite: "sync", name: "first_screen_\(total)_events vs 1,000 events 100 pending", value: bigMs,
                    unit: "ms", baseline: smallMs, ratio: bigMs / smallMs, target: "report", met: nil))
        }

        // 3–5. Push, main-actor responsiveness and pull, against the real server on loopback.
        try await withRig(dir) { rig in
            let clock = ContinuousClock()
            let userId = rig.userId
            do {
                let n = smoke ? 500 : (size.map { min($0, 20_000) } ?? 20_000)
                let type = try await rig.api.createEventType(
                    EventTypeCreate(id: ids.next(), name: "Push"), idempotencyKey: nil)
                // Rounds alternate the baseline (the same batches as the engine's straight from a
                // client, no local bookkeeping), the engine, and the engine with batches of 50 (as
                // before D66), so a noisy moment on this shared machine hits all alike; the figure
                // is the median round.
                let rounds = smoke ? 1 : 5
                let per = n / rounds
                let batch = OutboxSyncEngine.Configuration().batchSize
                var baselineRates: [Double] = []
                var engineRates: [Double] = []
                var ratios: [Double] = []
                var before: [Double] = []
                for round in 0..<rounds {
                    let baselineEvents = events(
                        per, type: type.value.id, ids: ids, start: Date().addingTimeInterval(-9e6 + Double(round) * 1e5)
                    )
                    let b0 = clock.now
                    for chunk in stride(from: 0, to: per, by: batch) {
                        _ = try await rig.api.createEvents(
                            Array(baselineEvents[chunk..<min(chunk + batch, per)]), idempotencyKey: nil)
                    }
                    let baselineRate = Double(per) / BenchHarness.seconds(clock.now - b0)
                    var rates: [Double] = []
                    for (leg, size) in [batch, 50].enumerated() {
                        let (store, _) = try makeStore(dir, name: "push-\(round)-\(leg).sqlite")
                        _ = try await store.claim(for: rig.userId)
                        let local = EventType(id: ids.next(), name: "Local \(round) \(leg)")
                        try await store.createEventType(local)
                        let start = Date().addingTimeInterval(-5e6 + Double(round) * 1e5 + Double(leg) * 5e4)
                        _ = try await store.insertEvents(events(per, type: local.id, ids: ids, start: start))
                        var configuration = OutboxSyncEngine.Configuration()
                        configuration.batchSize = size
                        let engine = OutboxSyncEngine(
                            store: store, api: rig.api, identity: { userId }, configuration: configuration,
                            logger: LogSystem.disabled().logger(.sync))
                        // Timed from the push's start: this device has never pulled, so its pass
                        // first downloads the account, the baseline's events among them (D65).
                        let p0 = clock.now
                        let span = pushSpan(of: engine)
                        let run = await engine.sync(full: false)
                        let (start0, end) = await span.value
                        rates.append(Double(run.pushed) / BenchHarness.seconds(end - (start0 ?? p0)))
                    }
                    baselineRates.append(baselineRate)
                    engineRates.append(rates[0])
                    ratios.append(rates[0] / baselineRate)
                    before.append(rates[0] / rates[1])
                }
                let ratio = BenchHarness.median(ratios)
                results.append(
                    BenchResult(
                        suite: "sync",
                        name: "push_throughput (batches of \(batch), server in \(rig.placement), median of \(rounds) "
                            + "alternating rounds; ratios \(ratios.sorted().map { String(format: "%.2f", $0) }.joined(separator: " ")); "
                            + "against the engine's batches of 50 before D66: "
                            + "\(before.sorted().map { String(format: "%.2f", $0) }.joined(separator: " ")))",
                        value: BenchHarness.median(engineRates), unit: "events/s",
                        baseline: BenchHarness.median(baselineRates),
                        ratio: ratio, target: "ratio ≥ 0.9", met: ratio >= 0.9))
            }
            // 5. A device with 100,000 events waiting syncs them all (the download of the account,
            // then the push and the feed after it, D65; before D65 the push, then the download of
            // everything, its own events included) while a main-actor job is scheduled every millisecond: first at the
            // priority an app runs its passes at (`SyncPriority.pass`, D62), then the same sync at
            // the interactive path's own priority with GRDB's default write QoS (as before D62),
            // same run.
            let n = smoke ? 1_000 : (size.map { min($0, 100_000) } ?? 100_000)
            let idle = try await tick(for: .milliseconds(smoke ? 100 : 2_000)) {}.lateness
            var p99s: [UInt8: Double] = [:]
            // What the first sync downloaded before its push (D65): the second account is given as
            // many events on the server first, so both syncs do the same work.
            var downloaded = 0
            for priority in [SyncPriority.pass, TaskPriority.medium] {
                // The first sync goes to the rig's account (the pull below reads its feed, as it
                // always has); the second to a fresh one, so it does the same work.
                let account =
                    priority == SyncPriority.pass
                    ? Account(api: rig.api, userId: rig.userId) : try await rig.newAccount()
                if priority != SyncPriority.pass, downloaded > 1 {
                    let type = try await account.api.createEventType(
                        EventTypeCreate(id: ids.next(), name: "Existing"), idempotencyKey: nil
                    ).value
                    let existing = events(
                        downloaded - 1, type: type.id, ids: ids, start: Date().addingTimeInterval(-3e7))
                    for chunk in stride(from: 0, to: existing.count, by: 500) {
                        _ = try await account.api.createEvents(
                            Array(existing[chunk..<min(chunk + 500, existing.count)]), idempotencyKey: nil)
                    }
                }
                // The comparison is the code before D62: GRDB's default QoS for writes too.
                let (store, _) = try makeStore(
                    dir, name: "full-sync-\(priority.rawValue).sqlite", asBeforeD62: priority == .medium)
                _ = try await store.claim(for: account.userId)
                let local = EventType(id: ids.next(), name: "Backlog")
                try await store.createEventType(local)
                _ = try await store.insertEvents(
                    events(n, type: local.id, ids: ids, start: Date().addingTimeInterval(-2e7)))
                let engine = OutboxSyncEngine(
                    store: store, api: account.api, identity: { account.userId },
                    logger: LogSystem.disabled().logger(.sync))
                // Control: a plain dispatch timer on the main thread under the same load, no Swift
                // concurrency involved; its lateness is the platform's own wake-up latency.
                let control = MainQueueTimer()
                control.start()
                let c0 = CPUSnapshot.take()
                let (lateness, run) = try await tick(priority: priority) { await engine.sync(full: false) }
                if priority == SyncPriority.pass { downloaded = run.pulled }
                let steal = c0.until(.take()).stealPercent
                let platform = control.stop()
                let p99 = BenchHarness.percentile(lateness, 99)
                p99s[priority.rawValue] = p99
                let label =
                    "during a \(n)-event sync at \(Self.name(priority)) (pushed \(run.pushed), downloaded "
                    + "\(run.pulled); " + String(format: "steal %.0f%%)", steal)
                let controlP99 = BenchHarness.percentile(platform, 99)
                let ratio = p99 / max(controlP99, 0.001)
                let judged = priority == SyncPriority.pass
                results.append(
                    BenchResult(
                        suite: "sync", name: "main_actor_max_delay \(label)", value: lateness.max() ?? 0, unit: "ms",
                        baseline: idle.max(), ratio: nil, target: judged ? "≤ 8 ms" : "report",
                        met: judged ? (lateness.max() ?? 0) <= 8 : nil))
                results.append(
                    BenchResult(
                        suite: "sync", name: "main_actor_p99_delay \(label), against the control timer",
                        value: p99, unit: "ms", baseline: controlP99, ratio: ratio,
                        target: judged ? "ratio ≤ 1.1" : "report", met: judged ? ratio <= 1.1 : nil))
                results.append(
                    BenchResult(
                        suite: "sync", name: "main_thread_dispatch_timer_max_delay (control, same sync)",
                        value: platform.max() ?? 0, unit: "ms", baseline: lateness.max(), ratio: nil,
                        target: "report (baseline column: the main actor's max above)", met: nil))
            }
            if let low = p99s[SyncPriority.pass.rawValue], let medium = p99s[TaskPriority.medium.rawValue] {
                results.append(
                    BenchResult(
                        suite: "sync",
                        name: "main_actor_p99_delay, sync at \(Self.name(SyncPriority.pass)) vs at medium",
                        value: low, unit: "ms", baseline: medium, ratio: low / max(medium, 0.001), target: "report",
                        met: nil))
            }
            do {
                // 4. Pull and apply: fresh devices read the whole feed (cursor 0, no bootstrap),
                // alternating with the bare read of the same feed (server + HTTP + decode, nothing
                // applied); medians of the rounds.
                var pullRates: [Double] = []
                var indexedRates: [Double] = []
                var readRates: [Double] = []
                var readCPU: [CPUSnapshot] = []
                let pageSize = OutboxSyncEngine.Configuration().pageSize
                var pullCPU: [CPUSnapshot] = []
                var sample: ChangesPage?
                var feed = 0
                for round in 0..<(smoke ? 1 : 3) {
                    let r0 = clock.now
                    let c0 = CPUSnapshot.take(other: rig.serverPid)
                    var cursor: Int64 = 0
                    var read = 0
                    while true {
                        let page = try await rig.api.changes(since: cursor, limit: pageSize)
                        read += page.changes.count
                        cursor = page.nextCursor
                        if page.changes.count == pageSize { sample = page }
                        if !page.hasMore || page.changes.isEmpty { break }
                    }
                    readRates.append(Double(read) / BenchHarness.seconds(clock.now - r0))
                    readCPU.append(c0.until(.take(other: rig.serverPid)))
                    feed = read

                    // A fresh device (no events: a bulk load) and one already holding the feed's first
                    // 50 changes (every row goes through the indexes), in alternating order.
                    for holding in round % 2 == 0 ? [false, true] : [true, false] {
                        let (fresh, _) = try makeStore(dir, name: "pull-\(round)-\(holding).sqlite")
                        _ = try await fresh.claim(for: rig.userId)
                        if holding { _ = try await fresh.apply(rig.api.changes(since: 0, limit: 50)) }
                        try await fresh.setCursor(0, force: true)
                        let puller = OutboxSyncEngine(
                            store: fresh, api: rig.api, identity: { userId }, logger: LogSystem.disabled().logger(.sync)
                        )
                        let q0 = clock.now
                        let cpu0 = CPUSnapshot.take(other: rig.serverPid)
                        let pulled = await puller.sync(full: false)
                        let rate = Double(pulled.pulled) / BenchHarness.seconds(clock.now - q0)
                        if holding {
                            indexedRates.append(rate)
                        } else {
                            pullRates.append(rate)
                            pullCPU.append(cpu0.until(.take(other: rig.serverPid)))
                        }
                    }
                }
                // Where a pulled change's client time goes: decoding a page, and applying it (pages
                // of the sample applied one after another to a fresh store, as a fresh device does).
                if let sample {
                    let data = try TrendyJSON.encoder().encode(sample)
                    let decodeNs = BenchHarness.nanosecondsPerOperation(iterations: smoke ? 2 : 40) { n in
                        for _ in 0..<n { precondition(ChangesPage.fastRead(data) != nil) }
                    }
                    let wire = try await rig.api.changes(since: sample.changes[0].cursor - 1, limit: pageSize)
                    let (target, _) = try makeStore(dir, name: "apply.sqlite")
                    let pages = smoke ? 2 : 40
                    var copies: [ChangesPage] = []
                    for _ in 0..<pages {
                        var copy = wire
                        for i in copy.changes.indices {
                            guard case .event(let e) = copy.changes[i].data else { continue }
                            var event = e.value
                            event.id = ids.next()
                            copy.changes[i].data = .event(
                                Timestamped(event, createdAt: e.createdAt, updatedAt: e.updatedAt))
                            copy.changes[i].dataJSON = event.wireJSON(createdAt: e.createdAt, updatedAt: e.updatedAt)
                        }
                        copies.append(copy)
                    }
                    let a0 = clock.now
                    for page in copies { _ = try await target.apply(page) }
                    let applyMicros = BenchHarness.seconds(clock.now - a0) * 1e6 / Double(pages * wire.changes.count)
                    results.append(
                        BenchResult(
                            suite: "sync", name: "pull_client_cost_per_change (decode / apply)",
                            value: decodeNs / 1_000 / Double(sample.changes.count), unit: "µs decode",
                            baseline: applyMicros, ratio: nil, target: "report (baseline column: µs apply)", met: nil))
                    // The same pages into empty stores as a bulk load (D30, D63: the event indexes and the
                    // aggregates' triggers down, built once at the end, included) against row by row
                    // (every trigger per row), alternating, best of each.
                    var bulkMicros: [Double] = []
                    var rowMicros: [Double] = []
                    for attempt in 0..<(smoke ? 1 : 4) {
                        let bulk = attempt % 2 == 0
                        let (empty, _) = try makeStore(dir, name: "apply-empty-\(attempt).sqlite")
                        let e0 = clock.now
                        if bulk { _ = try await empty.beginBulkLoad() }
                        for page in copies { _ = try await empty.apply(page) }
                        if bulk { try await empty.endBulkLoad() }
                        let micros = BenchHarness.seconds(clock.now - e0) * 1e6 / Double(pages * wire.changes.count)
                        if bulk { bulkMicros.append(micros) } else { rowMicros.append(micros) }
                    }
                    if let bulk = bulkMicros.min(), let row = rowMicros.min() {
                        results.append(
                            BenchResult(
                                suite: "sync",
                                name: "apply_into_an_empty_store (\(pages * wire.changes.count) changes): bulk load "
                                    + "(indexes and aggregates built at the end) vs row by row",
                                value: bulk, unit: "µs a change", baseline: row, ratio: bulk / row, target: "report",
                                met: nil))
                    }
                }
                let pullRate = BenchHarness.median(pullRates)
                let readRate = BenchHarness.median(readRates)
                results.append(
                    BenchResult(
                        suite: "sync",
                        name: "pull_apply_throughput (\(feed) changes, server in \(rig.placement), median of "
                            + "\(pullRates.count) rounds)",
                        value: pullRate, unit: "changes/s", baseline: readRate, ratio: pullRate / readRate,
                        target: "≥ 50,000 changes/s", met: pullRate >= 50_000))
                // Who spends the CPU of a pulled change (both processes share this machine's cores),
                // and how much of the machine the hypervisor took meanwhile.
                let readCost = CPUSnapshot.sum(readCPU).perItem(feed * readCPU.count)
                let pulled = CPUSnapshot.sum(pullCPU)
                let pullCost = pulled.perItem(feed * pullCPU.count)
                results.append(
                    BenchResult(
                        suite: "sync",
                        name: String(
                            format:
                                "pull_cpu_per_change (client; baseline: server; bare read %.1f / %.1f; steal %.0f%%)",
                            readCost.own, readCost.other, pulled.stealPercent),
                        value: pullCost.own, unit: "µs", baseline: pullCost.other, ratio: nil, target: "report",
                        met: nil))
                // A new device as it really starts: no cursor, so the bootstrap (`/events` pages of
                // 500 into an empty store: a bulk load), then the feed from the latest cursor.
                var bootstrapRates: [Double] = []
                var bootstrapCPU: [CPUSnapshot] = []
                var bootstrapped = 0
                // A last round (not timed) in which the user opens the app meanwhile: the first screen
                // is read every 20 ms while the download runs, and once its first page is stored an
                // event is logged every 20 ms.
                let rounds = smoke ? 1 : 2
                var screenDuring: [Double] = []
                var screenAfter: [Double] = []
                var writesDuring: [Double] = []
                for round in 0...rounds {
                    let (fresh, _) = try makeStore(dir, name: "bootstrap-\(round).sqlite")
                    _ = try await fresh.claim(for: rig.userId)
                    let device = OutboxSyncEngine(
                        store: fresh, api: rig.api, identity: { userId }, logger: LogSystem.disabled().logger(.sync))
                    guard round < rounds else {
                        let reader = Task.detached { try await firstScreens(fresh, every: .milliseconds(20)) }
                        let writer = Task.detached { try await writesDuringDownload(fresh, ids: ids) }
                        _ = await device.sync(full: false)
                        reader.cancel()
                        writer.cancel()
                        screenDuring = try await reader.value
                        writesDuring = try await writer.value
                        screenAfter = try await firstScreens(fresh, count: 50)
                        break
                    }
                    let b0 = clock.now
                    let c0 = CPUSnapshot.take(other: rig.serverPid)
                    let run = await device.sync(full: false)
                    bootstrapRates.append(Double(run.pulled) / BenchHarness.seconds(clock.now - b0))
                    bootstrapCPU.append(c0.until(.take(other: rig.serverPid)))
                    bootstrapped += run.pulled
                }
                let bootstrapCost = CPUSnapshot.sum(bootstrapCPU).perItem(bootstrapped)
                let bootstrapRate = BenchHarness.median(bootstrapRates)
                results.append(
                    BenchResult(
                        suite: "sync",
                        name: "bootstrap_throughput (a new device: no cursor, /events pages of 500, median of "
                            + "\(bootstrapRates.count) rounds; "
                            + String(
                                format: "CPU µs per event: client %.1f, server %.1f)", bootstrapCost.own,
                                bootstrapCost.other),
                        value: bootstrapRate, unit: "events/s", baseline: pullRate, ratio: bootstrapRate / pullRate,
                        target: "report (baseline column: the feed pull above)", met: nil))
                let after = BenchHarness.percentile(screenAfter, 50)
                let during = BenchHarness.percentile(screenDuring, 50)
                results.append(
                    BenchResult(
                        suite: "sync",
                        name: "first_screen_p50_during_the_bootstrap (read every 20 ms in another round, "
                            + "\(screenDuring.count) reads; "
                            + String(
                                format: "p99 %.2f, max %.2f ms)", BenchHarness.percentile(screenDuring, 99),
                                screenDuring.max() ?? 0),
                        value: during, unit: "ms", baseline: after, ratio: during / max(after, 0.001),
                        target: "report (baseline column: p50 on the same store once downloaded)", met: nil))
                results.append(
                    BenchResult(
                        suite: "sync",
                        name: "local_write_p95_during_the_bootstrap (one every 20 ms in the same round, "
                            + "\(writesDuring.count) writes; "
                            + String(
                                format: "p50 %.2f, max %.2f ms)", BenchHarness.percentile(writesDuring, 50),
                                writesDuring.max() ?? 0),
                        value: BenchHarness.percentile(writesDuring, 95), unit: "ms", baseline: nil, ratio: nil,
                        target: "report (a write waits for the page being stored, at the end for the index build)",
                        met: nil))
                let indexedRate = BenchHarness.median(indexedRates)
                results.append(
                    BenchResult(
                        suite: "sync",
                        name: "pull_apply_throughput_into_a_store_with_events (indexes kept, same rounds)",
                        value: indexedRate, unit: "changes/s", baseline: pullRate, ratio: indexedRate / pullRate,
                        target: "report (baseline column: the fresh device's bulk load above)", met: nil))
            }
        }
        results.append(
            BenchResult(
                suite: "sync", name: "peak_rss_whole_suite", value: Double(peakRSSKilobytes()) / 1024, unit: "MB",
                baseline: nil, ratio: nil, target: "report (see memory note)", met: nil))
        return results
    }

    /// Writes `events` synced rows and `pending` pending rows with outbox entries, with raw SQL
    /// (setting up state, not measuring the store).
    static func fill(_ pool: DatabasePool, type: UUIDv7, events: Int, pending: Int, ids: UUIDv7Generator) async throws {
        let start = Date().addingTimeInterval(-Double(events) * 60)
        for chunkStart in stride(from: 0, to: events, by: 50_000) {
            try await pool.write { db in
                let insert = try db.makeStatement(
                    sql: """
                        INSERT INTO local_events (id, event_type_id, timestamp_ms, source_type, body, sync_status)
                        VALUES (?, ?, ?, 'imported', ?, ?)
                        """)
                let outbox = try db.makeStatement(
                    sql: """
                        INSERT INTO outbox (entity, entity_id, kind, payload, idempotency_key, created_at)
                        VALUES ('event', ?, 'create', ?, ?, 0)
                        """)
                for i in chunkStart..<min(chunkStart + 50_000, events) {
                    let event = Event(
                        id: ids.next(), eventTypeId: type, timestamp: start.addingTimeInterval(Double(i) * 60),
                        sourceType: .imported)
                    let body =
                        #"{"id":"\#(event.id)","event_type_id":"\#(type)","timestamp":"\#(ISO8601.format(event.timestamp))","source_type":"imported"}"#
                    let isPending = i >= events - pending
                    try insert.execute(arguments: [
                        event.id.description, type.description, Int64(event.timestamp.timeIntervalSince1970 * 1000),
                        body,
                        isPending ? "pending" : "synced",
                    ])
                    if isPending {
                        try outbox.execute(arguments: [event.id.description, body, UUID().uuidString])
                    }
                }
            }
        }
    }

    static func peakRSSKilobytes() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Int(usage.ru_maxrss)
    }
}

extension SyncBenchmarks {
    /// When the engine's push ends (it turns to pulling).
    static func pushEnd(of engine: OutboxSyncEngine) -> Task<ContinuousClock.Instant, Never> {
        let span = pushSpan(of: engine)
        return Task.detached { await span.value.end }
    }

    /// When the push of `engine`'s next pass begins and ends (the pull after it begins). A first
    /// pass downloads before it pushes (D65): the pulling phase before the push is not its end.
    static func pushSpan(of engine: OutboxSyncEngine) -> Task<
        (start: ContinuousClock.Instant?, end: ContinuousClock.Instant), Never
    > {
        let updates = engine.statusUpdates()
        return Task.detached {
            var start: ContinuousClock.Instant?
            for await s in updates {
                switch s.phase {
                case .pushing: if start == nil { start = ContinuousClock.now }
                case .pulling: if start != nil { return (start, ContinuousClock.now) }
                default: break
                }
            }
            return (start, ContinuousClock.now)
        }
    }

    /// Durations in ms of reading the first screen (the 50 newest events), `count` times or
    /// every `every` until cancelled.
    static func firstScreens(_ store: SQLiteLocalStore, count: Int = .max, every: Duration = .zero) async throws
        -> [Double]
    {
        let clock = ContinuousClock()
        var samples: [Double] = []
        while samples.count < count && !Task.isCancelled {
            let t0 = clock.now
            do {
                _ = try await store.events(limit: 50, since: nil)
            } catch is CancellationError {
                break  // GRDB refuses to start a read in a cancelled task: the sampling is over.
            }
            samples.append(BenchHarness.seconds(clock.now - t0) * 1000)
            if every > .zero { try? await Task.sleep(for: every) }
        }
        return samples
    }

    /// Durations in ms of logging an event every 20 ms, from when the download's first page is in
    /// `store` (so the writes cannot stop the download from being a bulk load) until cancelled.
    static func writesDuringDownload(_ store: SQLiteLocalStore, ids: UUIDv7Generator) async throws -> [Double] {
        let clock = ContinuousClock()
        var samples: [Double] = []
        // GRDB refuses to start a read or write in a cancelled task: a CancellationError from any
        // of these is the end of the sampling, not a failure.
        do {
            while try await store.events(limit: 1, since: nil).isEmpty {
                if Task.isCancelled { return [] }
                try? await Task.sleep(for: .milliseconds(2))
            }
            let type = EventType(id: ids.next(), name: "Logged during the download")
            try await store.createEventType(type)
            while !Task.isCancelled {
                let event = Event(id: ids.next(), eventTypeId: type.id, timestamp: Date())
                let t0 = clock.now
                try await store.createEvent(event)
                samples.append(BenchHarness.seconds(clock.now - t0) * 1000)
                try? await Task.sleep(for: .milliseconds(20))
            }
        } catch is CancellationError {}
        return samples
    }

    /// A priority as Swift names it in code (`TaskPriority`'s description says `low` for utility).
    static func name(_ priority: TaskPriority) -> String {
        switch priority {
        case .background: "background"
        case .utility: "utility"
        case .medium: "medium"
        case .userInitiated: "userInitiated"
        default: "priority \(priority.rawValue)"
        }
    }

    /// Runs `work` (off the main actor, at `priority`) while a main-actor ticker runs, for at least
    /// `minimum`; returns the ticker's lateness samples in milliseconds.
    static func tick<T: Sendable>(
        for minimum: Duration = .zero, priority: TaskPriority? = nil, _ work: @escaping @Sendable () async -> T
    ) async throws -> (lateness: [Double], result: T) {
        let ticker = MainActorTicker()
        let tick = Task { @MainActor in await ticker.run() }
        let clock = ContinuousClock()
        let start = clock.now
        // Heard through a stream, not `.value`: awaiting the task would escalate it to this
        // task's priority (Swift does, on Linux too), and the priority asked for would not hold.
        let (results, finished) = AsyncStream.makeStream(of: T.self)
        Task.detached(priority: priority) {
            finished.yield(await work())
            finished.finish()
        }
        var heard = results.makeAsyncIterator()
        guard let result = await heard.next() else { throw CancellationError() }
        let left = minimum - (clock.now - start)
        if left > .zero { try await Task.sleep(for: left) }
        await ticker.stop()
        _ = await tick.value
        return (await ticker.lateness, result)
    }
}

/// Schedules a main-actor job every millisecond and records how late each one ran.
@MainActor
final class MainActorTicker {
    var lateness: [Double] = []
    var running = true

    func run() async {
        let clock = ContinuousClock()
        while running {
            let expected = clock.now.advanced(by: .milliseconds(1))
            try? await Task.sleep(until: expected, clock: clock)
            lateness.append(max(0, BenchHarness.seconds(clock.now - expected) * 1000))
        }
    }

    func stop() { running = false }
}

/// A dispatch timer on the main queue every millisecond, recording how late each fire was: the
/// same measure as ``MainActorTicker`` without Swift concurrency, as a control.
final class MainQueueTimer: @unchecked Sendable {
    private let timer = DispatchSource.makeTimerSource(queue: .main)
    private let lock = NSLock()
    private var lateness: [Double] = []

    func start() {
        let clock = ContinuousClock()
        var expected = clock.now.advanced(by: .milliseconds(1))
        timer.schedule(deadline: .now() + .milliseconds(1), repeating: .milliseconds(1), leeway: .nanoseconds(0))
        timer.setEventHandler { [self] in
            let now = clock.now
            let late = max(0, BenchHarness.seconds(now - expected) * 1000)
            lock.withLock { lateness.append(late) }
            expected = now.advanced(by: .milliseconds(1))
        }
        timer.resume()
    }

    /// Stops the timer and returns its lateness samples in milliseconds.
    func stop() -> [Double] {
        timer.cancel()
        return lock.withLock { lateness }
    }
}
