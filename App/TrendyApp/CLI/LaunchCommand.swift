import ArgumentParser
import Foundation

extension MainTab: ExpressibleByArgument {}

/// Prints a frame for people: a header with its timing, then the screen.
func printFrame(_ frame: Frame) {
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
    @Option(help: "The main tab to show: dashboard, events, calendar or analytics.") var tab: MainTab = .dashboard
    @Flag(help: "Stop after the first frame instead of letting the background work finish.") var noWait = false

    func run() async throws {
        let start = LaunchClock.mainStarted ?? .now
        let decision = AppLaunch.decide(
            paths: global.paths(environment: ProcessInfo.processInfo.environment), start: start)
        let json = global.json
        try await CommandRunner(global).run { env, out in
            let launch = AppLaunch(tab: tab, wait: !noWait, onFrame: { frame in if !json { printFrame(frame) } })
            let report = await launch.run(env, decision: decision, start: start)
            out.line(
                String(
                    format: "route %@ decided in %.2f ms · first frame at %.1f ms · %d frame(s)%@", report.route,
                    report.routeDecidedMs, report.firstFrameMs, report.frames.count,
                    report.finalRoute == report.route ? "" : " · now \(report.finalRoute)"))
            out.document(report)
        }
    }
}
