import Foundation
import TrendyModels

/// A geofence as the planner sees it, with its centre precomputed as a unit vector so ranking
/// thousands of them costs one square root and one arcsine each.
public struct PlannerGeofence: Sendable, Hashable {
    /// The geofence.
    public let id: UUIDv7
    /// Centre.
    public let center: Coordinate
    /// Radius in metres.
    public let radius: Double
    /// Only active geofences are monitored.
    public let isActive: Bool
    let vector: UnitVector

    /// Prepares a geofence for planning.
    public init(id: UUIDv7, center: Coordinate, radius: Double, isActive: Bool = true) {
        self.id = id
        self.center = center
        self.radius = radius
        self.isActive = isActive
        vector = UnitVector(center)
    }

    /// Prepares a stored geofence for planning.
    public init(_ geofence: Geofence) {
        self.init(id: geofence.id, center: geofence.center, radius: geofence.radius, isActive: geofence.isActive)
    }
}

/// A point on the unit sphere; the great-circle distance between two is `2·asin(chord/2)·R`,
/// which equals the haversine distance.
public struct UnitVector: Sendable, Hashable {
    let x: Double
    let y: Double
    let z: Double

    /// The point for a coordinate.
    public init(_ c: Coordinate) {
        let lat = c.latitude * .pi / 180
        let lon = c.longitude * .pi / 180
        let cl = cos(lat)
        x = cl * cos(lon)
        y = cl * sin(lon)
        z = sin(lat)
    }

    /// Great-circle distance in metres.
    public func distance(to o: UnitVector) -> Double {
        let dx = x - o.x
        let dy = y - o.y
        let dz = z - o.z
        let chord = (dx * dx + dy * dy + dz * dz).squareRoot()
        return 2 * Coordinate.earthRadius * asin(min(1, chord / 2))
    }
}

/// What to change so the monitored set matches the plan. Apply removals before additions.
public struct RegionPlan: Sendable, Hashable {
    /// Regions to start monitoring (a changed region appears here and in ``remove``).
    public var add: [MonitoredRegion]
    /// Identifiers to stop monitoring.
    public var remove: [String]
    /// Identifiers already monitored as planned.
    public var keep: [String]
    /// The geofences chosen, nearest first.
    public var selected: [UUIDv7]
    /// Active geofences left out for lack of capacity, in input order.
    public var unmonitored: [UUIDv7]
    /// The refresh region, when one is planned.
    public var refresh: MonitoredRegion?

    /// Whether applying the plan changes nothing.
    public var isEmpty: Bool { add.isEmpty && remove.isEmpty }
}

/// Chooses which geofences to monitor under the platform's limit. Pure: the same input always
/// gives the same plan.
///
/// - Geofences are ranked by the distance from the device to their edge (zero inside); the ones
///   the device is inside (by location or by recorded visit state) come first and are never
///   evicted; ties break by id, so the order is total.
/// - When not every active geofence fits, and the location is known, one slot holds a refresh
///   region centred on the device that reaches the nearest geofence left out: leaving it means
///   the nearest set may have changed, so the manager plans again.
/// - Without a location the most recently created geofences win (ids are UUIDv7, time-ordered).
/// - Only identifiers in the namespace are added or removed; others still use up capacity.
/// - A region whose centre or radius changed is removed and added again.
public struct GeofencePlanner: Sendable {
    /// How many regions the platform allows.
    public var capacity: Int
    /// Which identifiers are the app's.
    public var namespace: RegionNamespace
    /// The refresh region's smallest radius, in metres.
    public var minimumRefreshRadius: Double
    /// The refresh region's largest radius, in metres.
    public var maximumRefreshRadius: Double

    /// Creates a planner.
    public init(
        capacity: Int = 20, namespace: RegionNamespace = RegionNamespace(), minimumRefreshRadius: Double = 100,
        maximumRefreshRadius: Double = 100_000
    ) {
        self.capacity = capacity
        self.namespace = namespace
        self.minimumRefreshRadius = minimumRefreshRadius
        self.maximumRefreshRadius = maximumRefreshRadius
    }

    /// Plans the monitored set.
    /// - Parameters:
    ///   - geofences: every saved geofence (inactive ones are ignored).
    ///   - location: the device's location, if known.
    ///   - monitored: what the platform monitors now.
    ///   - inside: geofences the device is inside by recorded visit state.
    public func plan(
        geofences: [PlannerGeofence], location: Coordinate?, monitored: [MonitoredRegion], inside: Set<UUIDv7> = []
    ) -> RegionPlan {
        let foreign = monitored.reduce(0) { $0 + (namespace.owns($1.identifier) ? 0 : 1) }
        let slots = max(0, capacity - foreign)
        let here = location.map(UnitVector.init)

        // One pass: each active geofence's key (one distance each), and how many are occupied.
        var keys: [RankKey] = []
        var positions: [Int] = []
        keys.reserveCapacity(geofences.count)
        positions.reserveCapacity(geofences.count)
        var insideCount = 0
        for (position, g) in geofences.enumerated() where g.isActive {
            let key = Self.key(g, here: here, inside: inside)
            if key.group == 0 { insideCount += 1 }
            keys.append(key)
            positions.append(position)
        }

        var selected: [Int] = []
        var unmonitored: [UUIDv7] = []
        var refresh: MonitoredRegion?
        if keys.count <= slots {
            selected = keys.indices.sorted { keys[$0] < keys[$1] }.map { positions[$0] }
        } else {
            let wantRefresh = here != nil && slots >= 2
            // The refresh slot gives way when the device is inside more geofences than fit otherwise.
            let geofenceSlots = wantRefresh && insideCount < slots ? slots - 1 : slots
            var best = TopK(limit: geofenceSlots)
            var nearestLeftOut: RankKey?
            for k in keys.indices {
                if let dropped = best.insert(key: keys[k], index: k) {
                    if nearestLeftOut.map({ keys[dropped] < $0 }) ?? true { nearestLeftOut = keys[dropped] }
                    unmonitored.append(geofences[positions[dropped]].id)
                }
            }
            selected = best.indices.map { positions[$0] }
            if wantRefresh, geofenceSlots < slots, let location {
                let reach = nearestLeftOut?.distance ?? maximumRefreshRadius
                refresh = MonitoredRegion(
                    identifier: namespace.refreshIdentifier, center: location,
                    radius: min(maximumRefreshRadius, max(minimumRefreshRadius, reach)))
            }
        }

        var wanted: [String: MonitoredRegion] = [:]
        var order: [MonitoredRegion] = []
        for position in selected {
            let g = geofences[position]
            let region = MonitoredRegion(
                identifier: namespace.identifier(for: g.id), center: g.center, radius: g.radius)
            wanted[region.identifier] = region
            order.append(region)
        }
        if let refresh {
            wanted[refresh.identifier] = refresh
            order.append(refresh)
        }
        var keep: [String] = []
        var remove: [String] = []
        var kept = Set<String>()
        for region in monitored where namespace.owns(region.identifier) {
            if let want = wanted[region.identifier], want.sameGeometry(as: region), !kept.contains(region.identifier) {
                keep.append(region.identifier)
                kept.insert(region.identifier)
            } else {
                remove.append(region.identifier)
            }
        }
        let add = order.filter { !kept.contains($0.identifier) }
        return RegionPlan(
            add: add, remove: remove, keep: keep, selected: selected.map { geofences[$0].id }, unmonitored: unmonitored,
            refresh: refresh)
    }

    /// Group 0: the device is inside; then by distance to the edge (or newest first without a
    /// location); then by id.
    static func key(_ g: PlannerGeofence, here: UnitVector?, inside: Set<UUIDv7>) -> RankKey {
        let recordedInside = !inside.isEmpty && inside.contains(g.id)
        guard let here else {
            return RankKey(group: recordedInside ? 0 : 1, distance: 0, id: g.id, newestFirst: true)
        }
        let edge = max(0, g.vector.distance(to: here) - g.radius)
        let isInside = edge == 0 || recordedInside
        return RankKey(group: isInside ? 0 : 1, distance: isInside ? 0 : edge, id: g.id, newestFirst: false)
    }
}

struct RankKey: Comparable, Sendable {
    var group: Int
    var distance: Double
    var id: UUIDv7
    var newestFirst: Bool

    static func < (a: RankKey, b: RankKey) -> Bool {
        if a.group != b.group { return a.group < b.group }
        if a.distance != b.distance { return a.distance < b.distance }
        return a.newestFirst ? b.id < a.id : a.id < b.id
    }
}

/// The `limit` smallest keys seen (by their index in the caller's key list), kept sorted; most
/// inserts are one comparison with the worst.
struct TopK {
    let limit: Int
    private(set) var indices: [Int] = []
    private var keys: [RankKey] = []

    init(limit: Int) {
        self.limit = limit
        indices.reserveCapacity(limit + 1)
        keys.reserveCapacity(limit + 1)
    }

    /// Inserts `key`; returns the index that no longer fits (possibly `index` itself).
    mutating func insert(key: RankKey, index: Int) -> Int? {
        if keys.count == limit {
            guard let worst = keys.last, key < worst else { return index }
        }
        var lo = 0
        var hi = keys.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if keys[mid] < key { lo = mid + 1 } else { hi = mid }
        }
        keys.insert(key, at: lo)
        indices.insert(index, at: lo)
        guard keys.count > limit else { return nil }
        keys.removeLast()
        return indices.removeLast()
    }
}
