import ArgumentParser
import Foundation

/// `trendy app`: the app as a running process (see ``AppRunner`` and docs/launch.md).
struct AppCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app",
        abstract: "Run the app: live screens, keys, sync in the background; Ctrl-Z suspends, q quits.",
        discussion: """
            Starts like `trendy launch` (the same instant route and first frame) and keeps running, redrawing \
            when what it shows changes. Full-screen on a terminal; when output is not a terminal it prints each \
            new frame, and reads keys from standard input one line at a time (special keys as <enter>, <esc>, \
            <bs>, <up>, <down>, <left>, <right>), so scripts and tests can drive it. Keys: 1-4 tabs, l log an \
            event, s sync now, q quit; on Events: j/k select, n/p page, f filter by type, e move to another type, \
            d delete; on Calendar: [ and ] change the month. Ctrl-Z (SIGTSTP) goes to the background and \
            suspends, `fg` comes back; SIGTERM or SIGINT exit cleanly.
            """)
    @OptionGroup var global: GlobalOptions
    @Option(help: "The main tab to show first: dashboard, events, calendar, analytics, types, places or account.")
    var tab: MainTab = .dashboard
    @OptionGroup var sync: SyncIntervalOption

    func run() async throws {
        try await Self.run(global: global, tab: tab, syncInterval: sync.seconds, links: [])
    }

    /// Runs the app until it exits; `links` open once the person is signed in and onboarded.
    static func run(global: GlobalOptions, tab: MainTab, syncInterval: Double, links: [DeepLink]) async throws {
        let start = LaunchClock.mainStarted ?? .now
        let environment = ProcessInfo.processInfo.environment
        let paths = global.paths(environment: environment)
        let decision = AppLaunch.decide(paths: paths, start: start)
        var status: Int32 = 0
        try await CommandRunner(global).run { env, out in
            // Plain output (screen readers, TERM=dumb) is frames one after another: no alternate
            // screen, no cursor movement.
            let dumb = environment["TERM"] == "dumb"
            let runner = AppRunner(
                env: env, terminal: Terminal(fullScreen: out.style.plain || dumb ? false : nil), plain: out.style.plain,
                syncInterval: syncInterval > 0 ? .milliseconds(Int(syncInterval * 1_000)) : nil, start: start)
            status = await runner.run(decision: decision, tab: tab, links: links)
        }
        if status != 0 { throw ExitCode(status) }
    }
}

/// `--sync-interval`, for `trendy app` and for `trendy open` when it starts the app.
struct SyncIntervalOption: ParsableArguments {
    @Option(
        name: .customLong("sync-interval"),
        help: ArgumentHelp(
            "Seconds between background syncs while the app is in the foreground; 0 turns them off.",
            valueName: "seconds"))
    var seconds: Double = 60

    func validate() throws {
        guard seconds.isFinite, seconds == 0 || (seconds >= 1 && seconds <= 86_400) else {
            throw ValidationError("--sync-interval must be 0 (off) or 1…86400 seconds")
        }
    }
}

/// `trendy open <link>`: hands a deep link to the running app, or starts the app with it.
struct OpenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open",
        abstract: "Open a trendy:// link in the running app (or start the app with it).",
        discussion: """
            Links: trendy://events/<id> (the events page at that event), trendy://events, trendy://dashboard, \
            trendy://calendar, trendy://analytics, trendy://log/<type> (log an event of that type now). The link \
            reaches a running `trendy app` for the same data directory through its owner-only socket; with no \
            app running, this starts one. A link waits until you are signed in and onboarded.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The link, e.g. trendy://events/<id>.") var link: String
    @OptionGroup var sync: SyncIntervalOption

    func validate() throws {
        guard DeepLink(link) != nil else {
            throw ValidationError("not a Trendy link: \(link) (see `trendy open --help` for the links)")
        }
    }

    func run() async throws {
        let paths = global.paths(environment: ProcessInfo.processInfo.environment)
        guard let deepLink = DeepLink(link) else { return }
        if let reply = ControlClient.send(.open(deepLink), to: paths.controlSocket) {
            try handOver(reply, json: global.json)
            return
        }
        try await AppCommand.run(global: global, tab: .dashboard, syncInterval: sync.seconds, links: [deepLink])
    }
}
