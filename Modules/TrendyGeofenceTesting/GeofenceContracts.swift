import Foundation
import Testing
import TrendyGeofence
import TrendyModels

/// What every ``RegionEventInbox`` must do: the buffer a background wake-up writes before the
/// app is up. The file inbox and the in-memory one run it; so must an App Group container inbox
/// in an Apple app. See docs/porting.md.
public enum RegionEventInboxContract {
    /// Runs the contract. `fresh` makes an empty inbox over storage of its own; `reopen`, when the
    /// inbox persists, makes a second one over the same storage (the next launch).
    public static func verify(
        fresh: () throws -> any RegionEventInbox,
        reopen: ((any RegionEventInbox) throws -> any RegionEventInbox)? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let geofence = UUIDv7Generator().next()
        let t = Date(timeIntervalSince1970: 1_800_000_000)
        let late = RegionCrossing(
            id: "c-late", geofenceId: geofence, kind: .exit, occurredAt: t + 60, source: .background)
        let early = RegionCrossing(
            id: "c-early", geofenceId: geofence, kind: .enter, occurredAt: t,
            location: Coordinate(latitude: 1, longitude: 2),
            source: .background)
        let inbox = try fresh()
        #expect(try inbox.pending().isEmpty, "a new inbox is empty", sourceLocation: sourceLocation)
        try inbox.remove(id: "nothing")
        try inbox.append(late)
        try inbox.append(early)
        #expect(
            try inbox.pending() == [early, late], "crossings come back whole, oldest first",
            sourceLocation: sourceLocation)
        var corrected = early
        corrected.location = Coordinate(latitude: 3, longitude: 4)
        try inbox.append(corrected)
        #expect(
            try inbox.pending() == [corrected, late], "a crossing stored again replaces the first (one per id)",
            sourceLocation: sourceLocation)
        if let reopen {
            #expect(
                try reopen(inbox).pending() == [corrected, late], "the next launch finds them",
                sourceLocation: sourceLocation)
        }
        try inbox.remove(id: early.id)
        #expect(try inbox.pending() == [late], "removal is by id", sourceLocation: sourceLocation)
        try inbox.remove(id: late.id)
        #expect(try inbox.pending().isEmpty, "handled crossings are gone", sourceLocation: sourceLocation)
        if let reopen {
            #expect(try reopen(inbox).pending().isEmpty, "and stay gone", sourceLocation: sourceLocation)
        }
    }
}

/// What every ``RegionMonitor`` must do for the geofence manager: the platform's region list with
/// its capacity, state requests answered on the event stream, numbered events, and the two-step
/// permission. The simulated monitor runs it; so must a Core Location adapter (with the
/// permission granted by the test host). See docs/porting.md.
public enum RegionMonitorContract {
    /// Runs the contract on a new monitor from `fresh` that monitors nothing yet. With
    /// `permissionFlow` (a monitor whose person allows), the two-step request is checked too.
    public static func verify(
        fresh: () async throws -> any RegionMonitor, permissionFlow: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let monitor = try await fresh()
        let capacity = monitor.capacity
        #expect(capacity > 0, "the platform allows some regions", sourceLocation: sourceLocation)
        #expect(
            await monitor.monitoredRegions().isEmpty, "a new monitor watches nothing", sourceLocation: sourceLocation)
        var events = monitor.events().makeAsyncIterator()

        if permissionFlow {
            let before = await monitor.authorization()
            #expect(before == .notDetermined, "nobody was asked yet", sourceLocation: sourceLocation)
            let inUse = await monitor.requestWhenInUseAuthorization()
            #expect(inUse == .whenInUse, "the first step grants while in use", sourceLocation: sourceLocation)
            let always = await monitor.requestAlwaysAuthorization()
            #expect(always == .always, "the second step upgrades", sourceLocation: sourceLocation)
            #expect(await monitor.authorization() == .always, sourceLocation: sourceLocation)
            var changes: [LocationAuthorization] = []
            for _ in 0..<2 {
                if case .authorizationChanged(let status)? = await events.next()?.kind { changes.append(status) }
            }
            #expect(changes == [.whenInUse, .always], "each change is reported", sourceLocation: sourceLocation)
        }

        let regions = (0..<capacity).map { i in
            MonitoredRegion(
                identifier: "contract-\(i)", center: Coordinate(latitude: Double(i) / 100, longitude: 0), radius: 100)
        }
        for region in regions { try await monitor.startMonitoring(region) }
        #expect(
            Set(await monitor.monitoredRegions()) == Set(regions), "every region up to the capacity is watched",
            sourceLocation: sourceLocation)
        let extra = MonitoredRegion(
            identifier: "contract-extra", center: Coordinate(latitude: 5, longitude: 5), radius: 50)
        await #expect(throws: (any Error).self, "one more than the capacity is refused", sourceLocation: sourceLocation)
        {
            try await monitor.startMonitoring(extra)
        }
        var moved = regions[0]
        moved.radius = 250
        try await monitor.startMonitoring(moved)
        let watched = await monitor.monitoredRegions()
        #expect(
            watched.count == capacity && watched.contains(moved), "the same identifier replaces its region",
            sourceLocation: sourceLocation)

        await monitor.stopMonitoring(identifier: regions[1].identifier)
        await monitor.stopMonitoring(identifier: "never-monitored")
        #expect(
            await monitor.monitoredRegions().count == capacity - 1, "stopping removes one; unknown ids are ignored",
            sourceLocation: sourceLocation)

        await monitor.requestState(identifier: moved.identifier)
        // Reports that came before (a permission change the host made) are skipped.
        var answer = await events.next()
        while let kind = answer?.kind, case .authorizationChanged = kind { answer = await events.next() }
        guard case .determined(let id, _)? = answer?.kind else {
            Issue.record(
                "a state request is answered on the stream, got \(String(describing: answer))",
                sourceLocation: sourceLocation)
            return
        }
        #expect(id == moved.identifier, sourceLocation: sourceLocation)
        await monitor.requestState(identifier: moved.identifier)
        let next = await events.next()
        #expect(
            next.map { $0.sequence == (answer?.sequence ?? 0) + 1 } == true, "events are numbered one by one",
            sourceLocation: sourceLocation)
    }
}
