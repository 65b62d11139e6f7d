import Foundation
import Testing
import TrendyAPI
import TrendyAPITesting
import TrendyLogging
import TrendyModels
import TrendyServer
import TrendyServerTestSupport
import TrendySync
import TrendySyncLive
import TrendyTestSupport

/// The operations a simulation step draws, and what each records as the person's intent.
extension Simulation {
    /// Runs one local operation on `d` and records what it changed as the person's writes: new
    /// and changed fields are writes, vanished entities deletes (`cascade`: entities that went
    /// with a deleted type are left to the server's cascade, not counted as deleted by hand).
    mutating func act(
        _ d: Device, _ what: String, cascadeOf type: String? = nil, _ body: () async throws -> Void
    ) async throws {
        let before = try await Self.snapshot(d.store)
        do {
            try await body()
        } catch let error as LocalStoreError {
            // Refused at once, with nothing written (another event of the type at that time).
            log.append("\(step) \(d.name) was refused \(what): \(error)")
            return
        }
        let after = try await Self.snapshot(d.store)
        log.append("\(step) \(d.name) \(what)")
        // A type's delete writes nothing a person chose: the places that named it lose it on the
        // server too, by the same rule.
        for (id, fields) in after where type == nil {
            for (field, value) in fields.sorted(by: { $0.key < $1.key }) where before[id]?[field] != value {
                // An event made without values chose none: another device's values merged into
                // it (the same imported row) replace nothing.
                if before[id] == nil, field == "props", value == "∅" { continue }
                wrote(d, id, field, value)
            }
        }
        for (id, fields) in before where after[id] == nil {
            deleted(d, id, Array(fields.keys), direct: type == nil || id == type)
        }
        if let type {
            deletedTypes.insert(type)
            // Every reference to the type goes with it, on every device (nothing to restore).
            for (key, intent) in intents where intent.value == type { intents[key]?.superseded = true }
        }
    }

    mutating func wrote(_ d: Device, _ entity: String, _ field: String, _ value: String) {
        let key = "\(entity)/\(field)"
        supersedeSeen(by: d, key)
        intents["\(d.name)|\(key)"] = Intent(value: value, order: log.count)
        log.append("\(step) \(d.name) wrote \(key)=\(value) cursor \(d.cursors.last ?? -1)")
        d.seen[key, default: []].insert(value)
    }

    /// Logs, edits, deletes or imports events.
    mutating func eventStep(_ d: Device, _ roll: Int, events: [Event], types: [EventType]) async throws {
        let h = harness
        switch roll {
        case 0..<14:
            guard let type = types.randomElement(using: &rng) else { return }
            let e = Event(id: h.ids.next(), eventTypeId: type.id, timestamp: randomTime(), notes: "n\(int(1000))")
            try await act(d, "logged \(e.id)") { try await d.store.createEvent(e) }
        case 14..<34:
            guard var e = events.randomElement(using: &rng) else { return }
            switch int(5) {
            case 0: e.notes = chance(0.1) ? nil : "\(d.name)-\(step)-\(int(100))"
            case 1: e.timestamp = randomTime()
            case 2: e.eventTypeId = types.randomElement(using: &rng)?.id ?? e.eventTypeId
            default:
                e.notes = "\(d.name)-\(step)-\(int(100))"
                e.timestamp = randomTime()
            }
            let edited = e
            try await act(d, "edited \(e.id)") { try await d.store.updateEvent(edited) }
        case 34..<39:
            guard let e = events.randomElement(using: &rng) else { return }
            try await act(d, "deleted \(e.id)") { try await d.store.deleteEvent(id: e.id) }
        case 49..<52:
            // An import of a file several devices may import: rows at shared times carry the
            // same note on every device (the same file), the rest are this device's own.
            guard let type = types.randomElement(using: &rng) else { return }
            let batch = (0..<(1 + int(40))).map { _ -> Event in
                let shared = chance(0.3)
                let at = shared ? sharedTimes[int(sharedTimes.count)] : 1.7e9 + Double(int(1 << 30)) / 1000
                return Event(
                    id: h.ids.next(), eventTypeId: type.id, timestamp: Date(timeIntervalSince1970: at),
                    notes: shared ? "file-\(Int(at))" : nil, sourceType: .imported)
            }
            try await act(d, "imported \(batch.count)") { _ = try await d.store.insertEvents(batch) }
        default: return
        }
    }

    /// Adds, edits or deletes an event type (with its cascade).
    mutating func typeStep(_ d: Device, _ roll: Int, types: [EventType]) async throws {
        let h = harness
        switch roll {
        case 39..<42:
            typeNames += 1
            let t = EventType(id: h.ids.next(), name: "T\(seed)-\(typeNames)")
            try await act(d, "added type \(t.id)") { try await d.store.createEventType(t) }
        case 42..<46:
            guard var t = types.randomElement(using: &rng) else { return }
            if chance(0.5) {
                typeNames += 1
                t.name = "R\(seed)-\(typeNames)"
            } else {
                t.color = ["#FF0000", "#00FF00", "#0000FF", "#123456"][int(4)]
            }
            let edited = t
            try await act(d, "edited type \(t.id)") { try await d.store.updateEventType(edited) }
        case 46..<49:
            guard types.count > 1, let t = types.randomElement(using: &rng) else { return }
            try await act(d, "deleted type \(t.id)", cascadeOf: t.id.description) {
                try await d.store.deleteEventType(id: t.id)
            }
        default: return
        }
    }

    /// Adds, edits or deletes a place, or restores or dismisses a conflict.
    mutating func placeStep(_ d: Device, _ roll: Int, geofences: [Geofence], types: [EventType]) async throws {
        let h = harness
        switch roll {
        case 52..<56:
            let g = Geofence(
                id: h.ids.next(), name: "g\(int(100))", center: Coordinate(latitude: 52, longitude: 13),
                radius: Double(100 + int(400)), entryEventTypeId: types.randomElement(using: &rng)?.id,
                exitEventTypeId: chance(0.3) ? types.randomElement(using: &rng)?.id : nil)
            try await act(d, "added place \(g.id)") { try await d.store.createGeofence(g) }
        case 56..<61:
            guard var g = geofences.randomElement(using: &rng) else { return }
            switch int(3) {
            case 0: g.name = "\(d.name)-g\(step)"
            case 1: g.radius = Double(100 + int(400))
            default: g.entryEventTypeId = chance(0.2) ? nil : types.randomElement(using: &rng)?.id
            }
            let edited = g
            try await act(d, "edited place \(g.id)") { try await d.store.updateGeofence(edited) }
        case 61..<63:
            guard let g = geofences.randomElement(using: &rng) else { return }
            try await act(d, "deleted place \(g.id)") { try await d.store.deleteGeofence(id: g.id) }
        case 63..<66:
            let open = try await d.store.conflicts(includeClosed: false)
            guard let c = open.randomElement(using: &rng)?.conflict else { return }
            if chance(0.6) {
                let newId = h.ids.next()
                try await act(d, "restored conflict \(c.id) of \(c.entityId)") {
                    _ = try await d.store.restoreConflict(id: c.id, newId: newId)
                }
            } else {
                try await d.store.dismissConflict(id: c.id)
                log.append("\(step) \(d.name) dismissed conflict \(c.id) of \(c.entityId)")
            }
        default: return
        }
    }

    /// Signs in or out, kills a pass, takes a device offline, turns faults on or off, or syncs.
    mutating func systemStep(_ d: Device, _ roll: Int) async throws {
        let h = harness
        switch roll {
        case 66..<68:
            let signedIn = d.identity.current != nil
            d.identity.set(signedIn ? nil : userId)
            log.append("\(step) \(d.name) signed \(signedIn ? "out" : "in")")
        case 68..<72:
            // Killed at a request of a pass drawn from the seed (a pass here makes 3–20): the
            // fatal request may reach the server with its answer lost; nothing after it is sent.
            // The engine is dropped and a new one starts on the same database.
            let calls = int(14)
            try await killedPass(d, after: calls, losingAnswer: chance(0.5))
        case 72..<76:
            d.offlineUntil = step + 3 + int(8)
        case 76..<83:
            var faults = FaultConfiguration()
            if chance(0.6) {
                faults.errorRate = 0.15
                faults.dropRate = 0.05
                faults.cutRate = 0.1
                faults.forced429Count = chance(0.3) ? 2 : 0
            }
            h.setFaults(faults)
            log.append("\(step) faults \(faults.errorRate > 0 ? "on" : "off")")
        case 83..<100:
            guard d.offlineUntil <= step else { return }
            let before = d.cursors.last ?? 0
            let run = try await syncQuietly(d)
            log.append("\(step) \(syncLine(d, run))")
            if let after = d.cursors.last, after < before {
                throw SimulationFailure(description: "\(d.name)'s cursor moved back from \(before) to \(after)")
            }
        default: return
        }
    }

    /// `d`'s pass killed after `calls` requests (with `losingAnswer`, the fatal one reaches the
    /// server and its answer is lost; nothing after it is sent). The engine is dropped and a new
    /// one (pages of `pageSize`) starts on the same database, maybe reaching the other instance;
    /// whatever the pass got to apply is in front of the person now.
    mutating func killedPass(
        _ d: Device, after calls: Int, losingAnswer losing: Bool, label: String = "pass", pageSize: Int = 20
    ) async throws {
        d.api.kill(after: calls, losingAnswer: losing, with: .transport(.connectionLost("the process was killed")))
        let run = await d.engine.sync(full: false)
        d.api.clearScript()
        let kept = try await d.store.downloadProgress().map { $0.listed ? "all" : $0.after ?? "none" } ?? "-"
        log.append(
            "\(step) \(d.name) \(label) killed at call \(calls)\(losing ? " (answer lost)" : ""): \(run.outcome) "
                + "pulled \(run.pulled) cursor \(try await d.store.cursor() ?? -1) kept \(kept)")
        if let cursor = try await d.store.cursor() { d.cursors.append(cursor) }
        try await observe(d)
        d.home = (d.home + 1) % d.apis.count
        d.engine = engine(on: d.store, d.api, identity: d.identity, pageSize: pageSize)
    }

    /// A pass of `d` as the trace shows it.
    func syncLine(_ d: Device, _ run: SyncRun) -> String {
        "\(d.name) sync \(run.outcome) pushed \(run.pushed) pulled \(run.pulled) \(run.error ?? "") cursor \(d.cursors.last ?? -1)"
    }

    /// The person's way out of each change the server refused, as the failure says: an event
    /// whose type is gone moves to a type that exists; one at the time of another event of its
    /// type moves to another time; a value its property's definition does not take is removed.
    /// Anything else refused is a defect (the check says so).
    mutating func resolveFailures(_ d: Device) async throws {
        for failed in try await d.store.failedChanges() where failed.entity == .event {
            guard let id = UUIDv7(failed.entityId), var e = try await d.store.event(id: id)?.value else { continue }
            if failed.error.contains("no such event type"), try await d.store.eventTypes().isEmpty {
                // Every type is gone (two devices each deleted one): the person makes one.
                typeNames += 1
                let t = EventType(id: harness.ids.next(), name: "T\(seed)-\(typeNames)")
                try await act(d, "added type \(t.id)") { try await d.store.createEventType(t) }
            }
            let types = try await d.store.eventTypes().map(\.value)
            if failed.error.contains("no such event type"), let type = types.first {
                // To a type that exists, at a time of its own (its old time may be taken there).
                e.eventTypeId = type.id
                e.timestamp = Date(timeIntervalSince1970: 1.7e9 + Double(int(1 << 30)) / 1000)
            } else if failed.error.contains("already exists") {
                e.timestamp = Date(timeIntervalSince1970: 1.7e9 + Double(int(1 << 30)) / 1000)
            } else if case let keys = e.properties.keys.filter({ failed.error.contains("properties.\($0):") }),
                !keys.isEmpty
            {
                // A value written before another device defined its key, that the definition does
                // not take (D53 checks every value of a create): the person removes it.
                for key in keys { e.properties[key] = nil }
            } else {
                continue
            }
            let fixed = e
            try await act(d, "took the way out of \(failed.kind) \(failed.entityId): \(failed.error)") {
                try await d.store.updateEvent(fixed)
            }
        }
    }

    /// A delete knowingly replaces every value the deleting device has seen. `direct`: deleted by
    /// hand (it must never come back); a type's cascade is the server's to decide.
    mutating func deleted(_ d: Device, _ id: String, _ fields: [String], direct: Bool = true) {
        if direct {
            deletedIds.insert(id)
            deletedBy[id] = d.name
        }
        log.append("\(step) \(d.name) deleted \(id)\(direct ? "" : " with its type")")
        for field in fields {
            let key = "\(id)/\(field)"
            supersedeSeen(by: d, key)
            intents["\(d.name)|\(key)"]?.superseded = true
        }
    }

    /// Other devices' last values of `key` that `d` had in front of it are knowingly replaced.
    mutating func supersedeSeen(by d: Device, _ key: String) {
        for other in devices where other !== d {
            if let intent = intents["\(other.name)|\(key)"], d.seen[key]?.contains(intent.value) == true {
                intents["\(other.name)|\(key)"]?.superseded = true
            }
        }
    }
}
