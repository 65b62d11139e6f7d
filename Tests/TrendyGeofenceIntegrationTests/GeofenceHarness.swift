import Foundation
import GRDB
import Logging
import TrendyGeofence
import TrendyGeofenceLive
import TrendyLogging
import TrendyModels
import TrendySync
import TrendySyncLive
import TrendyTestSupport

/// The live geofence parts over a real SQLite file in a temporary folder: the local store, the
/// ledger, the inbox, the simulated monitor and a manager. ``restarted()`` builds fresh instances
/// over the same files, as a relaunch does.
struct GeofenceHarness: Sendable {
    let folder: TemporaryDirectory
    let database: DatabasePool
    let store: SQLiteLocalStore
    let ledger: SQLiteVisitLedger
    let inbox: FileRegionEventInbox
    let monitor: SimulatedRegionMonitor
    let manager: GeofenceManager
    let ids = UUIDv7Generator()

    static let logger = LogSystem.disabled().logger(.geofence)

    init(folder: TemporaryDirectory = TemporaryDirectory("trendy-gf"), capacity: Int = 20) throws {
        self.folder = folder
        var migrator = DatabaseMigrator()
        SyncSchema.register(in: &migrator)
        GeofenceSchema.register(in: &migrator)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        database = try DatabasePool(
            path: folder.url.appendingPathComponent("db.sqlite").path, configuration: configuration)
        try migrator.migrate(database)
        store = SQLiteLocalStore(database: database, logger: Self.logger)
        ledger = SQLiteVisitLedger(local: store, ids: ids, logger: Self.logger)
        inbox = FileRegionEventInbox(directory: folder.url.appendingPathComponent("inbox"), logger: Self.logger)
        monitor = SimulatedRegionMonitor(
            file: folder.url.appendingPathComponent("location.json"), capacity: capacity, logger: Self.logger)
        manager = GeofenceManager(
            monitor: monitor, geofences: SavedGeofences(store), ledger: ledger, inbox: inbox, logger: Self.logger)
    }

    /// New instances over the same files (the process was killed and started again).
    func restarted(capacity: Int = 20) throws -> GeofenceHarness {
        try GeofenceHarness(folder: folder, capacity: capacity)
    }

    /// An event type and an active geofence of `radius` at `center` that logs it.
    @discardableResult
    func geofence(
        _ name: String, at center: Coordinate, radius: Double = 100, exitType: Bool = false
    ) async throws -> Geofence {
        let type = EventType(id: ids.next(), name: "\(name) visit", color: "#112233", icon: "pin")
        try await store.createEventType(type)
        var exit: UUIDv7?
        if exitType {
            let t = EventType(id: ids.next(), name: "\(name) left", color: "#112233", icon: "pin")
            try await store.createEventType(t)
            exit = t.id
        }
        let g = Geofence(
            id: ids.next(), name: name, center: center, radius: radius, entryEventTypeId: type.id,
            exitEventTypeId: exit)
        try await store.createGeofence(g)
        return g
    }

    func events() async throws -> [Event] { try await store.events(limit: 10_000, since: nil).map(\.value) }

    /// Outbox rows for one event.
    func outbox(for eventId: UUIDv7) async throws -> [(kind: String, payload: String?)] {
        try await database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT kind, payload FROM outbox WHERE entity = 'event' AND entity_id = ? ORDER BY seq",
                arguments: [eventId.description]
            ).map { ($0["kind"], $0["payload"]) }
        }
    }

    /// Always-authorized, started manager, device at `location` (if given).
    func ready(at location: Coordinate? = nil) async {
        await monitor.setAuthorization(.always)
        if let location { await monitor.update(LocationFix(location, time: Date())) }
        await manager.start()
        await settle()
    }

    /// Waits until the manager has handled everything the monitor reported.
    func settle() async { await monitor.settled(by: manager) }

    func move(to c: Coordinate, at time: Date) async {
        await monitor.update(LocationFix(c, time: time))
        await settle()
    }
}

/// A point `metres` north of `c`.
func north(of c: Coordinate, _ metres: Double) -> Coordinate {
    Coordinate(latitude: c.latitude + metres / 111_195, longitude: c.longitude)
}

let berlin = Coordinate(latitude: 52.52, longitude: 13.405)
