import Foundation
import Testing
import TrendyGeofence
import TrendyGeofenceLive
import TrendyGeofenceTesting
import TrendyLogging
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
}
