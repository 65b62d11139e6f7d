import Foundation
import TrendyModels

/// How geofencing is doing: what is monitored against what is saved, and what to do about it.
public struct GeofenceHealth: Sendable, Hashable, Codable {
    /// One geofence's part of the report.
    public struct Region: Sendable, Hashable, Codable {
        /// The geofence.
        public var id: UUIDv7
        /// Its name.
        public var name: String
        /// Whether it is active.
        public var active: Bool
        /// Whether the platform monitors it now.
        public var monitored: Bool
        /// Whether the app recorded the device inside.
        public var inside: Bool
        /// The entry event waiting for its exit.
        public var openEventId: UUIDv7?
        /// The last crossing handled for it.
        public var lastCrossing: HandledCrossing?

        enum CodingKeys: String, CodingKey {
            case id, name, active, monitored, inside
            case openEventId = "open_event_id"
            case lastCrossing = "last_crossing"
        }
    }

    /// Everything works as it should.
    public var ok: Bool
    /// The location permission.
    public var authorization: LocationAuthorization
    /// What the person should do, when something is wrong.
    public var advice: [String]
    /// How many regions the platform allows.
    public var capacity: Int
    /// Saved geofences (active ones).
    public var saved: Int
    /// Saved geofences in all.
    public var savedTotal: Int
    /// The app's regions the platform monitors now (geofences and the refresh region).
    public var monitored: [String]
    /// Regions other code registered (they use capacity).
    public var foreign: Int
    /// Geofences that should be monitored but are not.
    public var missing: [UUIDv7]
    /// The app's monitored regions with no saved active geofence behind them.
    public var orphaned: [String]
    /// Active geofences left out for lack of capacity (farther away than the monitored ones).
    public var overCapacity: Int
    /// The refresh region, if monitored.
    public var refreshRegion: MonitoredRegion?
    /// Crossings captured but not handled yet.
    public var inboxPending: Int
    /// Per geofence, by name.
    public var regions: [Region]

    enum CodingKeys: String, CodingKey {
        case ok, authorization, advice, capacity, saved, monitored, foreign, missing, orphaned, regions
        case savedTotal = "saved_total"
        case overCapacity = "over_capacity"
        case refreshRegion = "refresh_region"
        case inboxPending = "inbox_pending"
    }

    /// What a person should do for each authorization that stops geofencing.
    public static func advice(for authorization: LocationAuthorization) -> String? {
        switch authorization {
        case .always: nil
        case .notDetermined:
            "Location access has not been asked for yet: allow it (\"While Using\", then \"Always\") so places can "
                + "log events."
        case .whenInUse:
            "Location access is \"While Using\": geofences need \"Always\". Open Settings → Trendy → Location and "
                + "choose \"Always\"."
        case .denied:
            "Location access is off, so places cannot log events. Open Settings → Trendy → Location and choose "
                + "\"Always\"."
        case .restricted:
            "Location access is restricted on this device (parental controls or device management); geofences "
                + "cannot work until that changes."
        }
    }
}

/// Why the manager reconciled.
public enum ReconcileReason: String, Sendable, Hashable, Codable {
    /// The app launched.
    case launch
    /// The app came to the foreground.
    case foreground
    /// The location permission changed.
    case authorization
    /// A sync (or a local edit) changed the saved geofences.
    case geofencesChanged = "geofences_changed"
    /// The device left the refresh region.
    case refreshExit = "refresh_exit"
    /// Someone asked.
    case manual
}

/// What a reconcile did.
public struct ReconcileReport: Sendable, Hashable, Codable {
    /// Why it ran.
    public var reason: ReconcileReason
    /// Whether monitoring is allowed (when not, nothing was changed).
    public var authorized: Bool
    /// Identifiers started.
    public var added: [String]
    /// Identifiers stopped.
    public var removed: [String]
    /// Identifiers left as they were.
    public var kept: [String]
    /// Active geofences left out for lack of capacity.
    public var overCapacity: Int
    /// What went wrong, if anything.
    public var error: String?

    enum CodingKeys: String, CodingKey {
        case reason, authorized, added, removed, kept, error
        case overCapacity = "over_capacity"
    }
}
