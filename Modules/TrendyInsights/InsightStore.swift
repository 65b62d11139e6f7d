import Foundation

/// What insights read and keep on a device: the person's settings and the data they are computed
/// from. The Insights feature owns this port; the install database implements it
/// (`SQLiteInsightStore`, from aggregates), and a scan of events does the same for tests
/// (`InMemoryInsightStore`).
public protocol InsightStore: Sendable {
    /// The zone offsets the store counts days with (pass them to ``Insights/report(_:settings:correlation:correlate:cache:)``:
    /// reading a zone's history from the platform takes milliseconds).
    var zones: ZoneOffsetCache { get }
    /// The person's settings (first use: the device's zone, days starting at midnight).
    func settings() async throws -> InsightSettings
    /// Keeps new settings and counts every day again with them. Throws
    /// ``InsightSettingsError`` for settings that are not possible.
    func save(_ settings: InsightSettings) async throws
    /// The data insights are computed from, at `now`, for a person now in `zone`; only the type
    /// `typeId`'s days when one is given (what one new event changes: its streak and week).
    func data(now: Date, zone: String, typeId: String?) async throws -> InsightData
    /// The same data read from the events one by one with `settings` (the saved ones or others
    /// tried for once), not from aggregates (`insights explain` shows both agree).
    func scan(now: Date, zone: String, settings: InsightSettings) async throws -> InsightData
    /// Whether the store counts every event it holds: false while the counts are being built
    /// (the end of a new device's first download) — a report then counts part of the history.
    func countsEveryEvent() async throws -> Bool
}

/// Settings that cannot be kept, with every reason.
public struct InsightSettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The reasons.
    public var issues: [String]

    /// Creates one.
    public init(issues: [String]) { self.issues = issues }

    /// The reasons in one line.
    public var description: String { issues.joined(separator: "; ") }
}
