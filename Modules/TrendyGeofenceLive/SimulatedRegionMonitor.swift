import Foundation
import Logging
import TrendyFiles
import TrendyGeofence
import TrendyLogging
import TrendyModels

/// Why the simulated monitor refused a request.
public enum RegionMonitorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The platform's region limit is reached.
    case capacityExceeded(Int)

    /// A sentence for people.
    public var description: String {
        switch self {
        case .capacityExceeded(let n): "the platform monitors at most \(n) regions"
        }
    }
}

/// A ``RegionMonitor`` driven by a location stream, so geofencing runs on Linux: enter and exit
/// are computed only for monitored regions (the capacity limit is real), with hysteresis so a
/// device standing on an edge does not flap. Like the platform, it remembers the monitored
/// regions, the permission and the last location across launches, in one owner-only file written
/// by ``flush()``: the app calls it after each unit of work (a reconcile, a handed-over move) and
/// when it closes, not once per change (a reconcile that registers 20 regions used to write and
/// `fsync` the file 20 times). A process killed before flushing loses only what the next reconcile
/// rebuilds; crossings stay exactly-once because the ledger, not this file, decides them.
///
/// Like the platform, it is one truth for every process of the install: before each use it reads
/// the file again when another process wrote it since (the app running while `trendy location
/// permission` or `trendy geofence add` ran in another terminal), keeping only what it changed
/// itself and has not saved yet. It used to keep its launch-time copy and write it back over
/// the other process's permission and regions (outside tester, issue 32).
///
/// Hysteresis: a region is entered when the device is within its radius and left only when it is
/// farther than the radius plus a margin (10% of the radius, at least 25 m, at most 200 m). A
/// region registered while the device is inside reports no entry (as on iOS); ask with
/// ``requestState(identifier:)``. A region registered before any location was known reports an
/// entry on the first fix inside it.
public actor SimulatedRegionMonitor: RegionMonitor {
    struct Tracked: Sendable {
        var region: MonitoredRegion
        var vector: UnitVector
        var inside: Bool?
    }

    struct Stored: Codable {
        var authorization: LocationAuthorization
        var location: Coordinate?
        var locationAt: Date?
        var regions: [StoredRegion]

        enum CodingKeys: String, CodingKey {
            case authorization, location, regions
            case locationAt = "location_at"
        }
    }

    struct StoredRegion: Codable {
        var region: MonitoredRegion
        var inside: Bool?
    }

    public nonisolated let capacity: Int
    let file: URL?
    let logger: Logger
    let now: @Sendable () -> Date
    let stream: AsyncStream<RegionMonitorEvent>
    let continuation: AsyncStream<RegionMonitorEvent>.Continuation

    var authorizationStatus: LocationAuthorization = .notDetermined
    var location: Coordinate?
    var locationVector: UnitVector?
    var locationAt: Date?
    var tracked: [Tracked] = []
    var sequence: UInt64 = 0
    /// What this process changed and has not saved yet.
    var unsaved: Set<Part> = []
    var dirty: Bool {
        get { !unsaved.isEmpty }
        set { unsaved = newValue ? Set(Part.allCases) : [] }
    }
    /// The file as this process last read or wrote it (nil: absent or not yet read).
    var seen: FileStamp?

    /// The parts of the simulated device's state, each taken from the file unless changed here.
    enum Part: CaseIterable { case authorization, location, regions }

    /// What identifies one version of the file: it is replaced whole on every write.
    struct FileStamp: Equatable {
        var inode: UInt64
        var modified: Date?
        var size: UInt64
    }

    /// Loads the simulated platform state from `file` (nil: in memory only); a damaged file starts
    /// fresh with a warning, as a reinstall would.
    public init(
        file: URL?, capacity: Int = 20, logger: Logger, now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.file = file
        self.capacity = capacity
        self.logger = logger
        self.now = now
        (stream, continuation) = AsyncStream.makeStream(of: RegionMonitorEvent.self)
        guard let file else { return }
        seen = Self.stamp(file)
        guard let stored = Self.load(file, logger: logger) else { return }
        authorizationStatus = stored.authorization
        location = stored.location
        locationVector = stored.location.map(UnitVector.init)
        locationAt = stored.locationAt
        tracked = Self.tracked(stored)
    }

    static func tracked(_ stored: Stored) -> [Tracked] {
        stored.regions.map { Tracked(region: $0.region, vector: UnitVector($0.region.center), inside: $0.inside) }
    }

    static func stamp(_ file: URL) -> FileStamp? {
        guard let a = try? FileManager.default.attributesOfItem(atPath: file.path) else { return nil }
        return FileStamp(
            inode: (a[.systemFileNumber] as? NSNumber)?.uint64Value ?? 0, modified: a[.modificationDate] as? Date,
            size: (a[.size] as? NSNumber)?.uint64Value ?? 0)
    }

    /// The stored state; nil when there is none, or it is damaged (a warning: it starts fresh, as
    /// a reinstall would).
    static func load(_ file: URL, logger: Logger) -> Stored? {
        do {
            guard let bytes = try OwnerOnlyFile.read(file, limit: 4 * 1024 * 1024) else { return nil }
            return try TrendyJSON.decoder().decode(Stored.self, from: Data(bytes))
        } catch {
            logger.warning(
                "Simulated location state unreadable; starting fresh",
                metadata: ["file": .string(file.lastPathComponent), "error": .string(String(describing: error))])
            return nil
        }
    }

    /// Takes the stored state, but for the parts in `keeping` (changed here, not yet saved).
    func take(_ stored: Stored, keeping: Set<Part>) {
        if !keeping.contains(.authorization) { authorizationStatus = stored.authorization }
        if !keeping.contains(.location) {
            location = stored.location
            locationVector = stored.location.map(UnitVector.init)
            locationAt = stored.locationAt
        }
        if !keeping.contains(.regions) { tracked = Self.tracked(stored) }
    }

    /// Reads the file again if another process wrote it since this one last did (see the type).
    func catchUp() {
        guard let file else { return }
        let now = Self.stamp(file)
        guard now != seen else { return }
        seen = now
        guard let stored = Self.load(file, logger: logger) else { return }
        take(stored, keeping: unsaved)
    }

    /// Writes the state to its file if it changed.
    public func flush() {
        catchUp()
        guard dirty, let file else { return }
        let stored = Stored(
            authorization: authorizationStatus, location: location, locationAt: locationAt,
            regions: tracked.map { StoredRegion(region: $0.region, inside: $0.inside) })
        do {
            try OwnerOnlyFile.write(try TrendyJSON.encoder().encode(stored), to: file)
            dirty = false
            seen = Self.stamp(file)
        } catch {
            logger.error("Cannot save the simulated location state", metadata: ["error": .error(error)])
        }
    }

    @discardableResult
    func emit(_ kind: RegionMonitorEventKind, at: Date) -> UInt64 {
        sequence += 1
        continuation.yield(RegionMonitorEvent(sequence: sequence, kind: kind, at: at, location: location))
        return sequence
    }

    static func exitMargin(_ radius: Double) -> Double { min(200, max(25, radius * 0.1)) }

    /// Inside, outside or in the band between, by the hysteresis rule.
    static func state(distance: Double, radius: Double, was: Bool?) -> Bool {
        if distance <= radius { return true }
        if was == true, distance <= radius + exitMargin(radius) { return true }
        return false
    }

    // MARK: RegionMonitor

    public func monitoredRegions() -> [MonitoredRegion] {
        catchUp()
        return tracked.map(\.region)
    }

    public func startMonitoring(_ region: MonitoredRegion) throws {
        catchUp()
        let inside = locationVector.map { UnitVector(region.center).distance(to: $0) <= region.radius }
        let entry = Tracked(region: region, vector: UnitVector(region.center), inside: inside)
        if let i = tracked.firstIndex(where: { $0.region.identifier == region.identifier }) {
            tracked[i] = entry
        } else {
            guard tracked.count < capacity else { throw RegionMonitorError.capacityExceeded(capacity) }
            tracked.append(entry)
        }
        unsaved.insert(.regions)
    }

    public func stopMonitoring(identifier: String) {
        catchUp()
        let before = tracked.count
        tracked.removeAll { $0.region.identifier == identifier }
        if tracked.count != before { unsaved.insert(.regions) }
    }

    public func requestState(identifier: String) {
        catchUp()
        guard let i = tracked.firstIndex(where: { $0.region.identifier == identifier }) else { return }
        var state = RegionState.unknown
        if let here = locationVector, authorizationStatus.allowsMonitoring {
            let t = tracked[i]
            let inside = Self.state(distance: t.vector.distance(to: here), radius: t.region.radius, was: t.inside)
            tracked[i].inside = inside
            unsaved.insert(.regions)
            state = inside ? .inside : .outside
        }
        emit(.determined(identifier: identifier, state: state), at: locationAt ?? now())
    }

    /// One stream for the monitor's lifetime.
    public nonisolated func events() -> AsyncStream<RegionMonitorEvent> { stream }

    public func authorization() -> LocationAuthorization {
        catchUp()
        return authorizationStatus
    }

    /// The simulated person allows.
    public func requestWhenInUseAuthorization() -> LocationAuthorization {
        catchUp()
        if authorizationStatus == .notDetermined { setAuthorization(.whenInUse) }
        return authorizationStatus
    }

    /// The simulated person upgrades.
    public func requestAlwaysAuthorization() -> LocationAuthorization {
        catchUp()
        if authorizationStatus == .whenInUse { setAuthorization(.always) }
        return authorizationStatus
    }

    public func lastKnownLocation() -> Coordinate? {
        catchUp()
        return location
    }

    // MARK: Simulation

    /// Changes the permission as the person would in Settings.
    public func setAuthorization(_ status: LocationAuthorization) {
        catchUp()
        guard status != authorizationStatus else { return }
        authorizationStatus = status
        unsaved.insert(.authorization)
        emit(.authorizationChanged(status), at: now())
    }

    /// Moves the device. Returns the sequence number of the last event this produced, if any.
    @discardableResult
    public func update(_ fix: LocationFix) -> UInt64? {
        catchUp()
        let here = UnitVector(fix.coordinate)
        location = fix.coordinate
        locationVector = here
        let at = fix.time ?? now()
        locationAt = at
        unsaved.insert(.location)
        guard authorizationStatus.allowsMonitoring else { return nil }
        var last: UInt64?
        for i in tracked.indices {
            let t = tracked[i]
            let inside = Self.state(distance: t.vector.distance(to: here), radius: t.region.radius, was: t.inside)
            // A region registered before any location was known: the first fix inside is an arrival.
            let was = t.inside ?? false
            guard inside != was || t.inside == nil else { continue }
            tracked[i].inside = inside
            unsaved.insert(.regions)
            guard inside != was else { continue }
            let id = t.region.identifier
            last = emit(inside ? .entered(identifier: id) : .exited(identifier: id), at: at)
        }
        return last
    }

    /// The last sequence number handed out.
    public var lastSequence: UInt64 { sequence }
}

extension SimulatedRegionMonitor: LocationSimulator {}
