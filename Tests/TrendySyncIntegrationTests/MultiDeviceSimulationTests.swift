import Foundation
import Testing
import TrendyAPI
import TrendyAPITesting
import TrendyLogging
import TrendyModels
import TrendyServer
import TrendyServerTestSupport
import TrendySync
import TrendySyncLive
import TrendyTestSupport

/// A seeded simulation of several devices of one account: each a real `SQLiteLocalStore` and
/// `OutboxSyncEngine` against the real dev server with its faults. Random steps create, edit
/// (random fields), delete and import; devices sync, get killed mid-pass (engine dropped and
/// rebuilt on the same database) or stay offline for a while; the server fails, drops, cuts
/// answers after writing, and rate-limits. At the end faults stop, every device syncs until
/// quiet, and the invariants are checked: identical data everywhere, no edit lost without a
/// conflict record, no resurrection, cursors only forward, nothing stuck.
///
/// Replay one run: `TRENDY_SIM_SEED=<seed> swift test --filter MultiDeviceSimulation`.
/// More seeds: `TRENDY_SIM_SEEDS=<count>` (CI runs a few; `TRENDY_SIM_FIRST_SEED` picks the start).
@Suite(.timeLimit(.minutes(60)))
struct MultiDeviceSimulationTests {
    static var seeds: [UInt64] {
        let env = ProcessInfo.processInfo.environment
        if let one = env["TRENDY_SIM_SEED"].flatMap(UInt64.init) { return [one] }
        let first = env["TRENDY_SIM_FIRST_SEED"].flatMap(UInt64.init) ?? 1
        let count = env["TRENDY_SIM_SEEDS"].flatMap(UInt64.init) ?? 12
        return Array(first..<(first + count))
    }

    @Test func seededDevicesNeverLoseAnEdit() async throws {
        try await Self.run(instances: 1)
    }

    /// The same runs with the devices on two instances of one PostgreSQL-backed server (a
    /// restarted device reaches the other one).
    @Test(.enabled(if: TestDatabase.url != nil, "needs TRENDY_TEST_DATABASE_URL"))
    func seededDevicesOnTwoInstancesNeverLoseAnEdit() async throws {
        try await Self.run(instances: 2)
    }

    static func run(instances: Int) async throws {
        try await SyncHarness.with(instances: instances) { h in
            for seed in Self.seeds {
                var sim = Simulation(seed: seed, harness: h)
                do {
                    try await sim.run()
                } catch {
                    let replay =
                        "TRENDY_SIM_SEED=\(seed) swift test --filter MultiDeviceSimulation (\(instances) instances)"
                    Issue.record("seed \(seed) failed at step \(sim.step): \(error)\nreplay: \(replay)")
                    h.setFaults(FaultConfiguration())
                    return
                }
            }
        }
    }
}

struct SimulationFailure: Error, CustomStringConvertible {
    var description: String
}

/// One run of the simulation.
struct Simulation {
    final class Device {
        let name: String
        let store: SQLiteLocalStore
        /// The device's ways to the server, one per instance; a kill makes every further call
        /// fail, as a dead process sends nothing more.
        let apis: [InterceptingAPIClient]
        /// The instance its connection reaches (a restarted process may reach another).
        var home: Int
        var api: InterceptingAPIClient { apis[home] }
        var engine: OutboxSyncEngine
        var offlineUntil = 0
        var cursors: [Int64] = []
        /// Values this device has had in front of it, per "entity/field" (what it overwrites
        /// knowingly when it edits).
        var seen: [String: Set<String>] = [:]

        init(name: String, store: SQLiteLocalStore, apis: [InterceptingAPIClient], home: Int, engine: OutboxSyncEngine)
        {
            self.name = name
            self.store = store
            self.apis = apis
            self.home = home
            self.engine = engine
        }
    }

    /// A value a device wrote last for an entity's field, and whether another device
    /// knowingly replaced it (it had that value in front of it when it wrote or deleted).
    struct Intent {
        var value: String
        var superseded = false
    }

    let seed: UInt64
    let harness: SyncHarness
    /// This run's own account (so every seed starts empty and costs the same).
    var api: (any TrendyAPIClient)!
    var userId = ""
    var rng: SplitMix64
    var devices: [Device] = []
    var step = 0
    /// "device|entity/field" → the device's last intent.
    var intents: [String: Intent] = [:]
    var deletedIds: Set<String> = []
    /// What happened, step by step (a failure prints the lines about its entity).
    var log: [String] = []
    var typeNames = 0

    init(seed: UInt64, harness: SyncHarness) {
        self.seed = seed
        self.harness = harness
        rng = SplitMix64(seed: seed)
    }

    mutating func int(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
    mutating func chance(_ p: Double) -> Bool { Double(rng.next() % 10_000) / 10_000 < p }

    /// A new engine for this run's account on `store`, calling the server through `api`.
    func engine(on store: SQLiteLocalStore, _ api: any SyncRemote) -> OutboxSyncEngine {
        var c = OutboxSyncEngine.Configuration()
        c.pageSize = 20
        let user = userId
        let clock = harness.clock
        return OutboxSyncEngine(
            store: store, api: api, identity: { user }, configuration: c, now: { clock.now },
            logger: LogSystem.disabled().logger(.sync))
    }

    mutating func run() async throws {
        let h = harness
        h.setFaults(FaultConfiguration())
        h.seedFaults(seed)
        let (client, session) = try await h.account()
        api = client
        userId = session.user.id
        let clients = h.clients(session)
        for i in 0..<(2 + int(2)) {
            let store = try SyncHarness.memoryStore(now: { h.clock.now })
            let apis = clients.map { InterceptingAPIClient($0) }
            let home = i % apis.count
            devices.append(
                Device(name: "d\(i)", store: store, apis: apis, home: home, engine: engine(on: store, apis[home])))
        }
        try await devices[0].store.createEventType(EventType(id: h.ids.next(), name: "Base"))
        let steps = 30 + int(30)
        for s in 0..<steps {
            step = s
            try await randomStep()
            h.clock.advance(65)
        }
        // Quiet: faults off, everyone syncs until nothing moves.
        h.setFaults(FaultConfiguration())
        for _ in 0..<4 {
            for d in devices {
                _ = try await d.store.retryFailed()
                try await syncQuietly(d)
                h.clock.advance(400)
            }
        }
        try await check()
    }

    @discardableResult
    mutating func syncQuietly(_ d: Device) async throws -> SyncRun {
        let run = await d.engine.sync(full: false)
        if let cursor = try await d.store.cursor() { d.cursors.append(cursor) }
        try await observe(d)
        return run
    }

    /// Records what the device now shows, field by field.
    func observe(_ d: Device) async throws {
        for e in try await d.store.events(limit: 100_000, since: nil).map(\.value) {
            for (field, value) in Self.fields(e) { d.seen["\(e.id)/\(field)", default: []].insert(value) }
        }
        for g in try await d.store.geofences().map(\.value) {
            for (field, value) in Self.fields(g) { d.seen["\(g.id)/\(field)", default: []].insert(value) }
        }
    }

    static func fields(_ e: Event) -> [(String, String)] {
        [
            ("notes", e.notes ?? "∅"), ("timestamp", String(Int64(e.timestamp.timeIntervalSince1970 * 1000))),
        ]
    }

    static func fields(_ g: Geofence) -> [(String, String)] { [("name", g.name), ("radius", String(g.radius))] }

    /// The device writes `value` to `entity/field`, knowingly replacing what it has seen there.
    /// Records the fields an update changed (from `before` to `after`) as `d`'s writes.
    mutating func wroteChanges(
        _ d: Device, _ entity: String, from before: [(String, String)], to after: [(String, String)]
    ) {
        let old = Dictionary(uniqueKeysWithValues: before)
        for (field, value) in after where old[field] != value { wrote(d, entity, field, value) }
    }

    mutating func wrote(_ d: Device, _ entity: String, _ field: String, _ value: String) {
        let key = "\(entity)/\(field)"
        supersedeSeen(by: d, key)
        intents["\(d.name)|\(key)"] = Intent(value: value)
        log.append("\(step) \(d.name) wrote \(key)=\(value) cursor \(d.cursors.last ?? -1)")
        d.seen[key, default: []].insert(value)
    }

    mutating func randomStep() async throws {
        let h = harness
        let d = devices[int(devices.count)]
        let events = try await d.store.events(limit: 100_000, since: nil).map(\.value)
        let types = try await d.store.eventTypes().map(\.value)
        let geofences = try await d.store.geofences().map(\.value)
        switch int(100) {
        case 0..<18:
            guard let type = types.randomElement(using: &rng) else { return }
            let e = Event(
                id: h.ids.next(), eventTypeId: type.id,
                timestamp: Date(timeIntervalSince1970: 1.7e9 + Double(int(1 << 30)) / 1000),
                notes: "n\(int(1000))")
            try await d.store.createEvent(e)
            for (field, value) in Self.fields(e) { wrote(d, e.id.description, field, value) }
        case 18..<45:
            guard var e = events.randomElement(using: &rng) else { return }
            let before = Self.fields(e)
            let which = int(3)
            if which != 1 { e.notes = chance(0.1) ? nil : "\(d.name)-\(step)-\(int(100))" }
            if which != 0 {
                e.timestamp = Date(timeIntervalSince1970: 1.7e9 + Double(int(1 << 30)) / 1000)
            }
            try await d.store.updateEvent(e)
            wroteChanges(d, e.id.description, from: before, to: Self.fields(e))
        case 45..<52:
            guard let e = events.randomElement(using: &rng) else { return }
            try await d.store.deleteEvent(id: e.id)
            deleted(d, e.id.description, Self.fields(e).map(\.0))
        case 52..<55:
            typeNames += 1
            try await d.store.createEventType(EventType(id: h.ids.next(), name: "T\(seed)-\(typeNames)"))
        case 55..<58:
            guard let type = types.randomElement(using: &rng) else { return }
            let batch = (0..<(1 + int(60))).map { _ in
                Event(
                    id: h.ids.next(), eventTypeId: type.id,
                    timestamp: Date(timeIntervalSince1970: 1.7e9 + Double(int(1 << 30)) / 1000), sourceType: .imported)
            }
            let summary = try await d.store.insertEvents(batch)
            log.append(
                "\(step) \(d.name) imported \(summary.inserted): \(batch.map(\.id.description).joined(separator: ","))")
        case 58..<62:
            let g = Geofence(
                id: h.ids.next(), name: "g\(int(100))", center: Coordinate(latitude: 52, longitude: 13),
                radius: Double(100 + int(400)))
            try await d.store.createGeofence(g)
            for (field, value) in Self.fields(g) { wrote(d, g.id.description, field, value) }
        case 62..<67:
            guard var g = geofences.randomElement(using: &rng) else { return }
            let before = Self.fields(g)
            if chance(0.5) { g.name = "\(d.name)-g\(step)" } else { g.radius = Double(100 + int(400)) }
            try await d.store.updateGeofence(g)
            wroteChanges(d, g.id.description, from: before, to: Self.fields(g))
        case 67..<69:
            guard let g = geofences.randomElement(using: &rng) else { return }
            try await d.store.deleteGeofence(id: g.id)
            deleted(d, g.id.description, Self.fields(g).map(\.0))
        case 69..<73:
            // Killed mid-pass: from a random moment on, nothing more reaches the server (a dead
            // process sends nothing); the engine is dropped and a new one starts on the database.
            let doomed = d.engine
            let pass = Task { await doomed.sync(full: false) }
            try await Task.sleep(for: .milliseconds(int(8)))
            d.api.fail(nil, with: .transport(.connectionLost("the process was killed")), times: 100_000)
            _ = await pass.value
            d.api.clearScript()
            log.append("\(step) \(d.name) killed (a whole pass) cursor \(try await d.store.cursor() ?? -1)")
            // Whatever the pass got to apply is in front of the person now.
            if let cursor = try await d.store.cursor() { d.cursors.append(cursor) }
            try await observe(d)
            d.home = (d.home + 1) % d.apis.count
            d.engine = engine(on: d.store, d.api)
        case 73..<77:
            d.offlineUntil = step + 3 + int(8)
        case 77..<85:
            var faults = FaultConfiguration()
            if chance(0.6) {
                faults.errorRate = 0.15
                faults.dropRate = 0.05
                faults.cutRate = 0.1
                faults.forced429Count = chance(0.3) ? 2 : 0
            }
            h.setFaults(faults)
            log.append("\(step) faults \(faults.errorRate > 0 ? "on" : "off")")
        default:
            guard d.offlineUntil <= step else { return }
            let before = d.cursors.last ?? 0
            let run = try await syncQuietly(d)
            log.append(
                "\(step) \(d.name) sync \(run.outcome) pushed \(run.pushed) pulled \(run.pulled) \(run.error ?? "") "
                    + "cursor \(d.cursors.last ?? -1)")
            if let after = d.cursors.last, after < before {
                throw SimulationFailure(description: "\(d.name)'s cursor moved back from \(before) to \(after)")
            }
        }
    }

    /// A delete knowingly replaces every value the deleting device has seen.
    mutating func deleted(_ d: Device, _ id: String, _ fields: [String]) {
        deletedIds.insert(id)
        log.append("\(step) \(d.name) deleted \(id)")
        for field in fields {
            let key = "\(id)/\(field)"
            supersedeSeen(by: d, key)
            intents["\(d.name)|\(key)"]?.superseded = true
        }
    }

    /// Other devices' last values of `key` that `d` had in front of it are knowingly replaced.
    mutating func supersedeSeen(by d: Device, _ key: String) {
        for other in devices where other !== d {
            if let intent = intents["\(other.name)|\(key)"], d.seen[key]?.contains(intent.value) == true {
                intents["\(other.name)|\(key)"]?.superseded = true
            }
        }
    }

    func check() async throws {
        let server = try await serverState()
        var conflicts: [SyncConflict] = []
        for d in devices {
            let local = try await localState(d.store)
            if local != server {
                let onlyHere = local.subtracting(server).sorted().prefix(4)
                let onlyThere = server.subtracting(local).sorted().prefix(4)
                if let id = (onlyHere.first ?? onlyThere.first)?.split(separator: "/").first {
                    let x = try await d.store.explain(entityId: String(id))
                    print(
                        "SIMULATION LOG seed \(seed)\n"
                            + log.filter { $0.contains(id) || $0.contains(" sync ") || $0.contains("kill") }.joined(
                                separator: "\n") + "\nexplain: \(x)\nconflicts:")
                }
                throw SimulationFailure(
                    description: "\(d.name) differs from the server: only here \(onlyHere), only there \(onlyThere)")
            }
            let counts = try await d.store.outboxCounts()
            if counts.pending > 0 {
                throw SimulationFailure(description: "\(d.name) still has \(counts.pending) pending change(s)")
            }
            for failed in try await d.store.failedChanges() where failed.error.isEmpty {
                throw SimulationFailure(description: "\(d.name) has a failed change without a reason: \(failed)")
            }
            for (a, b) in zip(d.cursors, d.cursors.dropFirst()) where b < a {
                throw SimulationFailure(description: "\(d.name)'s cursor moved back from \(a) to \(b)")
            }
            conflicts += try await d.store.conflicts(includeClosed: true).map(\.conflict)
        }
        let resurrected = deletedIds.filter { id in server.contains { $0.hasPrefix(id) } }
        if !resurrected.isEmpty { throw SimulationFailure(description: "deleted and back: \(resurrected.sorted())") }
        // Every device's last value for every field: current, kept as a conflict, or knowingly replaced.
        let current = Dictionary(
            server.map { line -> (String, String) in
                let parts = line.split(separator: "=", maxSplits: 1)
                return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
            }, uniquingKeysWith: { a, _ in a })
        for (key, intent) in intents where !intent.superseded {
            let entityField = String(key.split(separator: "|")[1])
            let parts = entityField.split(separator: "/")
            let (id, field) = (String(parts[0]), String(parts[1]))
            if current[entityField] == intent.value { continue }
            let kept = conflicts.contains { c in
                guard c.entityId == id else { return false }
                if c.kind == .deleted { return true }
                return c.field == Self.wireName(field) && Self.matches(c.lostValue, field: field, intent.value)
            }
            if !kept {
                let story = log.filter {
                    $0.contains(id) || $0.contains(" sync ") || $0.contains("kill") || $0.contains("fault")
                }
                let conflictList = conflicts.filter { $0.entityId == id }.map {
                    "\($0.kind) \($0.field ?? "") lost \($0.lostValue)"
                }
                var feedCursor: Int64 = 0
                while true {
                    let page = try await api.changes(since: feedCursor, limit: 1000)
                    for c in page.changes where c.entityId == id || c.entityType == .conflict {
                        var what = ""
                        if case .event(let e) = c.data {
                            what = "notes=\(e.value.notes ?? "∅") ts=\(e.value.timestamp)"
                        }
                        print("FEED \(c.cursor) \(c.entityType.rawValue) \(c.operation.rawValue) \(what)")
                    }
                    feedCursor = page.nextCursor
                    if !page.hasMore { break }
                }
                for d in devices {
                    print("EXPLAIN \(d.name): \(try await d.store.explain(entityId: id))")
                    print(
                        "HISTORY \(d.name): \(try await d.engine.history().map { "\($0.outcome) \($0.pushed)/\($0.pulled) \($0.error ?? "")" })"
                    )
                }
                print("SIMULATION LOG seed \(seed)\n" + story.joined(separator: "\n") + "\nconflicts: \(conflictList)")
                throw SimulationFailure(
                    description:
                        "\(key): its last value \(intent.value) is neither current (\(current[entityField] ?? "gone")) nor in a conflict"
                )
            }
        }
    }

    static func wireName(_ field: String) -> String { field }

    /// Whether a conflict's JSON value is the simulation's value of `field`.
    static func matches(_ json: String, field: String, _ value: String) -> Bool {
        let any = try? JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed])
        switch field {
        case "notes": return (any as? String ?? "∅") == value
        case "timestamp":
            guard let text = any as? String, let date = ISO8601.parse(text) else { return false }
            return String(Int64(date.timeIntervalSince1970 * 1000)) == value
        case "radius": return (any as? Double).map { String($0) } == value
        default: return (any as? String) == value
        }
    }

    /// "id/field=value" lines of everything the server holds (events, geofences, types).
    func serverState() async throws -> Set<String> {
        var lines: Set<String> = []
        var after: String?
        while true {
            let page = try await api.listEvents(limit: 500, after: after)
            for e in page.items.map(\.value) { lines.formUnion(Self.lines(e)) }
            guard page.hasMore, let next = page.next else { break }
            after = next
        }
        for g in try await api.listGeofences(active: nil).map(\.value) { lines.formUnion(Self.lines(g)) }
        for t in try await api.listEventTypes().map(\.value) { lines.insert("\(t.id)/name=\(t.name)") }
        return lines
    }

    func localState(_ store: SQLiteLocalStore) async throws -> Set<String> {
        var lines: Set<String> = []
        for e in try await store.events(limit: 1_000_000, since: nil).map(\.value) { lines.formUnion(Self.lines(e)) }
        for g in try await store.geofences().map(\.value) { lines.formUnion(Self.lines(g)) }
        for t in try await store.eventTypes().map(\.value) { lines.insert("\(t.id)/name=\(t.name)") }
        return lines
    }

    static func lines(_ e: Event) -> [String] {
        fields(e).map { "\(e.id)/\($0.0)=\($0.1)" } + ["\(e.id)/type=\(e.eventTypeId)"]
    }

    static func lines(_ g: Geofence) -> [String] { fields(g).map { "\(g.id)/\($0.0)=\($0.1)" } }
}
