import Foundation
import GRDB
import Testing
import TrendyGeofence
import TrendyGeofenceLive
import TrendyModels
import TrendySyncLive
import TrendyTestSupport

/// The manager with the simulated monitor, the real ledger and a real SQLite file.
@Suite struct GeofenceManagerTests {
    let ns = RegionNamespace()

    @Test func launchReconcilesTheNearestUnderCapacityAndLeavingTheRefreshRegionReplans() async throws {
        let h = try GeofenceHarness()
        // 30 geofences every 1 km north, radius 100.
        var fences: [Geofence] = []
        for i in 1...30 { fences.append(try await h.geofence("P\(i)", at: north(of: berlin, Double(i) * 1_000))) }
        await h.ready(at: berlin)
        var monitored = await h.monitor.monitoredRegions()
        #expect(monitored.count == 20)
        #expect(Set(monitored.compactMap { ns.geofenceId(from: $0.identifier) }) == Set(fences.prefix(19).map(\.id)))
        let refresh = try #require(monitored.first { $0.identifier == ns.refreshIdentifier })
        #expect(abs(refresh.radius - (20_000 - 100)) < 1)

        // Travel 25 km north: leaving the refresh region re-plans around the new place.
        await h.move(to: north(of: berlin, 25_000), at: Date())
        monitored = await h.monitor.monitoredRegions()
        #expect(monitored.count == 20)
        let ids = Set(monitored.compactMap { ns.geofenceId(from: $0.identifier) })
        #expect(ids.contains(fences[24].id))  // P25 is where the device is now
        #expect(ids.contains(fences[29].id))
        #expect(!ids.contains(fences[0].id))
        // The device is inside P25 now, found by the state request after it was added.
        #expect(try await h.ledger.states()[fences[24].id]?.inside == true)
        #expect(try await h.events().count == 1)
    }

    @Test func reconcilingTwiceChangesNothingAndOrphansAreRemoved() async throws {
        let h = try GeofenceHarness()
        let g = try await h.geofence("Home", at: north(of: berlin, 500))
        try await h.monitor.startMonitoring(
            MonitoredRegion(identifier: ns.identifier(for: h.ids.next()), center: berlin, radius: 80))
        try await h.monitor.startMonitoring(MonitoredRegion(identifier: "someone.else", center: berlin, radius: 80))
        await h.ready()
        let health = await h.manager.health()
        #expect(health.orphaned.isEmpty)
        #expect(health.missing.isEmpty)
        #expect(health.foreign == 1)
        #expect(health.monitored == [ns.identifier(for: g.id)])
        let second = await h.manager.reconcile(.manual)
        #expect(second.added.isEmpty && second.removed.isEmpty)
        #expect(second.kept == [ns.identifier(for: g.id)])
    }

    /// The visit's type is deleted on another device before the visit's event went up (the pull
    /// deletes the type here; the event stays, refused and surfaced): leaving the place still ends
    /// the visit at the real exit time (outside tester: the exit was dropped with an error).
    @Test func leavingAPlaceWhoseVisitTypeWasDeletedStillEndsTheVisit() async throws {
        let h = try GeofenceHarness()
        let g = try await h.geofence("Home", at: berlin)
        await h.ready(at: berlin)
        let visit = try #require(try await h.events().first)
        try await h.database.write { db in
            try db.execute(
                sql: "DELETE FROM local_event_types WHERE id = ?", arguments: [visit.eventTypeId.description])
        }
        let left = Date().addingTimeInterval(60)
        await h.move(to: north(of: berlin, 2_000), at: left)
        let ended = try #require(try await h.events().first { $0.id == visit.id })
        #expect(ended.endDate.map { abs($0.timeIntervalSince(left)) < 1 } == true)
        #expect(try await h.ledger.states()[g.id]?.inside == false)
        #expect(try await h.ledger.lastCrossings()[g.id]?.outcome == .closed)
    }

    @Test func aGeofenceAddedWhileTheDeviceIsInsideIsEnteredOnce() async throws {
        let h = try GeofenceHarness()
        await h.ready(at: berlin)
        let g = try await h.geofence("Here", at: berlin)
        await h.manager.geofencesMayHaveChanged()
        await h.settle()
        #expect(try await h.ledger.states()[g.id]?.inside == true)
        let handled = await h.manager.handledThisRun()
        #expect(handled.map(\.crossing.source) == [.state])
        // Standing still and another reconcile make nothing new.
        await h.move(to: north(of: berlin, 10), at: Date())
        await h.manager.reconcile(.foreground)
        await h.settle()
        #expect(try await h.events().count == 1)
    }

    @Test func switchingOffOrDeletingAGeofenceWhileInsideEndsTheVisit() async throws {
        let h = try GeofenceHarness()
        var gym = try await h.geofence("Gym", at: berlin)
        let pool = try await h.geofence("Pool", at: north(of: berlin, 50))
        await h.ready(at: north(of: berlin, 5_000))
        await h.move(to: berlin, at: Date())
        #expect(try await h.ledger.states().values.filter(\.inside).count == 2)
        gym.isActive = false
        try await h.store.updateGeofence(gym)
        try await h.store.deleteGeofence(id: pool.id)
        await h.manager.geofencesMayHaveChanged()
        await h.settle()
        #expect(try await h.ledger.states().values.filter(\.inside).isEmpty)
        let events = try await h.events()
        #expect(events.count == 2)
        #expect(events.allSatisfy { $0.endDate != nil })
        #expect(await h.monitor.monitoredRegions().isEmpty)
    }

    @Test func hysteresisKeepsAnEdgeSitterInside() async throws {
        let h = try GeofenceHarness()
        let g = try await h.geofence("Edge", at: berlin, radius: 200)
        await h.ready(at: north(of: berlin, 1_000))
        let t = Date()
        await h.move(to: north(of: berlin, 150), at: t)
        for (i, d) in [205.0, 195, 215, 190, 219].enumerated() {
            await h.move(to: north(of: berlin, d), at: t.addingTimeInterval(Double(i + 1) * 60))
        }
        #expect(try await h.events().count == 1)
        #expect(try await h.ledger.states()[g.id]?.inside == true)
        await h.move(to: north(of: berlin, 260), at: t.addingTimeInterval(600))
        #expect(try await h.ledger.states()[g.id]?.inside == false)
        let end = try #require(try await h.events().first?.endDate)
        #expect(abs(end.timeIntervalSince(t.addingTimeInterval(600))) < 0.001)
    }

    @Test func capturedBackgroundCrossingsAreHandledOnceWithTheirOwnTimes() async throws {
        let h = try GeofenceHarness()
        let g = try await h.geofence("Home", at: berlin)
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        let enter = RegionCrossing(geofenceId: g.id, kind: .enter, occurredAt: at, source: .background)
        let exit = RegionCrossing(
            geofenceId: g.id, kind: .exit, occurredAt: at.addingTimeInterval(3_600), source: .background)
        try h.inbox.append(exit)
        try h.inbox.append(enter)
        // A crash after the ledger took the enter but before the inbox forgot it.
        _ = try await h.ledger.record(enter)
        await h.manager.start()
        #expect(try h.inbox.pending().isEmpty)
        let events = try await h.events()
        #expect(events.count == 1)
        #expect(events.first?.timestamp == at)
        #expect(abs((events.first?.duration ?? 0) - 3_600) < 0.001)
        #expect(await h.manager.handledThisRun().map(\.outcome) == [.alreadyHandled, .closed])
        // Starting again (another launch) finds nothing to do.
        let again = try h.restarted()
        await again.manager.start()
        #expect(try await again.events().count == 1)
    }

    @Test func aCapturedCrossingTheLedgerCannotTakeStaysForTheNextStart() async throws {
        let h = try GeofenceHarness()
        let g = try await h.geofence("Home", at: berlin)
        try h.inbox.append(RegionCrossing(geofenceId: g.id, kind: .enter, occurredAt: Date(), source: .background))
        // The ledger's write fails (disk full, a locked database, a bug): nothing may be lost.
        try await h.database.write { db in
            try db.execute(
                sql: """
                    CREATE TRIGGER refuse BEFORE INSERT ON geofence_crossings
                    BEGIN SELECT RAISE(ABORT, 'refused'); END;
                    """)
        }
        await h.manager.start()
        #expect(try h.inbox.pending().count == 1)
        #expect(try await h.events().isEmpty)
        #expect(await h.manager.health().inboxPending == 1)
        try await h.database.write { try $0.execute(sql: "DROP TRIGGER refuse") }
        let again = try h.restarted()
        await again.manager.start()
        #expect(try again.inbox.pending().isEmpty)
        #expect(try await again.events().count == 1)
    }

    @Test func twoStepAuthorizationAndHealthAdvice() async throws {
        let h = try GeofenceHarness()
        _ = try await h.geofence("Home", at: berlin)
        await h.manager.start()
        var health = await h.manager.health()
        #expect(health.authorization == .notDetermined)
        #expect(!health.ok)
        #expect(health.monitored.isEmpty)
        #expect(health.missing.count == 1)
        #expect(await h.manager.requestAuthorization() == .always)
        await h.settle()
        health = await h.manager.health()
        #expect(health.ok)
        #expect(health.monitored.count == 1)

        await h.monitor.setAuthorization(.denied)
        await h.settle()
        health = await h.manager.health()
        #expect(!health.ok)
        #expect(health.advice.first?.contains("Settings") == true)
        #expect(await h.manager.requestAuthorization() == .denied)  // no re-prompt once denied
        await h.monitor.setAuthorization(.whenInUse)
        #expect(GeofenceHealth.advice(for: .whenInUse)?.contains("Always") == true)
    }

    @Test func withoutAuthorizationNothingIsMonitoredAndNoCrossingsHappen() async throws {
        let h = try GeofenceHarness()
        _ = try await h.geofence("Home", at: berlin)
        await h.manager.start()
        let report = await h.manager.reconcile(.manual)
        #expect(!report.authorized)
        await h.move(to: berlin, at: Date())
        #expect(try await h.events().isEmpty)
    }

    @Test func theMonitorRemembersItsRegionsAcrossLaunches() async throws {
        let h = try GeofenceHarness()
        _ = try await h.geofence("Home", at: north(of: berlin, 2_000))
        await h.ready(at: berlin)
        await h.monitor.flush()
        let again = try h.restarted()
        #expect(await again.monitor.monitoredRegions().count == 1)
        #expect(await again.monitor.authorization() == .always)
        #expect(await again.monitor.lastKnownLocation() == berlin)
        let report = await again.manager.reconcile(.launch)
        #expect(report.added.isEmpty && report.removed.isEmpty)
    }

    @Test func aDamagedSimulatorFileStartsFresh() async throws {
        let folder = TemporaryDirectory("trendy-gf")
        try Data("{not json".utf8).write(to: folder.url.appendingPathComponent("location.json"))
        let h = try GeofenceHarness(folder: folder)
        #expect(await h.monitor.authorization() == .notDetermined)
        #expect(await h.monitor.monitoredRegions().isEmpty)
    }

    @Test func aDamagedInboxEntryIsSetAsideAndTheRestHandled() async throws {
        let h = try GeofenceHarness()
        let g = try await h.geofence("Home", at: berlin)
        try h.inbox.append(RegionCrossing(geofenceId: g.id, kind: .enter, occurredAt: Date(), source: .background))
        try Data("garbage".utf8).write(to: h.inbox.directory.appendingPathComponent("000000000000001-bad.json"))
        await h.manager.start()
        #expect(try await h.events().count == 1)
        let left = try FileManager.default.contentsOfDirectory(atPath: h.inbox.directory.path)
        #expect(left == ["000000000000001-bad.json.corrupt"])
    }
}
