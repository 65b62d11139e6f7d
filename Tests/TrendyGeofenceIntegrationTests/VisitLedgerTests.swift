import Foundation
import GRDB
import Testing
import TrendyGeofence
import TrendyGeofenceLive
import TrendyModels
import TrendySync
import TrendySyncLive

/// Exactly-once enter/exit handling against a real SQLite file.
@Suite struct VisitLedgerTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func crossing(_ g: Geofence, _ kind: CrossingKind, _ minutes: Double, id: String? = nil) -> RegionCrossing {
        RegionCrossing(
            id: id ?? UUID().uuidString, geofenceId: g.id, kind: kind, occurredAt: t0.addingTimeInterval(minutes * 60),
            location: g.center, source: .monitor)
    }

    @Test func enterLogsAnEventAndExitGivesItItsEndTime() async throws {
        let h = try GeofenceHarness()
        let g = try await h.geofence("Gym", at: berlin)
        let entered = try await h.ledger.record(crossing(g, .enter, 0))
        let id = try #require(entered.eventId)
        #expect(entered == .created(eventId: id))
        let exited = try await h.ledger.record(crossing(g, .exit, 45))
        #expect(exited == .closed(eventId: id))
        let events = try await h.events()
        #expect(events.count == 1)
        let e = try #require(events.first)
        #expect(e.sourceType == .geofence)
        #expect(e.geofenceId == g.id)
        #expect(e.eventTypeId == g.entryEventTypeId)
        #expect(e.timestamp == t0)
        #expect(abs((e.duration ?? 0) - 45 * 60) < 0.001)
        #expect(e.location == g.center)
        #expect(e.locationName == "Gym")
        #expect(e.notes == "Arrived at Gym")
    }

    @Test func offlineEnterAndExitBecomeOneCompleteCreateInTheOutbox() async throws {
        let h = try GeofenceHarness()
        let g = try await h.geofence("Office", at: berlin)
        let id = try #require(try await h.ledger.record(crossing(g, .enter, 0)).eventId)
        _ = try await h.ledger.record(crossing(g, .exit, 30))
        let rows = try await h.outbox(for: id)
        #expect(rows.count == 1)
        #expect(rows.first?.kind == "create")
        #expect(rows.first?.payload?.contains("end_date") == true)
    }

    @Test func aDoubleEnterMakesOneEventAndAReEntryAfterAnExitMakesANewOne() async throws {
        let h = try GeofenceHarness()
        let g = try await h.geofence("Home", at: berlin)
        #expect(try await h.ledger.record(crossing(g, .enter, 0)).eventId != nil)
        #expect(try await h.ledger.record(crossing(g, .enter, 1)) == .duplicate)
        #expect(try await h.ledger.record(crossing(g, .exit, 10)).name == "closed")
        #expect(try await h.ledger.record(crossing(g, .exit, 11)) == .duplicate)
        #expect(try await h.ledger.record(crossing(g, .enter, 20)).eventId != nil)
        #expect(try await h.events().count == 2)
    }

    @Test func anEnterAfterARestartWhileInsideMakesNothing() async throws {
        let h = try GeofenceHarness()
        let g = try await h.geofence("Home", at: berlin)
        _ = try await h.ledger.record(crossing(g, .enter, 0))
        let again = try h.restarted()
        #expect(try await again.ledger.states()[g.id]?.inside == true)
        #expect(try await again.ledger.record(crossing(g, .enter, 5)) == .duplicate)
        #expect(try await again.events().count == 1)
    }

    @Test func theSameCrossingDeliveredTwiceIsHandledOnce() async throws {
        let h = try GeofenceHarness()
        let g = try await h.geofence("Home", at: berlin)
        let c = crossing(g, .enter, 0, id: "fixed")
        #expect(try await h.ledger.record(c).eventId != nil)
        _ = try await h.ledger.record(crossing(g, .exit, 5))
        // Replayed after the exit: without the id check this would be a new visit.
        #expect(try await h.ledger.record(c) == .alreadyHandled)
        #expect(try await h.events().count == 1)
    }

    @Test func concurrentDeliveriesOfOneEnterMakeExactlyOneEvent() async throws {
        let h = try GeofenceHarness()
        let g = try await h.geofence("Home", at: berlin)
        let outcomes = try await withThrowingTaskGroup(of: CrossingOutcome.self) { group in
            for i in 0..<40 {
                let fresh = try h.restarted()  // separate connections, as separate processes would have
                group.addTask { try await fresh.ledger.record(crossing(g, .enter, 0, id: "delivery-\(i)")) }
            }
            return try await group.reduce(into: [CrossingOutcome]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0.eventId != nil }.count == 1)
        #expect(outcomes.filter { $0 == .duplicate }.count == 39)
        #expect(try await h.events().count == 1)
    }

    @Test func aKillBetweenTheEventAndItsOutboxWriteLeavesNothingHalfDone() async throws {
        let h = try GeofenceHarness()
        let g = try await h.geofence("Home", at: berlin)
        // The outbox insert fails after the event row was written in the same transaction — the
        // same point a SIGKILL would interrupt.
        try await h.database.write { db in
            try db.execute(
                sql: """
                    CREATE TEMP TRIGGER crash BEFORE INSERT ON outbox WHEN NEW.entity = 'event'
                    BEGIN SELECT RAISE(ABORT, 'killed'); END;
                    """)
        }
        await #expect(throws: (any Error).self) { try await h.ledger.record(crossing(g, .enter, 0, id: "c1")) }
        #expect(try await h.events().isEmpty)
        #expect(try await h.ledger.states()[g.id] == nil)
        #expect(try await h.ledger.lastCrossings().isEmpty)
        // After the "restart" the same crossing is delivered again and handled once, completely.
        let again = try h.restarted()
        let id = try #require(try await again.ledger.record(crossing(g, .enter, 0, id: "c1")).eventId)
        #expect(try await again.outbox(for: id).map(\.kind) == ["create"])
        #expect(try await again.ledger.record(crossing(g, .enter, 0, id: "c1")) == .alreadyHandled)
    }

    @Test func anExitTypeLogsItsOwnEvent() async throws {
        let h = try GeofenceHarness()
        let g = try await h.geofence("Work", at: berlin, exitType: true)
        let entry = try #require(try await h.ledger.record(crossing(g, .enter, 0)).eventId)
        let exit = try #require(try await h.ledger.record(crossing(g, .exit, 480)).eventId)
        #expect(entry != exit)
        let events = try await h.events()
        #expect(events.count == 2)
        #expect(events.first { $0.id == exit }?.eventTypeId == g.exitEventTypeId)
        #expect(events.first { $0.id == exit }?.notes == "Left Work")
    }

    @Test func unknownInactiveAndOutOfOrderCrossingsChangeNothing() async throws {
        let h = try GeofenceHarness()
        let g = try await h.geofence("Home", at: berlin)
        let unknown = RegionCrossing(geofenceId: h.ids.next(), kind: .enter, occurredAt: t0, source: .background)
        #expect(try await h.ledger.record(unknown).name == "ignored")
        _ = try await h.ledger.record(crossing(g, .enter, 10))
        #expect(try await h.ledger.record(crossing(g, .exit, 5)).name == "ignored")
        var inactive = g
        inactive.isActive = false
        try await h.store.updateGeofence(inactive)
        #expect(try await h.ledger.record(crossing(g, .enter, 20)).name == "ignored")
        // Nothing new starts at an inactive geofence, but the visit in progress can end.
        #expect(try await h.ledger.record(crossing(g, .exit, 20)).name == "closed")
        #expect(try await h.ledger.record(crossing(g, .enter, 30)).name == "ignored")
        #expect(try await h.events().count == 1)
    }

    @Test func aDeletedEventTypeRecordsTheVisitWithoutAnEvent() async throws {
        let h = try GeofenceHarness()
        let g = try await h.geofence("Home", at: berlin)
        try await h.store.deleteEventType(id: try #require(g.entryEventTypeId))
        #expect(try await h.ledger.record(crossing(g, .enter, 0)) == .recorded)
        #expect(try await h.ledger.states()[g.id]?.inside == true)
        #expect(try await h.ledger.record(crossing(g, .exit, 5)) == .recorded)
    }

    @Test func aDeletedOpenEventDoesNotBlockTheExit() async throws {
        let h = try GeofenceHarness()
        let g = try await h.geofence("Home", at: berlin)
        let id = try #require(try await h.ledger.record(crossing(g, .enter, 0)).eventId)
        try await h.store.deleteEvent(id: id)
        #expect(try await h.ledger.record(crossing(g, .exit, 5)) == .recorded)
        #expect(try await h.ledger.states()[g.id]?.inside == false)
    }
}

/// The ledger's stored outcome is read leniently: a kind a later version wrote is `recorded`.
@Suite struct StoredCrossingKindTests {
    @Test func anUnknownStoredKindReadsAsRecorded() async throws {
        let h = try GeofenceHarness()
        let g = try await h.geofence("Home", at: Coordinate(latitude: 52.52, longitude: 13.405))
        let c = RegionCrossing(
            id: "k1", geofenceId: g.id, kind: .enter, occurredAt: Date(timeIntervalSince1970: 1_800_000_000),
            location: g.center, source: .monitor)
        _ = try await h.ledger.record(c)
        #expect(try await h.ledger.lastCrossings()[g.id]?.outcome == .created)
        try await h.database.write { db in try db.execute(sql: "UPDATE geofence_crossings SET outcome = 'teleported'") }
        #expect(try await h.ledger.lastCrossings()[g.id]?.outcome == .recorded)
        #expect(CrossingOutcome.Kind(stored: "already_handled") == .alreadyHandled)
        let json = try JSONEncoder().encode([CrossingOutcome.Kind.alreadyHandled])
        #expect(String(decoding: json, as: UTF8.self) == #"["already_handled"]"#)
        #expect(try JSONDecoder().decode([CrossingOutcome.Kind].self, from: Data(#"["x"]"#.utf8)) == [.recorded])
    }
}
