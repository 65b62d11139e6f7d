import Foundation
import Logging
import Synchronization
import TrendyAPI
import TrendyAuth
import TrendyFiles
import TrendyGeofence
import TrendyGeofenceLive
import TrendyInsights
import TrendyLogging
import TrendyModels
import TrendyOnboarding
import TrendyRouting
import TrendySync

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `trendy app`: the app as a running process. It starts like `trendy launch` (the same instant
/// route and first frame), then keeps running: it redraws whenever what it shows changes (a key,
/// the route, the sync banner, a pass that pulled events), syncs on an interval and shortly after
/// a local write (never two passes at once), and moves between scene phases on signals — Ctrl-Z
/// (SIGTSTP) goes to the background (every module's background hook: logs flushed, geofence state
/// saved, onboarding writes sent) and suspends; `fg` (SIGCONT) comes back to the foreground
/// (session validated, geofences reconciled, a sync); SIGTERM and SIGINT go to the background and
/// exit cleanly. Every transition is logged.
///
/// Everything happens in one loop over one stream of events (keys, signals, routes, statuses,
/// timers), so the state needs no lock and a key never races a redraw.
final class AppRunner: Sendable {
    /// What reaches the loop from outside: the core's inputs, and a suspend the runner answers
    /// itself.
    typealias Input = AppCore.Input

    let env: AppEnvironment
    let terminal: Terminal
    let plain: Bool
    let syncInterval: Duration?
    let writeDebounce: Duration
    let start: ContinuousClock.Instant
    /// The events per type, last counted, and what they were counted at: the events list's
    /// total ("page 2 of 14") and the types tab's counts are read from it.
    let counts = Mutex<(key: CountKey, byType: [UUIDv7: Int])?>(nil)
    /// The last insights (dashboard banner, analytics tab) and what they were computed at.
    let insights = Mutex<(key: InsightKey, report: InsightReport)?>(nil)

    /// What the counts depend on: a local write moves the change mark, a pass its time.
    struct CountKey: Equatable {
        var mark: Int64
        var synced: Date?
    }

    init(
        env: AppEnvironment, terminal: Terminal, plain: Bool, syncInterval: Duration?,
        writeDebounce: Duration = .milliseconds(500), start: ContinuousClock.Instant
    ) {
        self.env = env
        self.terminal = terminal
        self.plain = plain
        self.syncInterval = syncInterval
        self.writeDebounce = writeDebounce
        self.start = start
    }

    var log: Logger { env.logger(.app) }

    /// The tasks the runner keeps while the loop runs.
    struct Running {
        let sink: AsyncStream<Input>.Continuation
        let signals: SignalWatcher
        var syncing: Task<Void, Never>?
        var debounce: Task<Void, Never>?
        var moves: Task<Void, Never>?
        /// A use case running while keys still work (signing in).
        var background: Task<Void, Never>?
        /// The next retry after the server was out.
        var retry: Task<Void, Never>?
        /// The foreground hooks after `fg` (a pass among them), off the loop: keys work meanwhile.
        var foreground: Task<Void, Never>?
    }

    /// Runs until the person quits, input ends, or SIGTERM/SIGINT; returns the exit status.
    /// `links` open as soon as the person is signed in and onboarded.
    func run(decision: AppLaunch.Decision, tab: MainTab, links: [DeepLink] = []) async -> Int32 {
        let (events, sink) = AsyncStream.makeStream(of: Input.self, bufferingPolicy: .unbounded)
        // One app per data directory, whether or not its socket could be made (a path too long
        // for a socket address): an exclusive lock held for the app's life.
        let lock: ProcessLock.Hold
        do {
            lock = try ProcessLock(file: env.paths.dataDirectory.appendingPathComponent("app.lock"))
                .acquire(.exclusive, timeout: .zero)
        } catch {
            let message =
                "trendy: the app is already running for this data directory; `trendy open <link>` reaches it\n"
            FileHandle.standardError.write(Data(message.utf8))
            return TrendyExitCode.temporaryFailure.rawValue
        }
        defer { lock.release() }
        // Holding the lock, this is the only app: a socket file there is one a dead app left.
        let control: ControlServer?
        do {
            control = try ControlServer(at: env.paths.controlSocket) { [now = env.now] line, answer in
                sink.yield(.control(line, AppCore.Reply(send: answer), at: now()))
            }
        } catch {
            log.warning("The app runs without its control socket", metadata: ["error": .string("\(error)")])
            control = nil
        }
        let signals = SignalWatcher([SIGTSTP, SIGCONT, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGWINCH]) {
            sink.yield(.signal($0, canSuspend: getsid(0) != getpid()))
        }
        await env.sync.refreshCounts()
        var core = AppCore(
            route: env.routing.launch(with: decision.snapshot), tab: tab, banner: env.sync.status.bannerText,
            plain: plain, links: links)
        // Whatever is queued after this moment is the app's to send (the launch's pass sends
        // what was there).
        core.seenMark = try? await env.store.localChangeMark()
        log.info("App started", metadata: ["route": .string(core.route.description), "phase": "foreground"])
        terminal.enter()
        var running = Running(sink: sink, signals: signals)
        var status: Int32?
        await process(.refresh, &core, &running, exit: &status)
        let producers = producers(sink)
        for await input in events {
            await process(input, &core, &running, exit: &status)
            if status != nil { break }
        }
        await exit(core, running, launch: producers.last)
        for task in producers { task.cancel() }
        env.routing.stop()
        signals.stop()
        control?.stop()
        terminal.leave()
        log.info("App exited", metadata: ["frames": .int(core.frames)])
        return status ?? 0
    }

    /// What feeds the loop: keys, routes, statuses, the sync interval, a look at the store every
    /// two seconds (other processes write to the same install: `trendy log` in another terminal,
    /// an import) and at its change mark every half second (what they queued is sent soon),
    /// the launch hooks.
    func producers(_ sink: AsyncStream<Input>.Continuation) -> [Task<Void, Never>] {
        let terminal = terminal
        let input = Task {
            for await key in terminal.keys() { sink.yield(.key(key)) }
            sink.yield(.inputEnded)
        }
        let routes = env.routing.routes()
        let statuses = env.sync.statusUpdates()
        let interval = syncInterval
        let modules = env.modules
        return [
            input,
            Task { for await next in routes { sink.yield(.route(next)) } },
            Task { for await status in statuses { sink.yield(.banner(status.bannerText)) } },
            Task {
                guard let interval else { return }
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    sink.yield(.syncDue)
                }
            },
            Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(2))
                    sink.yield(.refresh)
                }
            },
            Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(500))
                    sink.yield(.watch)
                }
            },
            // The launch hooks (the launch's pass among them) run below the keys' priority (D62).
            Task(priority: SyncPriority.pass) {
                for module in modules { await module.didLaunch() }
                sink.yield(.refresh)
            },
        ]
    }

    /// Hands `input` to the core and carries out its effects in order; an effect's answer is
    /// handled at once, before the next effect (a key's write is done before the screen is read).
    func process(_ input: Input, _ core: inout AppCore, _ running: inout Running, exit: inout Int32?) async {
        for effect in core.handle(input) {
            if case .exit(let status) = effect {
                exit = status
                return
            }
            if let answer = await execute(effect, core, &running) {
                await process(answer, &core, &running, exit: &exit)
            }
        }
    }

    /// A clean exit: a pass running is let finish (cancelling it would record a failure), and
    /// changes made since the last pass are sent (bounded by the network budget like any pass);
    /// then the background hooks (persist, flush).
    func exit(_ core: AppCore, _ running: Running, launch: Task<Void, Never>? = nil) async {
        running.debounce?.cancel()
        running.background?.cancel()
        running.retry?.cancel()
        // The launch's hooks (its pass among them) and the foreground hooks after a `fg` finish
        // first, up to a few seconds: quitting at once used to close the network under that pass,
        // which recorded "Offline" and left what it was sending unsent.
        let hooks = [launch, running.foreground].compactMap { $0 }
        if !hooks.isEmpty {
            let finished: @Sendable () async -> Bool = {
                for hook in hooks { await hook.value }
                return true
            }
            _ = await withDeadline(.seconds(5), orElse: { false }, finished)
        }
        await running.syncing?.value
        await running.moves?.value
        // One last look: a `trendy log` in another terminal a moment ago is sent too.
        var core = core
        if let mark = try? await env.store.localChangeMark() { _ = core.handle(.marked(mark, ours: false)) }
        if core.syncsBeforeExit {
            let run = await env.sync.sync(full: false)
            await env.syncFinished(run)
            log.info(
                "Synced before exit", metadata: ["outcome": .string(run.outcome.rawValue), "pushed": .int(run.pushed)])
        }
        await enterBackground(reason: "exit")
    }
}
