import TrendyGeofence
import TrendyGeofenceLive

/// Geofence's part of the lifecycle: on launch, crossings captured by a background launch are
/// handled and the regions reconciled; on foreground, reconciled again; on background, the
/// simulated platform state is saved.
struct GeofenceModule: AppModule {
    let geofence: any GeofenceService
    let location: SimulatedRegionMonitor

    var name: String { "geofence" }

    func didLaunch() async { await geofence.start() }

    func willEnterForeground() async { await geofence.reconcile(.foreground) }

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
