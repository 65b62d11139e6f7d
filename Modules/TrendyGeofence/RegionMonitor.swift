import Foundation
import TrendyModels

/// A circular region as the platform monitors it: an identifier, a centre and a radius.
public struct MonitoredRegion: Hashable, Sendable, Codable {
    /// The identifier the app registered it under (see ``RegionNamespace``).
    public var identifier: String
    /// Centre of the circle.
    public var center: Coordinate
    /// Radius in metres.
    public var radius: Double

    /// Creates a region.
    public init(identifier: String, center: Coordinate, radius: Double) {
        self.identifier = identifier
        self.center = center
        self.radius = radius
    }

    /// Whether `other` has the same geometry, to within a centimetre (values that went through
    /// a file or the wire compare equal).
    public func sameGeometry(as other: MonitoredRegion) -> Bool {
        abs(center.latitude - other.center.latitude) < 1e-7 && abs(center.longitude - other.center.longitude) < 1e-7
            && abs(radius - other.radius) < 0.01
    }
}

/// The location permission the platform reports. Geofencing needs ``always``.
public enum LocationAuthorization: String, Sendable, Hashable, Codable, CaseIterable {
    /// Never asked.
    case notDetermined = "not_determined"
    /// The person said no (or turned it off in Settings).
    case denied
    /// Not allowed by policy (parental controls, device management).
    case restricted
    /// Only while the app is in use: regions are not monitored in the background.
    case whenInUse = "when_in_use"
    /// Always: regions are monitored and crossings relaunch the app.
    case always

    /// Whether regions can be monitored.
    public var allowsMonitoring: Bool { self == .always }
}

/// Where the device is relative to a region.
public enum RegionState: String, Sendable, Hashable, Codable {
    /// Inside the circle.
    case inside
    /// Outside it.
    case outside
    /// Not known yet (no location).
    case unknown
}

/// What a region monitor reports.
public enum RegionMonitorEventKind: Sendable, Hashable {
    /// The device entered a monitored region.
    case entered(identifier: String)
    /// The device left a monitored region.
    case exited(identifier: String)
    /// The answer to ``RegionMonitor/requestState(identifier:)``.
    case determined(identifier: String, state: RegionState)
    /// The permission changed (in Settings, or after a prompt).
    case authorizationChanged(LocationAuthorization)
}

/// One report from a region monitor, numbered in delivery order.
public struct RegionMonitorEvent: Sendable, Hashable {
    /// Increases by one per event of a monitor; lets a consumer say what it has processed.
    public var sequence: UInt64
    /// What happened.
    public var kind: RegionMonitorEventKind
    /// When it happened (the location fix's time, not when it was delivered).
    public var at: Date
    /// Where the device was, when known.
    public var location: Coordinate?

    /// Creates an event.
    public init(sequence: UInt64, kind: RegionMonitorEventKind, at: Date, location: Coordinate?) {
        self.sequence = sequence
        self.kind = kind
        self.at = at
        self.location = location
    }
}

/// The platform's region monitoring (CoreLocation on iOS, a simulation driven by a location
/// stream on Linux). The platform allows a limited number of regions per app (``capacity``).
///
/// Threading: implementations are actors or otherwise thread-safe; events arrive on the stream
/// in order.
public protocol RegionMonitor: Sendable {
    /// How many regions the platform lets the app monitor at once (20 on iOS).
    var capacity: Int { get }
    /// The regions monitored now, including ones the app did not register this run.
    func monitoredRegions() async -> [MonitoredRegion]
    /// Starts monitoring `region`, replacing one with the same identifier.
    func startMonitoring(_ region: MonitoredRegion) async throws
    /// Stops monitoring the region with `identifier` (unknown identifiers are ignored).
    func stopMonitoring(identifier: String) async
    /// Asks for a region's state; the answer arrives as a `.determined` event.
    func requestState(identifier: String) async
    /// Reports, in order. One consumer.
    func events() -> AsyncStream<RegionMonitorEvent>
    /// The permission right now.
    func authorization() async -> LocationAuthorization
    /// Asks for "while in use" (the first of the two steps); returns the resulting status.
    func requestWhenInUseAuthorization() async -> LocationAuthorization
    /// Asks to upgrade to "always" (the second step); returns the resulting status.
    func requestAlwaysAuthorization() async -> LocationAuthorization
    /// The last location the platform knows, if any.
    func lastKnownLocation() async -> Coordinate?
}

/// Which region identifiers belong to the app: only these are ever added or removed, so regions
/// registered by other code in the same app are left alone.
public struct RegionNamespace: Sendable, Hashable {
    /// The prefix of every identifier the app owns, e.g. `trendy.`.
    public var prefix: String

    /// Creates a namespace.
    public init(prefix: String = "trendy.") { self.prefix = prefix }

    /// The identifier of a geofence's region.
    public func identifier(for geofence: UUIDv7) -> String { "\(prefix)geofence.\(geofence)" }

    /// The identifier of the refresh region around the device.
    public var refreshIdentifier: String { "\(prefix)refresh" }

    /// Whether the app owns `identifier`.
    public func owns(_ identifier: String) -> Bool { identifier.hasPrefix(prefix) }

    /// The geofence an identifier stands for, if it is one of the app's geofence regions.
    public func geofenceId(from identifier: String) -> UUIDv7? {
        let head = "\(prefix)geofence."
        guard identifier.hasPrefix(head) else { return nil }
        return UUIDv7(String(identifier.dropFirst(head.count)))
    }
}
