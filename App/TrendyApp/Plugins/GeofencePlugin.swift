import ArgumentParser
import GRDB
import TrendyGeofence
import TrendyGeofenceLive
import TrendyLogging
import TrendySync
import TrendySyncLive

/// Geofence: regions from the account's geofences, crossings to events (one transaction with the
/// outbox entry, through Sync's unit-of-work port), `trendy geofence` and `trendy location`.
public struct GeofencePlugin: TrendyPlugin {
    /// Creates the plugin.
    public init() {}

    /// The plugin's name.
    public var name: String { "geofence" }
    /// What the feature does.
    public var summary: String { "Geofences, region monitoring, enter/exit events, background wake-ups." }
    /// The commands the feature owns.
    public var commands: [any ParsableCommand.Type] { [GeofenceCommand.self, LocationCommand.self] }
    /// What the feature reads.
    public var settings: [PluginSetting] {
        [
            .init(.file, "location.json", "the simulated device: location, permission, monitored regions"),
            .init(.file, "region-inbox/", "crossings stored by a wake-up before the app was up"),
        ]
    }

    /// Adds the feature's local-database migrations.
    public func registerMigrations(in migrator: inout DatabaseMigrator) { GeofenceSchema.register(in: &migrator) }

    /// Builds the feature's live parts.
    public func install(into app: inout AppAssembly) {
        let platform = app.platform
        let logger = platform.logs.logger(.geofence)
        let location = SimulatedRegionMonitor(file: platform.paths.locationFile, logger: logger)
        let engine = platform.engine
        let geofence = GeofenceManager(
            monitor: location, geofences: SavedGeofences(platform.store),
            ledger: SQLiteVisitLedger(local: platform.store, ids: platform.ids, logger: logger),
            inbox: AppComposition.regionInbox(platform.paths, platform.logs), logger: logger,
            localWriteHappened: { await engine.localWriteHappened() })
        // A pass that pulled changes may have brought geofences: the monitored regions follow
        // (after the launch's pass, and after `trendy sync`).
        platform.afterSync.add { run in
            guard run.pulled > 0 else { return }
            await geofence.start()
            await geofence.geofencesMayHaveChanged()
            await location.settled(by: geofence)
            await location.flush()
        }
        app.geofence = geofence
        app.location = location
        app.modules.append(GeofenceModule(geofence: geofence, location: location))
        app.onClose.append {
            await geofence.stop()
            await location.flush()
        }
    }
}

/// Geofence's part of the lifecycle: on launch, crossings captured by a background launch are
/// handled and the regions reconciled; on foreground, reconciled again; after each, and on
/// background, the simulated platform state is saved (other processes read it).
struct GeofenceModule: AppModule {
    let geofence: any GeofenceService
    let location: any LocationSimulator

    var name: String { "geofence" }

    func didLaunch() async {
        await geofence.start()
        await location.flush()
    }

    func willEnterForeground() async {
        await geofence.reconcile(.foreground)
        await location.flush()
    }

    func didEnterBackground() async { await location.flush() }

    func health() async -> ModuleHealth {
        let h = await geofence.health()
        var details = [
            "authorization": h.authorization.rawValue, "saved": String(h.saved),
            "monitored": String(h.monitored.count), "missing": String(h.missing.count),
            "orphaned": String(h.orphaned.count),
        ]
        if let advice = h.advice.first { details["advice"] = advice }
        return ModuleHealth(module: name, ok: h.ok, details: details)
    }
}
