import Foundation
import GRDB
import Logging
import Synchronization
import Testing
import TrendyAPI
import TrendyInsights
import TrendyInsightsLive
import TrendyModels
import TrendySync
import TrendySyncLive

/// The daily aggregates the install database keeps are what a scan of the events gives, after
/// any sequence of writes through Sync's real store — logs, edits of time, type, zone and values,
/// deletes, imports, pulled creates, updates and deletes, a type's cascade — and settings changes
/// (day start, home zone). Seeded and replayable: `TRENDY_INSIGHT_SEEDS`, `TRENDY_INSIGHT_FIRST_SEED`.
struct AggregateTests {
    static let zones: [String?] = [
        nil, "Europe/Berlin", "America/New_York", "Asia/Tokyo", "Pacific/Kiritimati", "Pacific/Pago_Pago",
        "Asia/Kathmandu", "Australia/Lord_Howe", "Mars/Olympus_Mons",
    ]

    struct Rng {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49EB_133D_11EB
            return z ^ (z >> 31)
        }
        mutating func int(_ n: Int) -> Int { Int(next() % UInt64(n)) }
        mutating func pick<T>(_ xs: [T]) -> T { xs[int(xs.count)] }
    }

    static var seeds: ClosedRange<UInt64> {
        let env = ProcessInfo.processInfo.environment
        let count = env["TRENDY_INSIGHT_SEEDS"].flatMap(UInt64.init) ?? 12
        let first = env["TRENDY_INSIGHT_FIRST_SEED"].flatMap(UInt64.init) ?? 1
        return first...(first + count - 1)
    }

    @Test func aggregatesAreAScanOfTheEventsAfterAnyWrites() async throws {
        for seed in Self.seeds { try await run(seed: seed) }
    }

    func run(seed: UInt64) async throws {
        var rng = Rng(state: seed)
        var migrator = DatabaseMigrator()
        SyncSchema.register(in: &migrator)
        InsightSchema.register(in: &migrator)
        let db = try DatabaseQueue()
        try migrator.migrate(db)
        let deviceZone = Mutex<String?>("Europe/Berlin")
        let store = SQLiteLocalStore(
            database: db, zone: { deviceZone.withLock { $0 } }, logger: Logger(label: "test"))
        let insights = SQLiteInsightStore(database: db, defaultZone: { "Europe/Berlin" })
        let ids = UUIDv7Generator()
        var types: [UUIDv7] = []
        var made = 0
        func addType() async throws {
            made += 1
            let type = EventType(id: ids.next(), name: "T\(made)")
            try await store.createEventType(type)
            try await store.createPropertyDefinition(
                PropertyDefinition(id: ids.next(), eventTypeId: type.id, key: "shots", propertyType: .number))
            try await store.createPropertyDefinition(
                PropertyDefinition(id: ids.next(), eventTypeId: type.id, key: "slept", propertyType: .duration))
            types.append(type.id)
        }
        for _ in 0..<4 { try await addType() }
        let now = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-17
        var events: [UUIDv7] = []
        var cursor: Int64 = 0
        func randomEvent(_ rng: inout Rng, id: UUIDv7? = nil) -> Event {
            // Within a year before now and a little after, at any minute; DST changes included.
            let at = now.addingTimeInterval(Double(rng.int(400 * 24 * 60) - 390 * 24 * 60) * 60)
            var properties: [String: PropertyValue] = [:]
            if rng.int(2) == 0 { properties["shots"] = .number(Double(rng.int(900)) / 100) }
            if rng.int(3) == 0 { properties["slept"] = .duration(Double(rng.int(40_000))) }
            if rng.int(4) == 0 { properties["mood"] = .text("ok") }
            return Event(
                id: id ?? ids.next(), eventTypeId: rng.pick(types), timestamp: at, properties: properties,
                timeZone: rng.pick(Self.zones))
        }
        for step in 0..<240 {
            switch rng.int(20) {
            case 0...5:
                let e = randomEvent(&rng)
                if (try? await store.createEvent(e)) != nil { events.append(e.id) }
            case 6...8:
                guard !events.isEmpty, var e = try await store.event(id: rng.pick(events))?.value else { break }
                let other = randomEvent(&rng)
                switch rng.int(4) {
                case 0: e.timestamp = other.timestamp
                case 1: e.eventTypeId = other.eventTypeId
                case 2: e.properties = other.properties
                default: e.timeZone = other.timeZone
                }
                try? await store.updateEvent(e)
            case 9, 10:
                guard !events.isEmpty else { break }
                let id = events.remove(at: rng.int(events.count))
                try? await store.deleteEvent(id: id)
            case 11, 12:
                var batch: [Event] = []
                for _ in 0..<5 {
                    var e = randomEvent(&rng)
                    e.sourceType = .imported
                    batch.append(e)
                }
                if (try? await store.insertEvents(batch)) != nil { events += batch.map(\.id) }
            case 13...15:
                var changes: [Change] = []
                for _ in 0..<4 {
                    cursor += 1
                    let kind = rng.int(3)
                    if kind == 2, !events.isEmpty {
                        let id = events.remove(at: rng.int(events.count))
                        changes.append(
                            Change(
                                cursor: cursor, entityType: .event, entityId: id.description, operation: .delete,
                                data: nil, createdAt: now))
                    } else {
                        let existing = kind == 1 && !events.isEmpty ? rng.pick(events) : nil
                        let e = randomEvent(&rng, id: existing)
                        if existing == nil { events.append(e.id) }
                        changes.append(Self.pulled(e, cursor: cursor, update: existing != nil, at: now))
                    }
                }
                _ = try await store.apply(ChangesPage(changes: changes, nextCursor: cursor, hasMore: false))
            case 16:
                var s = try await insights.settings()
                s.dayStartHour = rng.int(7)
                s.timeZone = rng.pick(["Europe/Berlin", "UTC", "Asia/Tokyo", "America/Los_Angeles"])
                try await insights.save(s)
            case 17:
                deviceZone.withLock { $0 = rng.pick(Self.zones) }
            case 18 where types.count > 2:
                let id = types.remove(at: rng.int(types.count))
                try await store.deleteEventType(id: id)
                try await addType()
            default:
                break
            }
            if step % 40 == 39 {
                let zone = rng.pick(["Europe/Berlin", "Pacific/Kiritimati", "Pacific/Pago_Pago"])
                let fast = try await insights.data(now: now, zone: zone, typeId: nil)
                let slow = try await insights.scan(now: now, zone: zone, settings: try await insights.settings())
                let differences = Self.differences(fast, slow)
                #expect(differences.isEmpty, "seed \(seed), step \(step): \(differences.prefix(6))")
                if !differences.isEmpty { return }
            }
        }
        // The stamp: a log without a zone took the device's.
        deviceZone.withLock { $0 = "Asia/Tokyo" }
        let e = Event(id: ids.next(), eventTypeId: types[0], timestamp: now)
        try await store.createEvent(e)
        #expect(try await store.event(id: e.id)?.value.timeZone == "Asia/Tokyo")
    }

    /// A bulk load into an empty store (D63) takes the aggregates' triggers down with the event
    /// indexes and builds the aggregates once at the end: whatever happened meanwhile — pulled
    /// pages, a person's logs, edits and deletes, a settings change, a crash (a new store on the
    /// same database continues the load) — the aggregates are then a scan of the events, and the
    /// triggers keep them again afterwards. Seeded like the test above.
    /// Also with the end in parts (D67), as the app builds them.
    @Test func aBulkLoadBuildsTheAggregatesOnceAndTheTriggersComeBack() async throws {
        for seed in Self.seeds {
            try await bulkLoad(seed: seed, Self.bulkLoad)
            try await bulkLoad(seed: seed, Self.bulkLoad(inPartsOf: 1 + Int(seed % 5)))
        }
    }

    static let bulkLoad = DerivedFromEvents(
        begin: InsightSchema.bulkLoadBegin, end: InsightSchema.bulkLoadEnd, present: InsightSchema.bulkLoadPresent)

    /// ``bulkLoad`` with its end in parts of `part` events.
    static func bulkLoad(inPartsOf part: Int) -> DerivedFromEvents {
        var derived = bulkLoad
        derived.inParts = (InsightSchema.bulkLoadStart, InsightSchema.bulkLoadStep(part: part))
        return derived
    }

    static func triggers(_ db: DatabaseQueue) throws -> Int {
        try db.read { db in
            try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'insight_events_%'")
                ?? 0
        }
    }

    func bulkLoad(seed: UInt64, _ derived: DerivedFromEvents) async throws {
        var rng = Rng(state: seed &* 7_919)
        var migrator = DatabaseMigrator()
        SyncSchema.register(in: &migrator)
        InsightSchema.register(in: &migrator)
        let db = try DatabaseQueue()
        try migrator.migrate(db)
        func makeStore() -> SQLiteLocalStore {
            SQLiteLocalStore(
                database: db, zone: { "Europe/Berlin" }, derived: [derived], logger: Logger(label: "test"))
        }
        let w = try await LoadWrites(makeStore(), db)
        #expect(try Self.triggers(db) == 4)
        #expect(try await w.store.beginBulkLoad() == .startedOnEmptyStore)
        #expect(try Self.triggers(db) == 0, "seed \(seed): the triggers are down with the indexes")
        let now = Self.loadNow
        let insights = w.insights
        for _ in 0..<30 {
            switch rng.int(10) {
            case 0...4: try await w.pull(&rng, replacingOneIn: 4)
            case 5: try await w.log(&rng)
            case 6: try await w.edit(&rng)
            case 7: try await w.delete(&rng)
            case 8: try await w.changeDayStart(&rng)
            default:
                // A crash: the next process's store finds the load under way and continues it.
                w.store = makeStore()
                #expect(try await w.store.bulkLoading())
            }
        }
        let store = w.store
        try await store.endBulkLoad()
        #expect(try Self.triggers(db) == 4, "seed \(seed): the triggers are back")
        // And they keep the aggregates again.
        for _ in 0..<5 { try await w.log(&rng) }
        for zone in ["Europe/Berlin", "Pacific/Kiritimati"] {
            let fast = try await insights.data(now: now, zone: zone, typeId: nil)
            let slow = try await insights.scan(now: now, zone: zone, settings: try await insights.settings())
            let differences = Self.differences(fast, slow)
            #expect(differences.isEmpty, "seed \(seed): \(differences.prefix(6))")
        }
    }

    /// A load begun with the insights' triggers taken down and ended by a program that does not
    /// know them (an older `trendy` across an upgrade, one built without the plugin) builds the
    /// indexes only; the next open puts the triggers back and builds the aggregates once.
    @Test func triggersALoadLeftDownAreMendedAtOpen() async throws {
        var migrator = DatabaseMigrator()
        SyncSchema.register(in: &migrator)
        InsightSchema.register(in: &migrator)
        let db = try DatabaseQueue()
        try migrator.migrate(db)
        let aware = SQLiteLocalStore(database: db, derived: [Self.bulkLoad], logger: Logger(label: "test"))
        let unaware = SQLiteLocalStore(database: db, logger: Logger(label: "test"))
        let insights = SQLiteInsightStore(database: db, defaultZone: { "Europe/Berlin" })
        let type = EventType(id: UUIDv7Generator().next(), name: "A")
        try await aware.createEventType(type)
        try SQLiteLocalStore.mendDerived(db, [Self.bulkLoad])
        #expect(try Self.triggers(db) == 4, "nothing to mend")
        #expect(try await aware.beginBulkLoad() == .startedOnEmptyStore)
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        let ids = UUIDv7Generator()
        _ = try await unaware.insertEvents(
            (0..<20).map {
                Event(id: ids.next(), eventTypeId: type.id, timestamp: now.addingTimeInterval(-3_600 * Double($0)))
            })
        try SQLiteLocalStore.mendDerived(db, [Self.bulkLoad])
        #expect(try Self.triggers(db) == 0, "a load under way is left to its end")
        try await unaware.endBulkLoad()
        #expect(try await unaware.bulkLoading() == false && Self.triggers(db) == 0)
        try SQLiteLocalStore.mendDerived(db, [Self.bulkLoad])
        #expect(try Self.triggers(db) == 4)
        let fast = try await insights.data(now: now, zone: "Europe/Berlin", typeId: nil)
        let slow = try await insights.scan(now: now, zone: "Europe/Berlin", settings: try await insights.settings())
        #expect(Self.differences(fast, slow).isEmpty)
        #expect(fast.daily[type.id.description]?.values.reduce(0, +) == 20)
    }

    /// The time the bulk-load tests' events are around.
    static let loadNow = Date(timeIntervalSince1970: 1_795_000_000)

    /// An event of one of `types` in the year before ``loadNow``, half of them with a number, in
    /// any of ``zones``.
    static func randomEvent(_ rng: inout Rng, id: UUIDv7, types: [EventType]) -> Event {
        let at = loadNow.addingTimeInterval(Double(rng.int(400 * 24 * 60) - 390 * 24 * 60) * 60)
        let properties: [String: PropertyValue] =
            rng.int(2) == 0 ? ["shots": .number(Double(rng.int(900)) / 100)] : [:]
        return Event(
            id: id, eventTypeId: rng.pick(types).id, timestamp: at, properties: properties,
            timeZone: rng.pick(Self.zones))
    }

    /// A bulk load's end in parts (D67): the triggers go up at once and each part counts the
    /// next events in a transaction of its own. Whatever is written between the parts — pulled
    /// pages that replace rows, new events, edits and deletes of events counted and not yet
    /// reached, a settings change, another process's open mending the tables — the aggregates
    /// are then exactly what one build makes, and the triggers keep them. Seeded like the tests
    /// above (parts of 1 to 9 events).
    @Test func aBuildInPartsCountsEveryWriteBetweenItsPartsOnce() async throws {
        for seed in Self.seeds { try await buildInParts(seed: seed) }
    }

    /// Every aggregate row that counts something, as text, in order.
    static func aggregates(_ db: DatabaseQueue) throws -> [String] {
        try db.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT 'd ' || type_id || ' ' || day || ' ' || zone || ' ' || count FROM insight_daily
                      WHERE count != 0
                    UNION ALL SELECT 's ' || type_id || ' ' || slot || ' ' || count FROM insight_slots WHERE count != 0
                    UNION ALL SELECT 'v ' || type_id || ' ' || key || ' ' || day || ' ' || n || ' ' || milli
                      FROM insight_values WHERE n != 0
                    ORDER BY 1
                    """)
        }
    }

    func buildInParts(seed: UInt64) async throws {
        var rng = Rng(state: seed &* 104_729)
        var migrator = DatabaseMigrator()
        SyncSchema.register(in: &migrator)
        InsightSchema.register(in: &migrator)
        let db = try DatabaseQueue()
        try migrator.migrate(db)
        let part = 1 + rng.int(9)
        let step = InsightSchema.bulkLoadStep(part: part)
        let derived = Self.bulkLoad(inPartsOf: part)
        let store = SQLiteLocalStore(
            database: db, zone: { "Europe/Berlin" }, derived: [derived], logger: Logger(label: "test"))
        let w = try await LoadWrites(store, db)
        let insights = w.insights
        _ = try await insights.settings()
        #expect(try await w.store.beginBulkLoad() == .startedOnEmptyStore)
        for _ in 0..<(2 + rng.int(4)) { try await w.pull(&rng, replacingOneIn: nil) }
        // The end as `endBulkLoad` runs it — the indexes, then the start and the parts — with
        // writes between the parts.
        try await SQLiteLocalStore(database: db, logger: Logger(label: "test")).endBulkLoad()
        #expect(try await insights.countsEveryEvent() == false, "a load under way counts nothing")
        try await db.write { db in try db.execute(sql: InsightSchema.bulkLoadStart) }
        var parts = 0
        while try await !(db.read { db in try Bool.fetchOne(db, sql: InsightSchema.bulkLoadPresent) ?? false }) {
            #expect(try await insights.countsEveryEvent() == false, "a report says it counts part of the history")
            for _ in 0..<rng.int(3) {
                // A settings change or a mend ends the build with a whole one: rare, so most
                // builds run to their last part.
                switch rng.int(40) {
                case 0...13: try await w.pull(&rng, replacingOneIn: 3)
                case 14...21: try await w.log(&rng)
                case 22...29: try await w.edit(&rng)
                case 30...37: try await w.delete(&rng)
                case 38: try await w.changeDayStart(&rng)
                default:
                    // Another process opens the database meanwhile: it finds the tables not
                    // whole and builds them in one go; the parts then find nothing to do.
                    try SQLiteLocalStore.mendDerived(db, [derived])
                }
            }
            try await db.write { db in try db.execute(sql: step) }
            parts += 1
            try #require(parts < 10_000, "seed \(seed): the build never ends")
        }
        #expect(try Self.triggers(db) == 4)
        #expect(try await insights.countsEveryEvent())
        let built = try Self.aggregates(db)
        try await db.write { db in try db.execute(sql: InsightSchema.bulkLoadEnd) }
        let whole = try Self.aggregates(db)
        #expect(
            built == whole,
            "seed \(seed), parts of \(part), \(parts) parts: \(Array(Set(built).symmetricDifference(whole)).prefix(6))")
        // The triggers keep them from here.
        for _ in 0..<5 { try await w.pull(&rng, replacingOneIn: 3) }
        try await w.delete(&rng)
        let kept = try Self.aggregates(db)
        try await db.write { db in try db.execute(sql: InsightSchema.bulkLoadEnd) }
        #expect(kept == (try Self.aggregates(db)), "seed \(seed): after the build")
    }

    /// Migration `insights.v2-build-in-parts` on a store of `insights.v1`: triggers that were up
    /// are made again as the build in parts needs them, and keep counting; triggers a bulk load
    /// under way took down stay down for its end to make.
    @Test func theBuildInPartsMigrationKeepsTriggersUpOrDownAsTheyWere() async throws {
        for loading in [false, true] {
            var migrator = DatabaseMigrator()
            SyncSchema.register(in: &migrator)
            InsightSchema.register(in: &migrator)
            let db = try DatabaseQueue()
            try migrator.migrate(db, upTo: "insights.v1")
            let store = SQLiteLocalStore(
                database: db, zone: { "Europe/Berlin" }, derived: [Self.bulkLoad], logger: Logger(label: "test"))
            let ids = UUIDv7Generator()
            let type = EventType(id: ids.next(), name: "A")
            try await store.createEventType(type)
            if loading { #expect(try await store.beginBulkLoad() == .startedOnEmptyStore) }
            var rng = Rng(state: 7)
            for _ in 0..<10 { try await store.createEvent(Self.randomEvent(&rng, id: ids.next(), types: [type])) }
            try migrator.migrate(db)
            #expect(try Self.triggers(db) == (loading ? 0 : 4), "loading: \(loading)")
            if loading { try await store.endBulkLoad() }
            for _ in 0..<10 { try await store.createEvent(Self.randomEvent(&rng, id: ids.next(), types: [type])) }
            let counted = try Self.aggregates(db)
            try await db.write { db in try db.execute(sql: InsightSchema.bulkLoadEnd) }
            #expect(counted == (try Self.aggregates(db)), "loading: \(loading)")
            #expect(
                try await db.read { db in
                    try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'insight_events_insert'")
                }?.contains("insight_build") == true)
        }
    }

    /// An older program running across the upgrade can put back the triggers of `insights.v1`
    /// (its own bulk load's end), which count every event: a build in parts starts by making its
    /// own, or the writes between its parts were counted twice (a review).
    @Test func aBuildInPartsReplacesTriggersAnOlderProgramPutBack() async throws {
        var migrator = DatabaseMigrator()
        SyncSchema.register(in: &migrator)
        InsightSchema.register(in: &migrator)
        let old = try DatabaseQueue()
        try migrator.migrate(old, upTo: "insights.v1")
        let v1 = try await old.read { db in
            try String.fetchAll(
                db, sql: "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'insight_events_%'")
        }
        #expect(v1.count == 4)
        let db = try DatabaseQueue()
        try migrator.migrate(db)
        try await db.write { db in
            try db.execute(sql: InsightSchema.bulkLoadBegin)
            for sql in v1 { try db.execute(sql: sql) }
            try db.execute(sql: InsightSchema.bulkLoadStart)
        }
        let made = try await db.read { db in
            try String.fetchAll(
                db, sql: "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'insight_events_%'")
        }
        #expect(made.count == 4 && made.allSatisfy { $0.contains("insight_build") }, "\(made)")
    }

    /// A pulled change creating or updating `e`.
    static func pulled(_ e: Event, cursor: Int64, update: Bool, at now: Date) -> Change {
        Change(
            cursor: cursor, entityType: .event, entityId: e.id.description, operation: update ? .update : .create,
            data: .event(Timestamped(e, createdAt: now, updatedAt: now)), createdAt: now)
    }

    /// What differs between two data, briefly (the values are large).
    static func differences(_ a: InsightData, _ b: InsightData) -> [String] {
        var out: [String] = []
        func compare<K: Hashable, V: Equatable>(_ name: String, _ x: [K: V], _ y: [K: V]) {
            for key in Set(x.keys).union(y.keys) where x[key] != y[key] {
                out.append("\(name)[\(key)]: \(String(describing: x[key])) vs \(String(describing: y[key]))")
            }
        }
        for type in Set(a.daily.keys).union(b.daily.keys) {
            compare("daily \(type.suffix(4))", a.daily[type] ?? [:], b.daily[type] ?? [:])
        }
        compare("hours", a.hours, b.hours)
        for type in Set(a.dayZones.keys).union(b.dayZones.keys) {
            compare("zones \(type.suffix(4))", a.dayZones[type] ?? [:], b.dayZones[type] ?? [:])
        }
        for key in Set(a.propertyDaily.keys).union(b.propertyDaily.keys) {
            compare("values \(key.suffix(10))", a.propertyDaily[key] ?? [:], b.propertyDaily[key] ?? [:])
        }
        compare("partial", a.partial, b.partial)
        if a.today != b.today { out.append("today \(a.today) vs \(b.today)") }
        if a.types != b.types { out.append("types") }
        if a.properties != b.properties { out.append("properties") }
        return out
    }
}

/// The writes the bulk-load tests draw, through Sync's real store: pulled pages (some replacing
/// rows), logs, edits of time, values and type, deletes, and day-start changes; on a store with two
/// types that have a number property.
final class LoadWrites {
    var store: SQLiteLocalStore
    let insights: SQLiteInsightStore
    let ids = UUIDv7Generator()
    let types: [EventType]
    var events: [UUIDv7] = []
    var cursor: Int64 = 0

    init(_ store: SQLiteLocalStore, _ db: DatabaseQueue) async throws {
        self.store = store
        insights = SQLiteInsightStore(database: db, defaultZone: { "Europe/Berlin" })
        types = [EventType(id: ids.next(), name: "A"), EventType(id: ids.next(), name: "B")]
        for type in types {
            try await store.createEventType(type)
            try await store.createPropertyDefinition(
                PropertyDefinition(id: ids.next(), eventTypeId: type.id, key: "shots", propertyType: .number))
        }
    }

    /// A page of 1–20 pulled events, one in `replacingOneIn` (nil: none) an update of one here.
    func pull(_ rng: inout AggregateTests.Rng, replacingOneIn: Int?) async throws {
        var changes: [Change] = []
        for _ in 0..<(1 + rng.int(20)) {
            cursor += 1
            let existing = replacingOneIn.map { rng.int($0) == 0 } == true && !events.isEmpty ? rng.pick(events) : nil
            let e = AggregateTests.randomEvent(&rng, id: existing ?? ids.next(), types: types)
            if existing == nil { events.append(e.id) }
            changes.append(
                AggregateTests.pulled(e, cursor: cursor, update: existing != nil, at: AggregateTests.loadNow))
        }
        _ = try await store.apply(ChangesPage(changes: changes, nextCursor: cursor, hasMore: true))
    }

    func log(_ rng: inout AggregateTests.Rng) async throws {
        let e = AggregateTests.randomEvent(&rng, id: ids.next(), types: types)
        try await store.createEvent(e)
        events.append(e.id)
    }

    func edit(_ rng: inout AggregateTests.Rng) async throws {
        guard !events.isEmpty, var e = try await store.event(id: rng.pick(events))?.value else { return }
        let other = AggregateTests.randomEvent(&rng, id: e.id, types: types)
        (e.timestamp, e.properties, e.eventTypeId) = (other.timestamp, other.properties, other.eventTypeId)
        try await store.updateEvent(e)
    }

    func delete(_ rng: inout AggregateTests.Rng) async throws {
        guard !events.isEmpty else { return }
        try await store.deleteEvent(id: events.remove(at: rng.int(events.count)))
    }

    func changeDayStart(_ rng: inout AggregateTests.Rng) async throws {
        var s = try await insights.settings()
        s.dayStartHour = rng.int(7)
        try await insights.save(s)
    }
}
