import Foundation
import TrendyModels

/// One location fix: where and when.
public struct LocationFix: Sendable, Hashable {
    /// Where.
    public var coordinate: Coordinate
    /// When (nil when the source has no times: the delivery time is used).
    public var time: Date?

    /// Creates a fix.
    public init(_ coordinate: Coordinate, time: Date? = nil) {
        self.coordinate = coordinate
        self.time = time
    }
}

/// The controls of a simulated device's location: what `trendy location` and the tour drive, on
/// top of the ``RegionMonitor`` the geofence manager watches. `SimulatedRegionMonitor`
/// (TrendyGeofenceLive) is the one implementation here; a test may bring its own.
public protocol LocationSimulator: RegionMonitor {
    /// Changes the permission as the person would in Settings.
    func setAuthorization(_ status: LocationAuthorization) async
    /// Moves the device; returns the sequence number of the last event this produced, if any.
    @discardableResult func update(_ fix: LocationFix) async -> UInt64?
    /// The last event sequence number handed out.
    var lastSequence: UInt64 { get async }
    /// Writes the simulated state to its file if it changed.
    func flush() async
}

extension LocationSimulator {
    /// Returns once `service` has handled every event this simulator reported, including events
    /// reported while handling earlier ones (a re-plan asks for the state of the regions it adds).
    public func settled(by service: any GeofenceService) async {
        while true {
            let target = await lastSequence
            await service.waitUntilProcessed(target)
            if await lastSequence == target { return }
        }
    }
}
