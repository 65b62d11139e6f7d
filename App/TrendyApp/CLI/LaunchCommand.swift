import ArgumentParser
import Foundation
import TrendyGeofence
import TrendyModels

extension MainTab: ExpressibleByArgument {}

/// Prints a frame for people: a header with its timing, then the screen.
func printFrame(_ frame: Frame, plain: Bool = false) {
    if plain {
        print(
            "Frame \(frame.index) at \(String(format: "%.1f", frame.elapsedMs)) ms: \(frame.route), screen \(frame.screen)."
        )
        print(frame.text)
        print("")
        return
    }
    let header =
        "── frame \(frame.index) · \(String(format: "%.1f", frame.elapsedMs)) ms · \(frame.route) · \(frame.screen) "
    print(header + String(repeating: "─", count: max(0, 60 - header.count)))
    print(frame.text)
}

struct LaunchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "launch",
        abstract: "Start the app as a cold launch: print every frame it shows and how long the first ones took.",
        discussion: """
            The route is decided from the session file and the onboarding cache before anything else is \
            built; the first frame comes from the local store; then the session is verified and the \
            start-up work (sync, ...) runs in the background, each change in route or sync banner \
            rendering a new frame. Times are measured from the start of the program's main.
            """)
    @OptionGroup var global: GlobalOptions
    @Option(help: "The main tab to show: dashboard, events, calendar, analytics, types, places or account.") var tab:
        MainTab = .dashboard
    @Flag(help: "Stop after the first frame instead of letting the background work finish.") var noWait = false
    /// The region-event option's name, shared with the shortcut in ``TrendyCommand/start(_:)``.
    static let regionEventOption = "region-event"

    @Option(
        name: .customLong(regionEventOption),
        help: ArgumentHelp(
            "Launch as the system does for a region crossing: enter|exit:<geofence-id>[@<time>].",
            discussion: "The crossing is stored durably before anything else starts, then handled exactly once "
                + "when the geofence manager is up, keeping its time (default: now). Repeatable."))
    var regionEvent: [RegionEventArgument] = []

    func run() async throws {
        let start = LaunchClock.mainStarted ?? .now
        let paths = global.paths(environment: ProcessInfo.processInfo.environment)
        // A crossing nobody would handle is refused, not stored and forgotten.
        if !regionEvent.isEmpty, !AppPlugins.has("geofence", in: AppPlugins.active) {
            let cli = CLIError.featureUnavailable(
                "this program is built without geofencing: it cannot handle region events")
            Output(json: global.json).fail(cli)
            throw ExitCode(cli.exitCode.rawValue)
        }
        for event in regionEvent {
            do { try AppComposition.captureRegionEvent(event.crossing, paths: paths) } catch {
                let cli = CLIError(
                    code: .cannotCapture, message: "cannot store the region event: \(error.localizedDescription)",
                    exitCode: .cannotCreate)
                Output(json: global.json).fail(cli)
                throw ExitCode(cli.exitCode.rawValue)
            }
        }
        // Decided before parsing when the data directory read then is the parsed one.
        let decision =
            LaunchClock.early.flatMap { $0.paths == paths ? $0.decision : nil }
            ?? AppLaunch.decide(paths: paths, start: start)
        let json = global.json
        try await CommandRunner(global).run { env, out in
            let plain = out.style.plain
            let launch = AppLaunch(
                tab: tab, wait: !noWait, plain: plain,
                onFrame: { frame in if !json { printFrame(frame, plain: plain) } })
            let report = await launch.run(env, decision: decision, start: start)
            out.line(
                String(
                    format: "route %@ decided in %.2f ms · first frame at %.1f ms · %d frame(s)%@", report.route,
                    report.routeDecidedMs, report.firstFrameMs, report.frames.count,
                    report.finalRoute == report.route ? "" : " · now \(report.finalRoute)"))
            for c in report.crossings {
                out.line(
                    "region \(c.crossing.kind.rawValue) \(c.crossing.geofenceId) at "
                        + "\(ISO8601.format(c.crossing.occurredAt)) → \(c.outcome)")
            }
            out.document(report)
        }
    }
}

/// `enter:<geofence-id>[@<time>]` or `exit:...`; the id may also be the region identifier
/// (`trendy.geofence.<id>`).
struct RegionEventArgument: ExpressibleByArgument {
    let crossing: RegionCrossing

    init?(argument: String) {
        let parts = argument.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, let kind = CrossingKind(rawValue: parts[0].lowercased()) else { return nil }
        var rest = parts[1]
        var time = Date()
        if let at = rest.firstIndex(of: "@") {
            guard let parsed = TrendyJSON.parseDate(String(rest[rest.index(after: at)...])) else { return nil }
            time = parsed
            rest = String(rest[..<at])
        }
        guard let id = UUIDv7(rest) ?? RegionNamespace().geofenceId(from: rest) else { return nil }
        crossing = RegionCrossing(geofenceId: id, kind: kind, occurredAt: time, source: .background)
    }

    static var defaultValueDescription: String { "enter|exit:<geofence-id>[@<time>]" }
}
