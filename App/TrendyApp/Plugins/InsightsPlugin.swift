import ArgumentParser
import GRDB
import TrendyInsights
import TrendyInsightsLive
import TrendySyncLive

/// Insights (issue 34): streaks, this week against last, time patterns and corrected
/// correlations, computed on the device from daily aggregates its database keeps; the dashboard's
/// banner, the Analytics tab and `trendy insights`.
public struct InsightsPlugin: TrendyPlugin {
    /// Creates the plugin.
    public init() {}

    /// The plugin's name.
    public var name: String { "insights" }
    /// What the feature does.
    public var summary: String { "Streaks, weeks, time patterns and corrected correlations, on the device." }
    /// The commands the feature owns.
    public var commands: [any ParsableCommand.Type] { [InsightsCommand.self] }
    /// What the feature reads.
    public var settings: [PluginSetting] {
        [
            .init(.file, "trendy.sqlite", "the daily aggregates and the insight settings (zone, day start, skips)"),
            .init(.environment, "TRENDY_TIME_ZONE", "the zone the device is in (default: the system's)"),
        ]
    }

    /// Adds the aggregates and the triggers that keep them (after Sync's tables).
    public func registerMigrations(in migrator: inout DatabaseMigrator) { InsightSchema.register(in: &migrator) }
    public var derivedTables: Set<String> { InsightSchema.derived }
    /// A download into an empty store builds the aggregates once at the end (D63), 10,000 events
    /// a transaction (D67).
    public var bulkLoad: DerivedFromEvents? {
        DerivedFromEvents(
            begin: InsightSchema.bulkLoadBegin, end: InsightSchema.bulkLoadEnd, present: InsightSchema.bulkLoadPresent,
            inParts: InsightSchema.bulkLoadInParts)
    }

    /// Builds the feature's live parts.
    public func install(into app: inout AppAssembly) {
        let zone = app.platform.timeZone
        app.insights = SQLiteInsightStore(database: app.platform.database, defaultZone: { zone })
    }
}
