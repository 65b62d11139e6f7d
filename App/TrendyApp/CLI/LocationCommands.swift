import ArgumentParser
import Foundation
import TrendyGeofence
import TrendyGeofenceLive
import TrendyModels
import TrendySync

extension LocationAuthorization: ExpressibleByArgument {
    /// Accepts `when-in-use` as well as `when_in_use`.
    public init?(argument: String) { self.init(rawValue: argument.replacingOccurrences(of: "-", with: "_")) }
}

/// `--speed`: a factor, or `max` for no waiting.
struct ReplaySpeed: ExpressibleByArgument, CustomStringConvertible {
    let factor: Double?

    init?(argument: String) {
        if argument == "max" {
            factor = nil
            return
        }
        guard let v = Double(argument), v.isFinite, v > 0 else { return nil }
        factor = v
    }

    init(factor: Double?) { self.factor = factor }

    /// `max`, or the factor (`60`, `2.5`): what `--help` shows as the default.
    var description: String { factor.map { String(format: "%g", $0) } ?? "max" }
}

/// Reads `<lat> <lon>` or `<lat>,<lon>` (negative values included: they are taken as values, not
/// options) and checks the ranges.
func parseCoordinate(_ words: [String]) throws(CLIError) -> Coordinate {
    let parts = words.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
        .filter { !$0.isEmpty }
    guard parts.count == 2, let lat = Double(parts[0]), let lon = Double(parts[1]) else {
        throw CLIError(
            code: .invalidLocation,
            message: "expected a latitude and a longitude like 52.52 13.405, got '\(words.joined(separator: " "))'",
            exitCode: .usage)
    }
    let point = Coordinate(latitude: lat, longitude: lon)
    do { try point.validate() } catch {
        throw CLIError(code: .invalidLocation, message: AppHelp.refusal(error), exitCode: .usage)
    }
    return point
}

/// The result of moving the simulated device.
struct LocationResult: Encodable {
    let fixes: Int
    let events: Int
    let seconds: Double
    let crossings: [HandledCrossing]
    let created: Int
    let closed: Int
}

/// Feeds fixes into the simulated monitor with the geofence manager running, waiting after each
/// fix that produced events until they are handled, then prints what happened.
func moveDevice(_ env: AppEnvironment, fixes: [LocationFix], speed: Double?, out: Output) async throws {
    let moved = try await moveDevice(env, fixes: fixes, speed: speed)
    printCrossings(moved.result.crossings, names: moved.names, out: out)
    out.line(moved.line)
    out.document(moved.result)
}

/// What a move did: the result, the geofences' names, and the summary line.
struct DeviceMove {
    var result: LocationResult
    var names: [UUIDv7: String]

    var line: String {
        let visits = result.crossings.map { "\($0.crossing.kind.rawValue) \(names[$0.crossing.geofenceId] ?? "?")" }
        return String(
            format: "%d fix(es) in %.2f s · %d crossing(s): %d event(s) logged, %d closed", result.fixes,
            result.seconds, result.crossings.count, result.created, result.closed)
            + (visits.isEmpty ? "" : " (\(visits.joined(separator: ", ")))")
    }
}

/// Moves the device (see the other `moveDevice`) and returns what happened, printing nothing.
func moveDevice(_ env: AppEnvironment, fixes: [LocationFix], speed: Double?) async throws -> DeviceMove {
    let (geofence, location) = try env.requireGeofence()
    await geofence.start()
    // A running app is handed moves while other processes add and change geofences: the regions
    // follow the saved geofences first, and the device's state is saved after each move, so the
    // next `trendy location show` reads what this move did.
    await geofence.geofencesMayHaveChanged()
    let earlier = await geofence.handledThisRun().count
    let summary = try await LocationReplayer(speed: speed).replay(
        fixes, into: location, afterEvents: { _ in await location.settled(by: geofence) })
    await location.settled(by: geofence)
    await location.flush()
    // Only this move's crossings (a running app handles many moves).
    let crossings = Array(await geofence.handledThisRun().dropFirst(earlier))
    let names = Dictionary(
        try await env.store.geofences().map { ($0.value.id, $0.value.name) }, uniquingKeysWith: { a, _ in a })
    let created = crossings.filter { $0.outcome == .created }.count
    let closed = crossings.filter { $0.outcome == .closed }.count
    return DeviceMove(
        result: LocationResult(
            fixes: summary.fixes, events: summary.events, seconds: summary.seconds, crossings: crossings,
            created: created, closed: closed),
        names: names)
}

/// Prints what the running app answered to a handed-over request; a refusal exits 1.
func handOver(_ reply: ControlReply, json: Bool) throws {
    // The answer is shown as text: whatever the request carried, no control character reaches
    // this terminal.
    let answer = oneLine(reply.description)
    let output = Output(json: json)
    if case .unanswered = reply {
        output.fail(
            CLIError(code: .appNotAnswering, message: "the running app: \(answer)", exitCode: .temporaryFailure))
        throw ExitCode(TrendyExitCode.temporaryFailure.rawValue)
    }
    if case .refused = reply {
        output.fail(CLIError(code: .appRefused, message: "the running app: \(answer)", exitCode: .failure))
        throw ExitCode(TrendyExitCode.failure.rawValue)
    }
    output.line("The running app handled it: \(answer)")
    output.document(["handled_by": "app", "answer": answer])
}

struct LocationCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "location",
        abstract: "Drive the simulated device location (this is how geofences are crossed on Linux).",
        discussion: """
            The simulated platform keeps the permission, the last location and the monitored regions \
            between runs, like a phone does. Crossings become events in the local store; `trendy sync` \
            sends them.
            """,
        subcommands: [Set.self, Replay.self, Show.self, Permission.self],
        defaultSubcommand: Show.self)

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set", abstract: "Move the device to a point.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "When the device got there: ISO-8601 or now.") var at: String?
        @Argument(
            parsing: .allUnrecognized,
            help: ArgumentHelp(
                "Latitude and longitude: 52.52 13.405, 52.52,13.405 or -33.86 151.2.", valueName: "lat lon"))
        var point: [String] = []

        func run() async throws {
            // A running app is the one monitor: it moves the device, not this process.
            let paths = global.paths(environment: ProcessInfo.processInfo.environment)
            if let reply = ControlClient.send(.location(point: point, at: at), to: paths.controlSocket) {
                try handOver(reply, json: global.json)
                return
            }
            try await CommandRunner(global).run { env, out in
                let point = try parseCoordinate(point)
                let time = try parseTime(at, now: env.now())
                try await moveDevice(env, fixes: [LocationFix(point, time: time)], speed: nil, out: out)
            }
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "replay", abstract: "Replay a GPX track (trkpt, rtept or wpt points, in order).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The .gpx file.") var track: String
        @Option(help: "Times faster than real time (e.g. 60), or max for no waiting.")
        var speed = ReplaySpeed(factor: nil)

        func run() async throws {
            let paths = global.paths(environment: ProcessInfo.processInfo.environment)
            let file = URL(fileURLWithPath: track).standardizedFileURL.path
            if FileManager.default.isReadableFile(atPath: file),
                let reply = ControlClient.send(.replay(path: file, speed: speed.factor), to: paths.controlSocket)
            {
                try handOver(reply, json: global.json)
                return
            }
            try await CommandRunner(global).run { env, out in
                guard let data = FileManager.default.contents(atPath: track) else {
                    throw CLIError(code: .noInput, message: "cannot read \(track)", exitCode: .noInput)
                }
                let fixes: [LocationFix]
                do { fixes = try GPXTrack.parse([UInt8](data)) } catch {
                    throw CLIError(
                        code: .invalidGpx, message: "\(track): \(String(describing: error))", exitCode: .dataError)
                }
                try await moveDevice(env, fixes: fixes, speed: speed.factor, out: out)
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "The simulated location, permission and monitored regions.")
        @OptionGroup var global: GlobalOptions

        struct Result: Encodable {
            let location: Coordinate?
            let authorization: LocationAuthorization
            let monitored: [MonitoredRegion]
        }

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                let location = try env.requireGeofence().location
                let result = Result(
                    location: await location.lastKnownLocation(), authorization: await location.authorization(),
                    monitored: await location.monitoredRegions())
                out.line("Location: \(result.location?.description ?? "unknown")")
                out.line("Permission: \(result.authorization.rawValue)")
                out.line("Monitored regions: \(result.monitored.count) of \(location.capacity)")
                for r in result.monitored { out.line("  \(r.identifier)  \(r.center)  \(Int(r.radius)) m") }
                out.document(result)
            }
        }
    }

    struct Permission: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "permission",
            abstract: "Change the location permission as a person would in Settings.",
            discussion: "One of: always, when-in-use, denied, restricted, not-determined.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "always, when-in-use, denied, restricted or not-determined.")
        var status: LocationAuthorization

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                let (geofence, location) = try env.requireGeofence()
                await geofence.start()
                await location.setAuthorization(status)
                await location.settled(by: geofence)
                out.line("Location permission: \(status.rawValue)")
                if let advice = GeofenceHealth.advice(for: status) { out.line("→ \(advice)") }
                out.document(["authorization": status.rawValue])
            }
        }
    }
}
