import TrendySync
import TrendySyncLive

/// Sync's contribution to the lifecycle: a pass after launch and on foreground. (The launch loads
/// the counts itself, before the first frame.)
struct SyncModule: AppModule {
    let engine: OutboxSyncEngine
    /// Runs after each pass this module starts (the geofence manager re-plans when geofences came in).
    var afterPass: @Sendable (SyncRun) async -> Void = { _ in }

    var name: String { "sync" }

    func didLaunch() async { await afterPass(await engine.sync(full: false)) }

    func willEnterForeground() async { await afterPass(await engine.sync(full: false)) }

    func health() async -> ModuleHealth {
        let s = engine.status
        return ModuleHealth(
            module: name, ok: s.failedCount == 0,
            details: [
                "phase": s.phase.name, "pending": String(s.pendingCount), "failed": String(s.failedCount),
            ])
    }
}
