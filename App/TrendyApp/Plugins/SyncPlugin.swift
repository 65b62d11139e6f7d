import ArgumentParser
import GRDB
import TrendySync
import TrendySyncLive

/// Sync: the local store's schema, the data commands (types, events, import, sync, conflicts,
/// status) and a pass after launch and on foreground.
public struct SyncPlugin: TrendyPlugin {
    /// Creates the plugin.
    public init() {}

    /// The plugin's name.
    public var name: String { "sync" }
    /// What the feature does.
    public var summary: String { "Offline-first local store, outbox and sync engine, conflicts." }
    /// The commands the feature owns.
    public var commands: [any ParsableCommand.Type] {
        [
            TypesCommand.self, LogCommand.self, EventsCommand.self, ImportCommand.self, ExportCommand.self,
            SyncCommand.self,
            ConflictsCommand.self, StatusCommand.self,
        ]
    }
    /// What the feature reads.
    public var settings: [PluginSetting] {
        [
            .init(.file, "trendy.sqlite", "the local database (events, types, outbox, conflicts)"),
            .init(.environment, "TRENDY_API_URL", "the server to sync with (default: the embedded backend)"),
            .init(.environment, "TRENDY_SERVER_TIMEOUT", "seconds before the server counts as not responding"),
            .init(.option, "--api-url", "the same, for one command"),
            .init(.option, "--server-timeout", "the same, for one command"),
        ]
    }

    /// Adds the feature's local-database migrations.
    public func registerMigrations(in migrator: inout DatabaseMigrator) { SyncSchema.register(in: &migrator) }

    /// Builds the feature's live parts.
    public func install(into app: inout AppAssembly) {
        app.modules.append(SyncModule(sync: app.platform.engine, afterPass: app.platform.afterSync))
    }
}

/// Sync's contribution to the lifecycle: a pass after launch and on foreground. (The launch loads
/// the counts itself, before the first frame.)
struct SyncModule: AppModule {
    let sync: any SyncEngine
    /// Runs after each pass this module starts (the geofence manager re-plans when geofences came in).
    let afterPass: SyncHooks

    var name: String { "sync" }

    func didLaunch() async { await afterPass.run(await sync.sync(full: false)) }

    func willEnterForeground() async { await afterPass.run(await sync.sync(full: false)) }

    func health() async -> ModuleHealth {
        let s = sync.status
        return ModuleHealth(
            module: name, ok: s.failedCount == 0,
            details: [
                "phase": s.phase.name, "pending": String(s.pendingCount), "failed": String(s.failedCount),
            ])
    }
}
