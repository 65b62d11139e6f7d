import TrendyGeofence
import TrendyModels
import TrendySync

/// ``GeofenceSource`` over Sync's local store: the geofences saved in the install.
public struct SavedGeofences: GeofenceSource {
    let store: any LocalStore

    /// Reads `store`.
    public init(_ store: any LocalStore) { self.store = store }

    public func geofences() async throws -> [Geofence] { try await store.geofences().map(\.value) }
}
