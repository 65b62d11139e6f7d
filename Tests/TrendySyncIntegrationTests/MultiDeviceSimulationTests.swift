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
            // A long run goes on past a failing seed (each is its own account), up to 20 failures.
            var failures = 0
            for seed in Self.seeds {
                var sim = Simulation(seed: seed, harness: h)
                do {
                    try await sim.run()
                } catch {
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
    var devices: [Device] = []
    var step = 0
    /// "device|entity/field" → the device's last intent.
    var intents: [String: Intent] = [:]
    /// Entities a person deleted directly (a type's cascade is not: the server's cascade decides).
    var deletedIds: Set<String> = []
    /// Event types deleted: every reference to one goes with it.
    var deletedTypes: Set<String> = []
    /// What happened, step by step (a failure prints the lines about its entity).
    var log: [String] = []
    var typeNames = 0
    /// Times several devices log or import at (the server keeps one event per type and time).
    let sharedTimes: [Double]

    init(seed: UInt64, harness: SyncHarness) {
        self.seed = seed
        self.harness = harness
        rng = SplitMix64(seed: seed)
        sharedTimes = (0..<6).map { 1.7e9 + Double($0) * 3_600 }
    }

    mutating func int(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
    mutating func chance(_ p: Double) -> Bool { Double(rng.next() % 10_000) / 10_000 < p }
    mutating func randomTime() -> Date {
        if chance(0.25) { return Date(timeIntervalSince1970: sharedTimes[int(sharedTimes.count)]) }
        return Date(timeIntervalSince1970: 1.7e9 + Double(int(1 << 30)) / 1000)
    }

    /// A new engine for this run's account on `store`, calling the server through `api`.
    func engine(on store: SQLiteLocalStore, _ api: any SyncRemote, identity: IdentityBox) -> OutboxSyncEngine {
        var c = OutboxSyncEngine.Configuration()
        c.pageSize = 20
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
        let clients = h.clients(session)
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
        try await devices[0].store.createEventType(EventType(id: h.ids.next(), name: "Base"))
        let steps = 30 + int(30)
        for s in 0..<steps {
            step = s
            try await randomStep()
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

    /// Records what the device now shows, field by field; the person's values for a copy the
    /// server de-duplicated into another device's event are their values for that event now.
    mutating func observe(_ d: Device) async throws {
        let shown = try await Self.snapshot(d.store)
        for (id, fields) in shown {
            for (field, value) in fields { d.seen["\(id)/\(field)", default: []].insert(value) }
        }
        let prefix = "\(d.name)|"
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
            "type": e.eventTypeId.description,
        ]
    }

    static func fields(_ g: Geofence) -> [String: String] {
        [
            "name": g.name, "radius": String(g.radius), "entry": g.entryEventTypeId?.description ?? "∅",
            "exit": g.exitEventTypeId?.description ?? "∅",
        ]
    }

    static func fields(_ t: EventType) -> [String: String] { ["name": t.name, "color": t.color] }

    static func snapshot(_ store: SQLiteLocalStore) async throws -> Snapshot {
        var out: Snapshot = [:]
        for e in try await store.events(limit: 1_000_000, since: nil) { out[e.value.id.description] = fields(e.value) }
        for g in try await store.geofences() { out[g.value.id.description] = fields(g.value) }
        for t in try await store.eventTypes() { out[t.value.id.description] = fields(t.value) }
        return out
    }

    /// Runs one local operation on `d` and records what it changed as the person's writes: new
    /// and changed fields are writes, vanished entities deletes (`cascade`: entities that went
    /// with a deleted type are left to the server's cascade, not counted as deleted by hand).
    mutating func act(
        _ d: Device, _ what: String, cascadeOf type: String? = nil, _ body: () async throws -> Void
    ) async throws {
        let before = try await Self.snapshot(d.store)
        do {
            try await body()
        } catch let error as LocalStoreError {
            // Refused at once, with nothing written (another event of the type at that time).
            log.append("\(step) \(d.name) was refused \(what): \(error)")
            return
        }
        let after = try await Self.snapshot(d.store)
        log.append("\(step) \(d.name) \(what)")
        // A type's delete writes nothing a person chose: the places that named it lose it on the
        // server too, by the same rule.
        for (id, fields) in after where type == nil {
            for (field, value) in fields.sorted(by: { $0.key < $1.key }) where before[id]?[field] != value {
                wrote(d, id, field, value)
            }
        }
        for (id, fields) in before where after[id] == nil {
            deleted(d, id, Array(fields.keys), direct: type == nil || id == type)
        }
        if let type {
            deletedTypes.insert(type)
            // Every reference to the type goes with it, on every device (nothing to restore).
            for (key, intent) in intents where intent.value == type { intents[key]?.superseded = true }
        }
    }

    mutating func wrote(_ d: Device, _ entity: String, _ field: String, _ value: String) {
        let key = "\(entity)/\(field)"
        supersedeSeen(by: d, key)
        intents["\(d.name)|\(key)"] = Intent(value: value, order: log.count)
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
        case 0..<14:
            guard let type = types.randomElement(using: &rng) else { return }
            let e = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: randomTime(), notes: "n\(int(1000))")
            try await act(d, "logged \(e.id)") { try await d.store.createEvent(e) }
        case 14..<34:
            guard var e = events.randomElement(using: &rng) else { return }
            switch int(5) {
            case 0: e.notes = chance(0.1) ? nil : "\(d.name)-\(step)-\(int(100))"
            case 1: e.timestamp = randomTime()
            case 2: e.eventTypeId = types.randomElement(using: &rng)?.id ?? e.eventTypeId
            default:
                e.notes = "\(d.name)-\(step)-\(int(100))"
                e.timestamp = randomTime()
            }
            let edited = e
            try await act(d, "edited \(e.id)") { try await d.store.updateEvent(edited) }
        case 34..<39:
            guard let e = events.randomElement(using: &rng) else { return }
            try await act(d, "deleted \(e.id)") { try await d.store.deleteEvent(id: e.id) }
        case 39..<42:
            typeNames += 1
            let t = EventType(id: h.ids.next(), name: "T\(seed)-\(typeNames)")
            try await act(d, "added type \(t.id)") { try await d.store.createEventType(t) }
        case 42..<46:
            guard var t = types.randomElement(using: &rng) else { return }
            if chance(0.5) {
                typeNames += 1
                t.name = "R\(seed)-\(typeNames)"
            } else {
                t.color = ["#FF0000", "#00FF00", "#0000FF", "#123456"][int(4)]
            }
            let edited = t
            try await act(d, "edited type \(t.id)") { try await d.store.updateEventType(edited) }
        case 46..<49:
            guard types.count > 1, let t = types.randomElement(using: &rng) else { return }
            try await act(d, "deleted type \(t.id)", cascadeOf: t.id.description) {
                try await d.store.deleteEventType(id: t.id)
            }
        case 49..<52:
            // An import of a file several devices may import: rows at shared times carry the
            // same note on every device (the same file), the rest are this device's own.
            guard let type = types.randomElement(using: &rng) else { return }
            let batch = (0..<(1 + int(40))).map { _ -> Event in
                let shared = chance(0.3)
                let at = shared ? sharedTimes[int(sharedTimes.count)] : 1.7e9 + Double(int(1 << 30)) / 1000
                return Event(
                    id: h.ids.next(), eventTypeId: type.id, timestamp: Date(timeIntervalSince1970: at),
                    notes: shared ? "file-\(Int(at))" : nil, sourceType: .imported)
            }
            try await act(d, "imported \(batch.count)") { _ = try await d.store.insertEvents(batch) }
        case 52..<56:
            let g = Geofence(
                id: h.ids.next(), name: "g\(int(100))", center: Coordinate(latitude: 52, longitude: 13),
                radius: Double(100 + int(400)), entryEventTypeId: types.randomElement(using: &rng)?.id,
                exitEventTypeId: chance(0.3) ? types.randomElement(using: &rng)?.id : nil)
            try await act(d, "added place \(g.id)") { try await d.store.createGeofence(g) }
        case 56..<61:
            guard var g = geofences.randomElement(using: &rng) else { return }
            switch int(3) {
            case 0: g.name = "\(d.name)-g\(step)"
            case 1: g.radius = Double(100 + int(400))
            default: g.entryEventTypeId = chance(0.2) ? nil : types.randomElement(using: &rng)?.id
            }
            let edited = g
            try await act(d, "edited place \(g.id)") { try await d.store.updateGeofence(edited) }
        case 61..<63:
            guard let g = geofences.randomElement(using: &rng) else { return }
            try await act(d, "deleted place \(g.id)") { try await d.store.deleteGeofence(id: g.id) }
        case 63..<66:
            let open = try await d.store.conflicts(includeClosed: false)
            guard let c = open.randomElement(using: &rng)?.conflict else { return }
            if chance(0.6) {
                let newId = h.ids.next()
                try await act(d, "restored conflict \(c.id) of \(c.entityId)") {
                    _ = try await d.store.restoreConflict(id: c.id, newId: newId)
                }
            } else {
                try await d.store.dismissConflict(id: c.id)
                log.append("\(step) \(d.name) dismissed conflict \(c.id) of \(c.entityId)")
            }
        case 66..<68:
            let signedIn = d.identity.current != nil
            d.identity.set(signedIn ? nil : userId)
            log.append("\(step) \(d.name) signed \(signedIn ? "out" : "in")")
        case 68..<72:
            // Killed at a request of a pass drawn from the seed (a pass here makes 3–20): the
            // fatal request may reach the server with its answer lost; nothing after it is sent.
            // The engine is dropped and a new one starts on the same database.
            let calls = int(14)
            let losing = chance(0.5)
            d.api.kill(after: calls, losingAnswer: losing, with: .transport(.connectionLost("the process was killed")))
            _ = await d.engine.sync(full: false)
            d.api.clearScript()
            log.append(
                "\(step) \(d.name) killed at call \(calls)\(losing ? " (answer lost)" : "") cursor \(try await d.store.cursor() ?? -1)"
            )
            // Whatever the pass got to apply is in front of the person now.
            if let cursor = try await d.store.cursor() { d.cursors.append(cursor) }
            try await observe(d)
            d.home = (d.home + 1) % d.apis.count
            d.engine = engine(on: d.store, d.api, identity: d.identity)
        case 72..<76:
            d.offlineUntil = step + 3 + int(8)
        case 76..<83:
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

    /// The person's way out of each change the server refused, as the failure says: an event
    /// whose type is gone moves to a type that exists; one at the time of another event of its
    /// type moves to another time. Anything else refused is a defect (the check says so).
    mutating func resolveFailures(_ d: Device) async throws {
        for failed in try await d.store.failedChanges() where failed.entity == .event {
            guard let id = UUIDv7(failed.entityId), var e = try await d.store.event(id: id)?.value else { continue }
            if failed.error.contains("no such event type"), try await d.store.eventTypes().isEmpty {
                // Every type is gone (two devices each deleted one): the person makes one.
                typeNames += 1
                let t = EventType(id: harness.ids.next(), name: "T\(seed)-\(typeNames)")
                try await act(d, "added type \(t.id)") { try await d.store.createEventType(t) }
            }
            let types = try await d.store.eventTypes().map(\.value)
            if failed.error.contains("no such event type"), let type = types.first {
                // To a type that exists, at a time of its own (its old time may be taken there).
                e.eventTypeId = type.id
                e.timestamp = Date(timeIntervalSince1970: 1.7e9 + Double(int(1 << 30)) / 1000)
            } else if failed.error.contains("already exists") {
                e.timestamp = Date(timeIntervalSince1970: 1.7e9 + Double(int(1 << 30)) / 1000)
            } else {
                continue
            }
            let fixed = e
            try await act(d, "took the way out of \(failed.kind) \(failed.entityId): \(failed.error)") {
                try await d.store.updateEvent(fixed)
            }
        }
    }

    /// A delete knowingly replaces every value the deleting device has seen. `direct`: deleted by
    /// hand (it must never come back); a type's cascade is the server's to decide.
    mutating func deleted(_ d: Device, _ id: String, _ fields: [String], direct: Bool = true) {
        if direct { deletedIds.insert(id) }
        log.append("\(step) \(d.name) deleted \(id)\(direct ? "" : " with its type")")
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
        /// This device's copies the server de-duplicated into another device's events.
        var merged: [String: String] = [:]
        for d in devices {
            let local = try await Self.snapshot(d.store)
            if local != server {
                let ids = Set(local.keys).union(server.keys).filter { local[$0] != server[$0] }.sorted()
                if let id = ids.first {
                    let x = try await d.store.explain(entityId: id)
                    print(
                        "SIMULATION LOG seed \(seed)\n"
                            + log.filter {
                                ProcessInfo.processInfo.environment["TRENDY_SIM_VERBOSE"] != nil || $0.contains(id)
                                    || $0.contains(" sync ") || $0.contains("kill")
                            }.joined(
                                separator: "\n") + "\nexplain: \(x)")
                }
                let diff = ids.prefix(3).map { "\($0): here \(local[$0] ?? [:]) server \(server[$0] ?? [:])" }
                throw SimulationFailure(description: "\(d.name) differs from the server: \(diff)")
            }
            let counts = try await d.store.outboxCounts()
            if counts.pending > 0 {
                throw SimulationFailure(description: "\(d.name) still has \(counts.pending) pending change(s)")
            }
            if let failed = try await d.store.failedChanges().first {
                print("EXPLAIN \(d.name): \(try await d.store.explain(entityId: failed.entityId))")
                print("SIMULATION LOG seed \(seed)\n" + log.joined(separator: "\n"))
                throw SimulationFailure(description: "\(d.name) has a change stuck failed: \(failed)")
            }
            for (a, b) in zip(d.cursors, d.cursors.dropFirst()) where b < a {
                throw SimulationFailure(description: "\(d.name)'s cursor moved back from \(a) to \(b)")
            }
            conflicts += try await d.store.conflicts(includeClosed: true).map(\.conflict)
            for key in intents.keys where key.hasPrefix("\(d.name)|") {
                let id = String(key.dropFirst(d.name.count + 1).split(separator: "/")[0])
                if server[id] == nil, let into = try await d.store.mergedInto(id) { merged[id] = into }
            }
        }
        let resurrected = deletedIds.filter { server[merged[$0] ?? $0] != nil }
        if !resurrected.isEmpty { throw SimulationFailure(description: "deleted and back: \(resurrected.sorted())") }
        // Every device's last value for every field: current, kept as a conflict, or knowingly replaced.
        for (key, intent) in intents where !intent.superseded {
            let entityField = String(key.split(separator: "|")[1])
            let parts = entityField.split(separator: "/")
            let (written, field) = (String(parts[0]), String(parts[1]))
            let id = merged[written] ?? written
            if server[id]?[field] == intent.value { continue }
            // A deleted type goes with every reference to it (places lose it, events their type).
            if deletedTypes.contains(id) || deletedTypes.contains(intent.value) { continue }
            let kept = conflicts.contains { c in
                guard c.entityId == id else { return false }
                if c.kind == .deleted { return true }
                return c.field == Self.wireName(field) && Self.matches(c.lostValue, field: field, intent.value)
            }
            if !kept {
                let everything = ProcessInfo.processInfo.environment["TRENDY_SIM_VERBOSE"] != nil
                let story = log.filter {
                    everything || $0.contains(id) || $0.contains(written) || $0.contains(" sync ")
                        || $0.contains("kill") || $0.contains("fault")
                }
                let conflictList = conflicts.filter { $0.entityId == id }.map {
                    "\($0.kind) \($0.field ?? "") lost \($0.lostValue)"
                }
                for d in devices {
                    print("EXPLAIN \(d.name): \(try await d.store.explain(entityId: id))")
                }
                print("SIMULATION LOG seed \(seed)\n" + story.joined(separator: "\n") + "\nconflicts: \(conflictList)")
                throw SimulationFailure(
                    description:
                        "\(key): its last value \(intent.value) is neither current (\(server[id]?[field] ?? "gone")) nor in a conflict"
                )
            }
        }
    }

    static func wireName(_ field: String) -> String {
        switch field {
        case "type": "event_type_id"
        case "entry": "event_type_entry_id"
        case "exit": "event_type_exit_id"
        default: field
        }
    }

    /// Whether a conflict's JSON value is the simulation's value of `field`.
    static func matches(_ json: String, field: String, _ value: String) -> Bool {
        let any = try? JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed])
        switch field {
        case "notes", "entry", "exit": return (any as? String ?? "∅") == value
        case "timestamp":
            guard let text = any as? String, let date = ISO8601.parse(text) else { return false }
            return String(Int64(date.timeIntervalSince1970 * 1000)) == value
        case "radius": return (any as? Double).map { String($0) } == value
        default: return (any as? String) == value
        }
    }

    /// Everything the server holds (events, geofences, types), spelled as a snapshot.
    func serverState() async throws -> Snapshot {
        var out: Snapshot = [:]
        var after: String?
        while true {
            let page = try await api.listEvents(limit: 500, after: after)
            for e in page.items.map(\.value) { out[e.id.description] = Self.fields(e) }
            guard page.hasMore, let next = page.next else { break }
            after = next
        }
        for g in try await api.listGeofences(active: nil).map(\.value) { out[g.id.description] = Self.fields(g) }
        for t in try await api.listEventTypes().map(\.value) { out[t.id.description] = Self.fields(t) }
        return out
    }
}
