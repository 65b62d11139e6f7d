import Foundation
import Testing
import TrendyGeofence
import TrendyModels

@Suite struct GeofencePlannerTests {
    let ns = RegionNamespace()

    func random(_ n: Int, around c: Coordinate, spread: Double, rng: inout SeededRandom, ids: UUIDv7Generator)
        -> [PlannerGeofence]
    {
        (0..<n).map { _ in
            PlannerGeofence(
                id: ids.next(),
                center: Coordinate(
                    latitude: c.latitude + Double.random(in: -spread...spread, using: &rng),
                    longitude: c.longitude + Double.random(in: -spread...spread, using: &rng)),
                radius: Double.random(in: 50...2_000, using: &rng),
                isActive: Double.random(in: 0...1, using: &rng) > 0.1)
        }
    }

    /// Applies a plan as a platform would: removals, then additions.
    func apply(_ plan: RegionPlan, to monitored: [MonitoredRegion]) -> [MonitoredRegion] {
        var out = monitored.filter { !plan.remove.contains($0.identifier) }
        for r in plan.add {
            out.removeAll { $0.identifier == r.identifier }
            out.append(r)
        }
        return out
    }

    @Test(arguments: 0..<60) func propertiesHoldForRandomInputs(seed: Int) {
        var rng = SeededRandom(propertySeed: UInt64(seed))
        let ids = UUIDv7Generator()
        let capacity = Int.random(in: 1...25, using: &rng)
        let planner = GeofencePlanner(capacity: capacity)
        let geofences = random(Int.random(in: 0...120, using: &rng), around: berlin, spread: 0.3, rng: &rng, ids: ids)
        let location: Coordinate? =
            Bool.random(using: &rng)
            ? Coordinate(
                latitude: berlin.latitude + Double.random(in: -0.2...0.2, using: &rng), longitude: berlin.longitude)
            : nil
        // Something already monitored: some of ours (some stale), maybe a foreign region.
        var monitored: [MonitoredRegion] = geofences.shuffled(using: &rng).prefix(
            Int.random(in: 0...capacity, using: &rng)
        )
        .map { g in
            MonitoredRegion(
                identifier: ns.identifier(for: g.id), center: g.center,
                radius: Bool.random(using: &rng) ? g.radius : g.radius + 10)
        }
        if Int.random(in: 0..<4, using: &rng) == 0, monitored.count < capacity {
            monitored.append(MonitoredRegion(identifier: "other.sdk.region", center: berlin, radius: 300))
        }
        let insideByState = Set(geofences.filter { _ in Int.random(in: 0..<15, using: &rng) == 0 }.map(\.id))

        let plan = planner.plan(geofences: geofences, location: location, monitored: monitored, inside: insideByState)
        let after = apply(plan, to: monitored)

        // Never above capacity; foreign regions untouched.
        #expect(after.count <= capacity)
        #expect(!plan.remove.contains { !ns.owns($0) })
        #expect(!plan.add.contains { !ns.owns($0.identifier) })
        #expect(
            after.contains { $0.identifier == "other.sdk.region" }
                == monitored.contains { $0.identifier == "other.sdk.region" })

        // Minimal diff: nothing both kept and removed; kept ones are unchanged; nothing added twice.
        #expect(Set(plan.keep).isDisjoint(with: Set(plan.remove)))
        #expect(Set(plan.add.map(\.identifier)).count == plan.add.count)
        for id in plan.keep {
            #expect(monitored.contains { $0.identifier == id })
        }
        for r in plan.add {
            #expect(!monitored.contains { $0.identifier == r.identifier && $0.sameGeometry(as: r) })
        }

        // Occupied geofences are kept while they fit.
        let active = geofences.filter(\.isActive)
        let occupied = active.filter { g in
            insideByState.contains(g.id) || (location.map { g.center.distance(to: $0) <= g.radius } ?? false)
        }
        let slots = capacity - monitored.filter { !ns.owns($0.identifier) }.count
        if occupied.count <= slots {
            for g in occupied { #expect(plan.selected.contains(g.id), "occupied \(g.id) evicted") }
        }

        // Everything active fits → everything monitored, no refresh region.
        if active.count <= slots {
            #expect(Set(plan.selected) == Set(active.map(\.id)))
            #expect(plan.refresh == nil)
        } else if location != nil, slots >= 2, occupied.count < slots {
            #expect(plan.refresh != nil)
            #expect(plan.selected.count == slots - 1)
        }

        // Idempotent: planning again against the result changes nothing.
        let again = planner.plan(geofences: geofences, location: location, monitored: after, inside: insideByState)
        #expect(again.isEmpty, "second plan added \(again.add.map(\.identifier)) removed \(again.remove)")
        #expect(again.selected == plan.selected)
    }

    @Test func theNearestByEdgeWinAndTheRefreshRegionReachesTheNearestLeftOut() {
        let ids = UUIDv7Generator()
        // 30 geofences every 500 m north of the device, radius 100.
        let geofences = (1...30).map { i in
            PlannerGeofence(id: ids.next(), center: north(of: berlin, Double(i) * 500), radius: 100)
        }
        let plan = GeofencePlanner(capacity: 20).plan(geofences: geofences, location: berlin, monitored: [])
        #expect(plan.selected == geofences.prefix(19).map(\.id))
        #expect(plan.add.count == 20)
        let refresh = try! #require(plan.refresh)
        #expect(refresh.identifier == ns.refreshIdentifier)
        #expect(refresh.center == berlin)
        // The 20th is 10,000 m away, its edge 9,900 m.
        #expect(abs(refresh.radius - 9_900) < 1)
        #expect(plan.unmonitored.count == 11)
    }

    @Test func aGeofenceTheDeviceIsInsideIsNeverEvictedEvenWhenFarByLocation() {
        let ids = UUIDv7Generator()
        let far = PlannerGeofence(id: ids.next(), center: north(of: berlin, 50_000), radius: 100)
        let near = (1...25).map { i in
            PlannerGeofence(id: ids.next(), center: north(of: berlin, Double(i) * 300), radius: 100)
        }
        let monitored = [
            MonitoredRegion(identifier: ns.identifier(for: far.id), center: far.center, radius: far.radius)
        ]
        let plan = GeofencePlanner(capacity: 20).plan(
            geofences: near + [far], location: berlin, monitored: monitored, inside: [far.id])
        #expect(plan.selected.first == far.id)
        #expect(plan.keep == [ns.identifier(for: far.id)])
        #expect(!plan.remove.contains(ns.identifier(for: far.id)))
    }

    @Test func tiesBreakByIdSoTheOrderOfTheInputDoesNotMatter() {
        let ids = UUIDv7Generator()
        // 25 geofences at the same spot: all tie on distance.
        let same = (0..<25).map { _ in PlannerGeofence(id: ids.next(), center: north(of: berlin, 2_000), radius: 100) }
        let planner = GeofencePlanner(capacity: 10)
        let a = planner.plan(geofences: same, location: berlin, monitored: [])
        var rng = SeededRandom(propertySeed: 7)
        let b = planner.plan(geofences: same.shuffled(using: &rng), location: berlin, monitored: [])
        #expect(a.selected == b.selected)
        #expect(a.selected == same.prefix(9).map(\.id))
    }

    @Test func aMovedOrResizedGeofenceIsRemovedAndAddedAgain() {
        let ids = UUIDv7Generator()
        let g = PlannerGeofence(id: ids.next(), center: berlin, radius: 200)
        let old = MonitoredRegion(identifier: ns.identifier(for: g.id), center: berlin, radius: 150)
        let plan = GeofencePlanner().plan(geofences: [g], location: nil, monitored: [old])
        #expect(plan.remove == [old.identifier])
        #expect(plan.add.map(\.radius) == [200])
        #expect(plan.keep.isEmpty)
    }

    @Test func onlyTheAppsRegionsAreTouchedAndForeignOnesStillUseCapacity() {
        let ids = UUIDv7Generator()
        let geofences = (1...5).map { i in
            PlannerGeofence(id: ids.next(), center: north(of: berlin, Double(i) * 400), radius: 100)
        }
        let foreign = (0..<3).map { MonitoredRegion(identifier: "sdk.\($0)", center: berlin, radius: 100) }
        let orphan = MonitoredRegion(identifier: ns.identifier(for: ids.next()), center: berlin, radius: 100)
        let plan = GeofencePlanner(capacity: 6).plan(
            geofences: geofences, location: berlin, monitored: foreign + [orphan])
        #expect(plan.remove == [orphan.identifier])
        #expect(plan.add.count == 3)  // 6 - 3 foreign = 3 slots: 2 geofences + refresh
        #expect(plan.selected == geofences.prefix(2).map(\.id))
        #expect(plan.refresh != nil)
    }

    @Test func withoutALocationTheNewestActiveGeofencesWin() {
        let ids = UUIDv7Generator()
        let geofences = (0..<30).map { i in
            PlannerGeofence(id: ids.next(), center: north(of: berlin, Double(i) * 100), radius: 100, isActive: i != 29)
        }
        let plan = GeofencePlanner(capacity: 20).plan(geofences: geofences, location: nil, monitored: [])
        #expect(plan.refresh == nil)
        #expect(plan.selected == Array(geofences[9..<29].reversed()).map(\.id))
    }
}
