import ArgumentParser
import GRDB

/// The plugin list: the one place the app's features are chosen.
public enum AppPlugins {
    /// Every feature, in the order their hooks run on launch and foreground. Geofence comes
    /// before Sync: crossings captured by a background launch are recorded before the launch's
    /// sync pass, which then pushes their events. Logging, Auth and Sync are the platform every
    /// other feature builds on (``AppComposition`` refuses a list without them).
    public static let standard: [any TrendyPlugin] = [
        LoggingPlugin(),
        GeofencePlugin(),
        AuthPlugin(),
        SyncPlugin(),
        OnboardingPlugin(),
        InsightsPlugin(),
    ]

    /// The plugins of the program running now: the executable's list, set by
    /// ``TrendyCommand/start(_:root:plugins:)`` for every command it runs (``standard`` when a
    /// command runs without it, as in tests).
    @TaskLocal public static var active: [any TrendyPlugin] = standard

    /// The plugins no app can leave out.
    static let required = ["logging", "auth", "sync"]

    /// Commands that belong to the program, not to a feature.
    static let programCommands: [any ParsableCommand.Type] = [
        AppCommand.self, OpenCommand.self, LaunchCommand.self, TourCommand.self, RepairCommand.self,
        PluginsCommand.self,
    ]

    /// The order help lists features in (a person's order, not the lifecycle's); others follow.
    static let helpOrder = ["auth", "sync", "insights", "geofence", "onboarding", "logging", "dev-backend"]

    /// The `trendy` subcommands for `plugins`: `version`, each plugin's (in ``helpOrder``), then
    /// the program's own.
    public static func commands(for plugins: [any TrendyPlugin]) -> [any ParsableCommand.Type] {
        let ordered = plugins.enumerated().sorted { a, b in
            let (x, y) = (helpOrder.firstIndex(of: a.element.name), helpOrder.firstIndex(of: b.element.name))
            return (x ?? Int.max, a.offset) < (y ?? Int.max, b.offset)
        }
        return [VersionCommand.self] + ordered.flatMap { $0.element.commands } + programCommands
    }

    /// The local database's migrations: the platform plugins' first (the tables every feature
    /// builds on), then each other plugin's in list order — independent of the order hooks run.
    static func migrator(_ plugins: [any TrendyPlugin]) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        let platform = plugins.filter { required.contains($0.name) }
        let features = plugins.filter { !required.contains($0.name) }
        for plugin in platform + features { plugin.registerMigrations(in: &migrator) }
        return migrator
    }

    /// Whether `plugins` has the one named `name`.
    static func has(_ name: String, in plugins: [any TrendyPlugin]) -> Bool { plugins.contains { $0.name == name } }
}
