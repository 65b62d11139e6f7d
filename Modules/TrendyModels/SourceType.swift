/// How an event came to exist.
public enum SourceType: String, Hashable, Sendable, Codable, CaseIterable {
    /// Logged by hand.
    case manual
    /// From a bulk import.
    case imported
    /// Created by crossing a geofence.
    case geofence
    /// From a HealthKit sample (de-duplicated by its sample id).
    case healthkit
}
