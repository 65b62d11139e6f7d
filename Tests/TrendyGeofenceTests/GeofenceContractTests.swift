import Foundation
import Testing
import TrendyGeofence
import TrendyGeofenceLive
import TrendyGeofenceTesting
import TrendyLogging
import TrendyModels
import TrendyTestSupport

/// Each implementation of Geofence's platform ports keeps its contract (docs/porting.md).
@Suite(.timeLimit(.minutes(5)))
struct GeofenceContractTests {
    static let logger = LogSystem.disabled().logger(.geofence)

    @Test func bothInboxesKeepTheContract() throws {
        try RegionEventInboxContract.verify(fresh: { InMemoryRegionEventInbox() })
        let folder = TemporaryDirectory("trendy-gf")
        let directory = folder.url.appendingPathComponent("inbox")
        try RegionEventInboxContract.verify(
            fresh: { FileRegionEventInbox(directory: directory, logger: Self.logger) },
            reopen: { _ in FileRegionEventInbox(directory: directory, logger: Self.logger) })
    }

    @Test func theSimulatedMonitorKeepsTheContract() async throws {
        try await RegionMonitorContract.verify(fresh: { SimulatedRegionMonitor(file: nil, logger: Self.logger) })
        try await RegionMonitorContract.verify(fresh: {
            SimulatedRegionMonitor(file: nil, capacity: 3, logger: Self.logger)
        })
        let folder = TemporaryDirectory("trendy-gf")
        try await RegionMonitorContract.verify(fresh: {
            SimulatedRegionMonitor(file: folder.url.appendingPathComponent("location.json"), logger: Self.logger)
        })
    }

    /// Two processes of one install share the simulated device as they share the platform: what
    /// one saved the other reads before its next use, and what the other changed but has not
    /// saved yet is kept, not replaced (issue 32: the app wrote its launch-time copy over the
    /// permission and regions another terminal had set).
    @Test func twoMonitorsOnOneFileShareOneDevice() async throws {
        let folder = TemporaryDirectory("trendy-gf")
        let file = folder.url.appendingPathComponent("location.json")
        let app = SimulatedRegionMonitor(file: file, logger: Self.logger)
        let gym = MonitoredRegion(
            identifier: "gym", center: Coordinate(latitude: 52.52, longitude: 13.405), radius: 100)
        let cli = SimulatedRegionMonitor(file: file, logger: Self.logger)
        await cli.setAuthorization(.always)
        try await cli.startMonitoring(gym)
        await cli.flush()

        #expect(await app.authorization() == .always)
        #expect(await app.monitoredRegions().map(\.identifier) == ["gym"])
        // The app moves the device (unsaved) while the other process revokes access and saves.
        _ = await app.update(LocationFix(Coordinate(latitude: 52.52, longitude: 13.405)))
        let other = SimulatedRegionMonitor(file: file, logger: Self.logger)
        await other.setAuthorization(.denied)
        await other.flush()
        await app.flush()
        let reread = SimulatedRegionMonitor(file: file, logger: Self.logger)
        #expect(await reread.authorization() == .denied, "the other process's permission survives the app's save")
        #expect(await reread.lastKnownLocation() == Coordinate(latitude: 52.52, longitude: 13.405))
        #expect(await reread.monitoredRegions().map(\.identifier) == ["gym"])
    }
}
