import Foundation
import GRDB
import TrendyGeofence
import TrendyGeofenceLive
import TrendyLogging
import TrendyModels
import TrendySync
import TrendySyncLive

/// Geofence figures: planning 10,000 geofences down to 20, and replay throughput with 1,000
/// geofences through the whole live path (simulated monitor → manager → ledger → SQLite).
enum GeofenceBenchmarks {
    static let center = Coordinate(latitude: 52.52, longitude: 13.405)

    static func geofences(_ n: Int, spreadMetres: Double, ids: UUIDv7Generator) -> [Geofence] {
        var rng = BenchRandom(seed: 11)
        let degrees = spreadMetres / 111_195
        return (0..<n).map { i in
            Geofence(
                id: ids.next(), name: "Place \(i)",
                center: Coordinate(
                    latitude: center.latitude + Double.random(in: -degrees...degrees, using: &rng),
                    longitude: center.longitude + Double.random(in: -degrees...degrees, using: &rng) * 1.6),
                radius: Double.random(in: 50...300, using: &rng))
        }
    }

    static func run(smoke: Bool) async throws -> [BenchResult] {
        var results: [BenchResult] = []
        results += plan(count: smoke ? 500 : 10_000, smoke: smoke)
        results += try await replay(geofences: smoke ? 100 : 1_000, fixes: smoke ? 2_000 : 500_000)
        return results
    }

    /// Planning at launch: 10,000 saved geofences, 20 slots, the device moved since the last plan.
    static func plan(count: Int, smoke: Bool) -> [BenchResult] {
        let ids = UUIDv7Generator()
        let all = geofences(count, spreadMetres: 30_000, ids: ids)
        let prepared = all.map(PlannerGeofence.init)
        let planner = GeofencePlanner(capacity: 20)
        let before = planner.plan(geofences: prepared, location: center, monitored: [])
        let monitored = before.add
        let moved = Coordinate(latitude: center.latitude + 0.02, longitude: center.longitude)
        var sink = 0
        let iterations = smoke ? 20 : 400
        let planNs = BenchHarness.nanosecondsPerOperation(iterations: iterations) { n in
            for _ in 0..<n {
                sink &+= planner.plan(geofences: prepared, location: moved, monitored: monitored).add.count
            }
        }
        // From stored values (the unit vectors computed on the way), as the manager plans.
        let fromValuesNs = BenchHarness.nanosecondsPerOperation(iterations: iterations) { n in
            for _ in 0..<n {
                sink &+=
                    planner.plan(geofences: all.map(PlannerGeofence.init), location: moved, monitored: monitored)
                    .add.count
            }
        }
        // Baseline: the obvious version — haversine to every geofence, sort everything, take 19.
        let naiveNs = BenchHarness.nanosecondsPerOperation(iterations: max(2, iterations / 10)) { n in
            for _ in 0..<n {
                let ranked = all.sorted {
                    ($0.distanceToEdge(from: moved), $0.id) < ($1.distanceToEdge(from: moved), $1.id)
                }
                sink &+= ranked.prefix(19).count
            }
        }
        if sink == 42 { print("") }
        let planMs = planNs / 1e6
        let fromValuesMs = fromValuesNs / 1e6
        return [
            BenchResult(
                suite: "geofence", name: "plan_\(count)_to_20", value: planMs, unit: "ms", baseline: naiveNs / 1e6,
                ratio: planNs / naiveNs, target: "≤ 1 ms", met: planMs <= 1),
            BenchResult(
                suite: "geofence", name: "plan_\(count)_to_20_from_values", value: fromValuesMs, unit: "ms",
                baseline: naiveNs / 1e6, ratio: fromValuesNs / naiveNs, target: "≤ 1 ms", met: fromValuesMs <= 1),
        ]
    }

    /// A trip at 10 m/s (city driving) with one fix a second through a city of `geofences` places, fed through
    /// the simulated monitor with the manager, ledger and SQLite behind it (every crossing is a
    /// transaction; every refresh-region exit a re-plan). Baseline: the monitor alone with nothing
    /// listening, which is the floor for the same fixes.
    static func replay(geofences count: Int, fixes: Int) async throws -> [BenchResult] {
        let logger = LogSystem.disabled().logger(.geofence)
        let folder = BenchHarness.temporaryDirectory("geofence")
        defer { try? FileManager.default.removeItem(at: folder) }
        var migrator = DatabaseMigrator()
        SyncSchema.register(in: &migrator)
        GeofenceSchema.register(in: &migrator)
        let database = try DatabasePool(path: folder.appendingPathComponent("db.sqlite").path)
        try migrator.migrate(database)
        let ids = UUIDv7Generator()
        let store = SQLiteLocalStore(database: database, logger: logger)
        let type = EventType(id: ids.next(), name: "Visit", color: "#123456", icon: "pin")
        try await store.createEventType(type)
        // A metro area: 1,000 places over 40 × 40 km, one every ~1.3 km on average.
        let places = geofences(count, spreadMetres: 20_000, ids: ids).map { g -> Geofence in
            var g = g
            g.entryEventTypeId = type.id
            return g
        }
        for g in places { try await store.createGeofence(g) }
        let track = walk(fixes)

        let monitor = SimulatedRegionMonitor(file: nil, logger: logger)
        let manager = GeofenceManager(
            monitor: monitor, geofences: SavedGeofences(store),
            ledger: SQLiteVisitLedger(local: store, ids: ids, logger: logger),
            inbox: FileRegionEventInbox(directory: folder.appendingPathComponent("inbox"), logger: logger),
            logger: logger)
        await monitor.setAuthorization(.always)
        await monitor.update(track[0])
        await manager.start()
        await monitor.settled(by: manager)
        let summary = try await LocationReplayer(speed: nil).replay(
            track, into: monitor, afterEvents: { _ in await monitor.settled(by: manager) })
        let handled = await manager.handledThisRun()
        let created = handled.filter { $0.outcome == .created }.count
        let replans = handled.isEmpty ? 0 : summary.events - handled.count
        await manager.stop()

        // The floor: the same fixes into a monitor with the same 20 regions and no listener.
        let bare = SimulatedRegionMonitor(file: nil, logger: logger)
        await bare.setAuthorization(.always)
        for region in await monitor.monitoredRegions() { try await bare.startMonitoring(region) }
        let clock = ContinuousClock()
        let t0 = clock.now
        for fix in track { await bare.update(fix) }
        let bareSeconds = BenchHarness.seconds(clock.now - t0)

        let rate = Double(fixes) / summary.seconds
        let bareRate = Double(fixes) / bareSeconds
        return [
            BenchResult(
                suite: "geofence",
                name: "replay_fixes_per_s_\(count)_geofences (\(created) visits, \(replans) other events)",
                value: rate, unit: "fixes/s", baseline: bareRate, ratio: rate / bareRate, target: "≥ 100,000 fixes/s",
                met: rate >= 100_000)
        ]
    }

    /// A trip that wanders around the centre: 10 m a fix, turning a little each step.
    static func walk(_ n: Int) -> [LocationFix] {
        var rng = BenchRandom(seed: 5)
        var lat = center.latitude
        var lon = center.longitude
        var heading = 0.0
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        var out: [LocationFix] = []
        out.reserveCapacity(n)
        for i in 0..<n {
            heading += Double.random(in: -0.3...0.3, using: &rng)
            // Drift back towards the centre so the walk stays in the city.
            let back = atan2(center.latitude - lat, (center.longitude - lon) / 1.6)
            if hypot(center.latitude - lat, (center.longitude - lon) / 1.6) > 0.15 { heading = back }
            lat += sin(heading) * 10 / 111_195
            lon += cos(heading) * 10 / 111_195 * 1.6
            out.append(
                LocationFix(Coordinate(latitude: lat, longitude: lon), time: start.addingTimeInterval(Double(i))))
        }
        return out
    }
}

/// A deterministic random source so every run measures the same inputs.
typealias BenchRandom = SplitMix64
