import ArgumentParser
import Foundation
import TrendyGeofence
import TrendyModels
import TrendySync

/// Finds a geofence by id or by name (case-insensitive).
func resolveGeofence(_ env: AppEnvironment, _ nameOrId: String) async throws -> LocalRecord<Geofence> {
    let all = try await env.store.geofences()
    if let id = UUIDv7(nameOrId), let hit = all.first(where: { $0.value.id == id }) { return hit }
    let named = all.filter { $0.value.name.caseInsensitiveCompare(nameOrId) == .orderedSame }
    if named.count == 1 { return named[0] }
    if named.count > 1 {
        throw CLIError(
            code: .ambiguousGeofence, message: "\(named.count) geofences are named '\(nameOrId)'; use the id",
            exitCode: .dataError)
    }
    throw CLIError(
        code: .unknownGeofence, message: "no geofence '\(nameOrId)'; see `trendy geofence list`",
        exitCode: .dataError)
}

/// Prints the crossings a command caused, one line each.
func printCrossings(_ crossings: [HandledCrossing], names: [UUIDv7: String], out: Output) {
    for h in crossings {
        let name = names[h.crossing.geofenceId] ?? h.crossing.geofenceId.description
        out.line(
            "\(ISO8601.format(h.crossing.occurredAt))  \(h.crossing.kind.rawValue) \(name) → \(h.outcome)"
                + (h.crossing.source == .monitor ? "" : " (\(h.crossing.source.rawValue))"))
    }
}

struct GeofenceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geofence",
        abstract: "Places that log events when you arrive and leave.",
        discussion: """
            Entering a geofence logs an event of its type (source geofence); leaving gives that event its \
            end time, or logs an event of the exit type when one is set. At most 20 regions are monitored \
            at once: the nearest ones, with one slot for a region around you that re-plans when you leave \
            it. Geofencing needs "Always" location access, asked in two steps (`trendy geofence authorize`).
            """,
        subcommands: [Add.self, List.self, Edit.self, Remove.self, Health.self, Authorize.self, Reconcile.self],
        defaultSubcommand: List.self)

    struct Item: Encodable {
        let id: String
        let name: String
        let latitude: Double
        let longitude: Double
        let radius: Double
        let entry_type: String?
        let exit_type: String?
        let active: Bool
        let monitored: Bool
        let inside: Bool
        let sync_status: String
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Add a geofence; asks for location access the first time.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Its name, e.g. Gym.") var name: String
        @Option(help: "Radius in metres, 50 ... 10000.") var radius = 100.0
        @Option(help: "The event type logged on arrival (name or id).") var type: String
        @Option(help: "An event type logged on leaving, instead of closing the arrival event.") var exitType: String?
        @Flag(help: "Save it without monitoring it.") var inactive = false
        @Argument(
            parsing: .allUnrecognized,
            help: ArgumentHelp("The centre: 52.52 13.405, 52.52,13.405 or -33.86 151.2.", valueName: "lat lon"))
        var point: [String] = []

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                let center = try parseCoordinate(point)
                let (latitude, longitude) = (center.latitude, center.longitude)
                let entry = try await resolveType(env, type)
                var exit: EventType?
                if let exitType { exit = try await resolveType(env, exitType) }
                let added = try await storeCall {
                    try await PlaceActions(env: env).add(
                        name: name, center: center, radius: radius, logs: entry.id, exit: exit?.id, active: !inactive)
                }
                let (geofence, monitored) = (added.place, added.monitored)
                if let asked = added.accessAsked { out.line("Location access: \(asked.rawValue)") }
                out.line(
                    "Added geofence \(geofence.name) (\(geofence.id)), \(Int(radius)) m, logs \(entry.name)"
                        + (monitored ? "; monitored." : "; not monitored yet (see `trendy geofence health`)."))
                out.document(
                    Item(
                        id: geofence.id.description, name: geofence.name, latitude: latitude, longitude: longitude,
                        radius: radius, entry_type: entry.name, exit_type: exit?.name, active: !inactive,
                        monitored: monitored, inside: false, sync_status: "pending"))
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List geofences.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                let health = try await env.requireGeofence().service.health()
                let byId = Dictionary(uniqueKeysWithValues: health.regions.map { ($0.id, $0) })
                let records = try await env.store.geofences()
                let types = Dictionary(
                    try await env.store.eventTypes().map { ($0.value.id, $0.value.name) },
                    uniquingKeysWith: { a, _ in a })
                if records.isEmpty {
                    out.line("No geofences yet. Add one with `trendy geofence add <name> <lat> <lon> --type <type>`.")
                }
                let items = records.sorted { $0.value.name < $1.value.name }.map { r -> Item in
                    let g = r.value
                    return Item(
                        id: g.id.description, name: g.name, latitude: g.center.latitude, longitude: g.center.longitude,
                        radius: g.radius, entry_type: g.entryEventTypeId.flatMap { types[$0] },
                        exit_type: g.exitEventTypeId.flatMap { types[$0] }, active: g.isActive,
                        monitored: byId[g.id]?.monitored ?? false, inside: byId[g.id]?.inside ?? false,
                        sync_status: r.syncStatus.rawValue)
                }
                for i in items {
                    let flags = [
                        i.active ? nil : "inactive", i.monitored ? "monitored" : nil, i.inside ? "inside" : nil,
                    ]
                    .compactMap { $0 }.joined(separator: ", ")
                    out.line(
                        "\(i.name)  \(i.latitude),\(i.longitude)  \(Int(i.radius)) m  → \(i.entry_type ?? "-")"
                            + (flags.isEmpty ? "" : "  (\(flags))") + "  [\(i.sync_status)]  \(i.id)")
                }
                out.document(items)
            }
        }
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "edit", abstract: "Change a geofence: name, centre, radius, types, active (it syncs).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Name or id.") var geofence: String
        @Option(help: "Its new name.") var name: String?
        @Option(help: "A new centre: \"52.52 13.405\" or 52.52,13.405.") var at: String?
        @Option(help: "Radius in metres, 50 ... 10000.") var radius: Double?
        @Option(help: "The event type logged on arrival (name or id).") var type: String?
        @Option(help: "An event type logged on leaving (name or id); `none` closes the arrival event instead.")
        var exitType: String?
        @Flag(inversion: .prefixedNo, help: "Monitor it (--active) or keep it without monitoring (--no-active).")
        var active: Bool?

        func validate() throws {
            guard [name, at, type, exitType].contains(where: { $0 != nil }) || radius != nil || active != nil else {
                throw ValidationError(
                    "say what to change: --name, --at, --radius, --type, --exit-type or --[no-]active")
            }
        }

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                let g = try await resolveGeofence(env, geofence).value
                let center = try at.map { text throws(CLIError) in try parseCoordinate([text]) }
                var entry: UUIDv7?
                if let type { entry = try await resolveType(env, type).id }
                var exit: UUIDv7??
                if let exitType {
                    exit = exitType.lowercased() == "none" ? .some(nil) : try await resolveType(env, exitType).id
                }
                guard
                    let edited = try await storeCall({
                        try await PlaceActions(env: env).edit(g.id) { place in
                            if let name { place.name = name.trimmingWhiteSpace }
                            if let center { place.center = center }
                            if let radius { place.radius = radius }
                            if let entry { place.entryEventTypeId = entry }
                            if let exit { place.exitEventTypeId = exit }
                            if let active { place.isActive = active }
                        }
                    })
                else { throw CLIError(code: .unknownGeofence, message: "that geofence is gone", exitCode: .dataError) }
                out.line("Changed geofence \(edited.name); it syncs with the next `trendy sync`.")
                out.document(["id": edited.id.description, "name": edited.name])
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a geofence.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Name or id.") var geofence: String

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                let g = try await resolveGeofence(env, geofence).value
                try await storeCall { try await PlaceActions(env: env).remove(g.id) }
                out.line("Removed geofence \(g.name); its events stay.")
                out.document(["removed": g.id.description])
            }
        }
    }

    struct Health: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "health",
            abstract: "Monitored against saved regions, missing and orphaned ones, location access, last events.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                let h = try await env.requireGeofence().service.health()
                out.line("Geofencing: \(h.ok ? "ok" : "needs attention")")
                out.line("Location access: \(h.authorization.rawValue)")
                out.line(
                    "Saved: \(h.saved) active (\(h.savedTotal) in all) · monitored: \(h.monitored.count) of "
                        + "\(h.capacity)" + (h.foreign > 0 ? " (+\(h.foreign) not ours)" : "")
                        + (h.overCapacity > 0 ? " · \(h.overCapacity) farther ones wait their turn" : ""))
                if !h.missing.isEmpty { out.line("Missing: \(h.missing.map(\.description).joined(separator: ", "))") }
                if !h.orphaned.isEmpty { out.line("Orphaned: \(h.orphaned.joined(separator: ", "))") }
                if let r = h.refreshRegion {
                    out.line("Refresh region: \(Int(r.radius)) m around \(r.center)")
                }
                if h.inboxPending > 0 { out.line("Captured crossings not handled yet: \(h.inboxPending)") }
                for r in h.regions {
                    var line = "  \(r.name): \(r.monitored ? "monitored" : "not monitored")"
                    if !r.active { line += ", inactive" }
                    if r.inside { line += ", inside" }
                    if let last = r.lastCrossing {
                        line +=
                            ", last \(last.crossing.kind.rawValue) \(ISO8601.format(last.crossing.occurredAt)) (\(last.outcome))"
                    }
                    out.line(line)
                }
                for a in h.advice { out.line("→ \(a)") }
                out.document(h)
            }
        }
    }

    struct Authorize: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "authorize",
            abstract: "Ask for location access: \"While Using\" first, then \"Always\".")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                let status = try await env.requireGeofence().service.requestAuthorization()
                try await env.requireGeofence().service.reconcile(.authorization)
                out.line("Location access: \(status.rawValue)")
                out.document(["authorization": status.rawValue])
                if let advice = GeofenceHealth.advice(for: status) {
                    throw CLIError(code: .locationNotAlways, message: advice, exitCode: .noPermission)
                }
            }
        }
    }

    struct Reconcile: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reconcile", abstract: "Bring the monitored regions in line with the saved geofences.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                try await env.requireGeofence().service.start()
                let r = try await env.requireGeofence().service.reconcile(.manual)
                if !r.authorized {
                    out.line("Not reconciled: geofencing needs \"Always\" location access.")
                } else {
                    out.line(
                        "Added \(r.added.count), removed \(r.removed.count), kept \(r.kept.count)"
                            + (r.overCapacity > 0 ? "; \(r.overCapacity) over capacity" : "")
                            + (r.error.map { "; error: \($0)" } ?? ""))
                }
                out.document(r)
            }
        }
    }
}
