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
/// `OutboxSyncEngine` against the real dev server with its faults. Each step draws one of every
/// operation a person or the system does: events logged (also at the same type and time on
/// several devices), edited (notes, time, type), deleted and imported (overlapping files);
/// event types created, renamed, recoloured and deleted with their cascades; geofences created,
/// edited and deleted with entry and exit types other devices delete; conflicts restored and
/// dismissed; sign-out and sign-in; a device killed at any request of a pass (drawn as a call
/// count, so it replays) or offline for a while; the server failing, dropping, cutting answers
/// after writing and rate-limiting from a seeded generator. At the end faults stop, each device's
/// person takes the way out of every change the server refused, everyone syncs until quiet, and
/// the invariants are checked: every device equals the server (types, geofences, events), no
/// value a person set is lost without a conflict record, no resurrection, cursors only forward,
/// nothing pending, nothing failed.
///
/// Replay one run: `TRENDY_SIM_SEED=<seed> swift test --filter MultiDeviceSimulation`.
/// More seeds: `TRENDY_SIM_SEEDS=<count>` (CI runs a few; `TRENDY_SIM_FIRST_SEED` picks the start);
/// `TRENDY_SIM_TRACE=1` prints every run's steps (a failing run's too).
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
            // A long run goes on past a failing seed (each is its own account), up to 20 failures.
            var failures = 0
            for seed in Self.seeds {
                var sim = Simulation(seed: seed, harness: h)
                do {
                    try await sim.run()
                    // `TRENDY_SIM_TRACE=1` prints a passing run's steps too (to compare two builds' runs).
                    if ProcessInfo.processInfo.environment["TRENDY_SIM_TRACE"] != nil {
                        print(sim.log.map { "trace \(seed) \($0)" }.joined(separator: "\n"))
                    }
                } catch {
                    if ProcessInfo.processInfo.environment["TRENDY_SIM_TRACE"] != nil {
                        print(sim.log.map { "trace \(seed) \($0)" }.joined(separator: "\n"))
                    }
                    let replay =
                        "TRENDY_SIM_SEED=\(seed) swift test --filter MultiDeviceSimulation (\(instances) instances)"
                    Issue.record("seed \(seed) failed at step \(sim.step): \(error)\nreplay: \(replay)")
                    h.setFaults(FaultConfiguration())
                    failures += 1
                    if failures == 20 { return }
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
        /// Who is signed in (nil while signed out): what the engine asks before every step.
        let identity: IdentityBox
        var offlineUntil = 0
        var cursors: [Int64] = []
        /// Values this device has had in front of it, per "entity/field" (what it overwrites
        /// knowingly when it edits).
        var seen: [String: Set<String>] = [:]

        init(
            name: String, store: SQLiteLocalStore, apis: [InterceptingAPIClient], home: Int, identity: IdentityBox,
            engine: OutboxSyncEngine
        ) {
            self.name = name
            self.store = store
            self.apis = apis
            self.home = home
            self.identity = identity
            self.engine = engine
        }
    }

    /// A value a device wrote last for an entity's field, and whether another device
    /// knowingly replaced it (it had that value in front of it when it wrote or deleted).
    struct Intent {
        var value: String
        var superseded = false
        /// When it was written, among all writes of the run.
        var order = 0
    }

    /// Every entity a device shows, as "id" → field → value (the simulation's own spelling).
    typealias Snapshot = [String: [String: String]]

    let seed: UInt64
    let harness: SyncHarness
    /// This run's own account (so every seed starts empty and costs the same).
    var api: (any TrendyAPIClient)!
    var userId = ""
    var rng: SplitMix64
    /// The generator of the property steps (see ``randomStep()``).
    var propertyRng: SplitMix64
    /// The generator of the join steps (``joinStep()``), their own for the same reason.
    var joinRng: SplitMix64
    /// The account's clients, one per instance (a device that joins gets its own wrappers).
    var clients: [any TrendyAPIClient] = []
    var devices: [Device] = []
    /// How many devices the run began with: the other steps draw among these, so a device that
    /// joins later does not change what they draw.
    var founders = 0
    var step = 0
    /// "device|entity/field" → the device's last intent.
    var intents: [String: Intent] = [:]
    /// Entities a person deleted directly (a type's cascade is not: the server's cascade decides).
    var deletedIds: Set<String> = []
    /// The device that deleted each of `deletedIds` by hand.
    var deletedBy: [String: String] = [:]
    /// Intents ("device|entity/field") moved to a definition their device's own was adopted into.
    var adoptedKeys: Set<String> = []
    /// Event types deleted: every reference to one goes with it.
    var deletedTypes: Set<String> = []
    /// Each property definition a device made: its type and key (to find the one adopted for it).
    var definedProperties: [String: (type: String, key: String)] = [:]
    /// What happened, step by step (a failure prints the lines about its entity).
    var log: [String] = []
    var typeNames = 0
    /// Times several devices log or import at (the server keeps one event per type and time).
    let sharedTimes: [Double]

    init(seed: UInt64, harness: SyncHarness) {
        self.seed = seed
        self.harness = harness
        rng = SplitMix64(seed: seed)
        propertyRng = SplitMix64(seed: seed ^ 0x5052_4F50)
        joinRng = SplitMix64(seed: seed ^ 0x4A4F_494E)
        sharedTimes = (0..<6).map { 1.7e9 + Double($0) * 3_600 }
    }

    mutating func int(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
    mutating func chance(_ p: Double) -> Bool { Double(rng.next() % 10_000) / 10_000 < p }
    mutating func randomTime() -> Date {
        if chance(0.25) { return Date(timeIntervalSince1970: sharedTimes[int(sharedTimes.count)]) }
        return Date(timeIntervalSince1970: 1.7e9 + Double(int(1 << 30)) / 1000)
    }

    /// A new engine for this run's account on `store`, calling the server through `api`.
    func engine(
        on store: SQLiteLocalStore, _ api: any SyncRemote, identity: IdentityBox, pageSize: Int = 20
    ) -> OutboxSyncEngine {
        var c = OutboxSyncEngine.Configuration()
        c.pageSize = pageSize
        let clock = harness.clock
        return OutboxSyncEngine(
            store: store, api: api, reachability: SyncHarness.testProbe(api), identity: { identity.current },
            configuration: c, now: { clock.now }, logger: LogSystem.disabled().logger(.sync))
    }

    mutating func run() async throws {
        let h = harness
        h.setFaults(FaultConfiguration())
        h.seedFaults(seed)
        let (client, session) = try await h.account()
        api = client
        userId = session.user.id
        clients = h.clients(session)
        for i in 0..<(2 + int(2)) {
            let store = try SyncHarness.memoryStore(now: { h.clock.now })
            let apis = clients.map { InterceptingAPIClient($0) }
            let home = i % apis.count
            let identity = IdentityBox(userId)
            devices.append(
                Device(
                    name: "d\(i)", store: store, apis: apis, home: home, identity: identity,
                    engine: engine(on: store, apis[home], identity: identity)))
        }
        founders = devices.count
        try await devices[0].store.createEventType(EventType(id: h.ids.next(), name: "Base"))
        let steps = 30 + int(30)
        for s in 0..<steps {
            step = s
            try await randomStep()
            try await joinStep()
            h.clock.advance(65)
        }
        // Quiet: faults off, everyone signed in; each person takes the way out of what the
        // server refused; everyone syncs until nothing moves.
        h.setFaults(FaultConfiguration())
        for d in devices { d.identity.set(userId) }
        for round in 0..<6 {
            for d in devices {
                // The last two rounds only sync, so every device sees the last way out taken.
                if round > 0, round < 4 { try await resolveFailures(d) }
                _ = try await d.store.retryFailed()
                let quiet = try await syncQuietly(d)
                log.append("end \(round) \(syncLine(d, quiet))")
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

    /// Records what the device now shows, field by field; the person's values for a copy the
    /// server de-duplicated into another device's event are their values for that event now.
    mutating func observe(_ d: Device) async throws {
        let shown = try await Self.snapshot(d.store)
        for (id, fields) in shown {
            for (field, value) in fields { d.seen["\(id)/\(field)", default: []].insert(value) }
        }
        let prefix = "\(d.name)|"
        adoptDefinitions(d, shown: shown)
        for key in intents.keys.sorted() where key.hasPrefix(prefix) {
            let entityField = key.dropFirst(prefix.count)
            let parts = entityField.split(separator: "/")
            let id = String(parts[0])
            guard shown[id] == nil, let into = try await d.store.mergedInto(id) else { continue }
            let moved = "\(prefix)\(into)/\(parts[1])"
            // What the person had in front of them on their copy, they had in front of them for
            // the event: another device's same value written before is knowingly replaced.
            let seenHere = d.seen["\(id)/\(parts[1])"] ?? []
            d.seen["\(into)/\(parts[1])", default: []].formUnion(seenHere)
            for other in devices where other !== d {
                let theirs = "\(other.name)|\(into)/\(parts[1])"
                if let intent = intents[theirs], seenHere.contains(intent.value),
                    intent.order < (intents[key]?.order ?? 0)
                {
                    intents[theirs]?.superseded = true
                }
            }
            // Another device that later wrote this field of the event with the same value in
            // front of it replaced it knowingly.
            if let mine = intents[key] {
                for other in devices where other !== d {
                    let theirs = "\(other.name)|\(into)/\(parts[1])"
                    if let intent = intents[theirs], intent.order > mine.order,
                        other.seen["\(into)/\(parts[1])"]?.contains(mine.value) == true
                    {
                        intents[key]?.superseded = true
                    }
                }
            }
            // Two copies of one device merged into one event: its later value is its last. A field
            // the merged-away copy left empty was not set: it does not clear the surviving event's.
            if intents[key]?.value != "∅", (intents[moved]?.order ?? -1) < (intents[key]?.order ?? 0) {
                intents[moved] = intents[key]
            }
            intents[key] = nil
            // A copy kept here keeps the event alive, though the person deleted its other copy.
            if shown[into] != nil { deletedIds.remove(into) }
            log.append("\(step) \(d.name) sees \(id) merged into \(into)")
        }
    }

    static func fields(_ e: Event) -> [String: String] {
        [
            "notes": e.notes ?? "∅", "timestamp": String(Int64(e.timestamp.timeIntervalSince1970 * 1000)),
            "type": e.eventTypeId.description, "props": props(e.properties),
        ]
    }

    static func fields(_ g: Geofence) -> [String: String] {
        [
            "name": g.name, "radius": String(g.radius), "entry": g.entryEventTypeId?.description ?? "∅",
            "exit": g.exitEventTypeId?.description ?? "∅",
        ]
    }

    static func fields(_ t: EventType) -> [String: String] { ["name": t.name, "color": t.color] }

    static func fields(_ p: PropertyDefinition) -> [String: String] {
        [
            "key": p.key, "label": p.label, "kind": p.propertyType.rawValue, "type": p.eventTypeId.description,
            "options": p.options?.joined(separator: "|") ?? "∅", "default": bare(p.defaultValue),
        ]
    }

    static func snapshot(_ store: SQLiteLocalStore) async throws -> Snapshot {
        var out: Snapshot = [:]
        for e in try await store.events(limit: 1_000_000, since: nil) { out[e.value.id.description] = fields(e.value) }
        for g in try await store.geofences() { out[g.value.id.description] = fields(g.value) }
        for t in try await store.eventTypes() { out[t.value.id.description] = fields(t.value) }
        for p in try await store.propertyDefinitions(ofType: nil) { out[p.value.id.description] = fields(p.value) }
        return out
    }

    mutating func randomStep() async throws {
        let d = devices[int(founders)]
        let events = try await d.store.events(limit: 100_000, since: nil).map(\.value)
        let types = try await d.store.eventTypes().map(\.value)
        let geofences = try await d.store.geofences().map(\.value)
        // One roll picks the operation; each family draws the rest in the same order as ever, so a
        // seed replays the run it always did.
        let roll = int(100)
        switch roll {
        case 0..<39, 49..<52: try await eventStep(d, roll, events: events, types: types)
        case 39..<49: try await typeStep(d, roll, types: types)
        case 52..<66: try await placeStep(d, roll, geofences: geofences, types: types)
        default: try await systemStep(d, roll)
        }
        // Property definitions and values draw from their own generator, so the steps above stay
        // the ones each seed always drew; these come in between.
        if propertyChance(0.25) { try await propertyStep(devices[propertyInt(founders)]) }
    }

}
