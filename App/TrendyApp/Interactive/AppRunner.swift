import Foundation
import Logging
import TrendyAuth
import TrendyFiles
import TrendyGeofence
import TrendyGeofenceLive
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
    /// What the loop reacts to.
    enum Input: Sendable {
        case key(Key)
        case inputEnded
        case signal(Int32)
        case route(AppRoute)
        case status(SyncStatus)
        case syncDue
        case synced(SyncRun)
        case message(String)
        /// Time to look at the store again (another process may have written).
        case refresh
        /// A line on the control socket and the function that answers it.
        case control(String, @Sendable (String) -> Void)
    }

    /// The scene phase.
    enum Phase: String, Sendable {
        case foreground
        case background
    }

    let env: AppEnvironment
    let terminal: Terminal
    let plain: Bool
    let syncInterval: Duration?
    let writeDebounce: Duration
    let start: ContinuousClock.Instant

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

    /// Runs until the person quits, input ends, or SIGTERM/SIGINT; returns the exit status.
    /// `links` open as soon as the person is signed in and onboarded.
    func run(decision: AppLaunch.Decision, tab: MainTab, links: [DeepLink] = []) async -> Int32 {
        let (events, sink) = AsyncStream.makeStream(of: Input.self, bufferingPolicy: .unbounded)
        // One app per data directory, whether or not its socket could be made (a path too long
        // for a socket address): an exclusive lock held for the app's life.
        let running: ProcessLock.Hold
        do {
            running = try ProcessLock(file: env.paths.dataDirectory.appendingPathComponent("app.lock"))
                .acquire(.exclusive, timeout: .zero)
        } catch {
            let message =
                "trendy: the app is already running for this data directory; `trendy open <link>` reaches it\n"
            FileHandle.standardError.write(Data(message.utf8))
            return TrendyExitCode.temporaryFailure.rawValue
        }
        defer { running.release() }
        // Holding the lock, this is the only app: a socket file there is one a dead app left.
        let control: ControlServer?
        do {
            control = try ControlServer(at: env.paths.controlSocket) { line, answer in
                sink.yield(.control(line, answer))
            }
        } catch {
            log.warning("The app runs without its control socket", metadata: ["error": .string("\(error)")])
            control = nil
        }
        var pendingLinks = links
        var moves: Task<Void, Never>?
        let signals = SignalWatcher([SIGTSTP, SIGCONT, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGWINCH]) {
            sink.yield(.signal($0))
        }
        var ui = AppUI()
        ui.tab = tab
        var route = env.routing.launch(with: decision.snapshot)
        await env.sync.refreshCounts()
        var banner = env.sync.status.bannerText
        var frames = 0
        var lastText = ""
        var phase = Phase.foreground
        var syncing: Task<Void, Never>?
        var writesSinceSync = false
        var debounce: Task<Void, Never>?
        log.info("App started", metadata: ["route": .string(route.description), "phase": "foreground"])

        terminal.enter()
        // What the keys are judged against: set by every draw from what it showed.
        var context = AppUI.Context(route: route, types: [], page: [], hasMore: false)
        /// Forgets what is on the terminal: the next draw paints everything.
        func repaint() {
            terminal.invalidate()
            lastText = ""
        }
        func draw() async {
            let selected = context.page.indices.contains(ui.selection) ? context.page[ui.selection] : nil
            var data = await viewData(route: route, ui: ui)
            // The selection stays on its event when rows above it came or went.
            if let selected, let row = data.page.firstIndex(where: { $0.id == selected }), row != ui.selection {
                ui.selection = row
            } else if ui.selection >= data.page.count, !data.page.isEmpty {
                ui.selection = data.page.count - 1
            } else if data.page.isEmpty, ui.page > 0, data.hasMore == false, ui.tab == .events, route == .authenticated
            {
                // The last page emptied (its only event deleted): show the one before.
                ui.page -= 1
                data = await viewData(route: route, ui: ui)
            }
            context = AppUI.Context(
                route: route, types: data.types, page: data.page.map(\.id), hasMore: data.hasMore)
            let (id, text) = AppScreens.render(ui, route: route, data: data, banner: banner, plain: plain)
            guard text != lastText else { return }
            lastText = text
            frames += 1
            terminal.draw(
                Frame(
                    index: frames, route: route.description, screen: id, banner: route == .authenticated ? banner : nil,
                    elapsedMs: LaunchClock.milliseconds(since: start), text: text),
                plain: plain)
        }
        await draw()

        // Producers: keys, routes, statuses, the sync interval, the launch hooks.
        let input = Task {
            for await key in terminal.keys() { sink.yield(.key(key)) }
            sink.yield(.inputEnded)
        }
        let routes = env.routing.routes()
        let routeTask = Task { for await next in routes { sink.yield(.route(next)) } }
        let statuses = env.sync.statusUpdates()
        let statusTask = Task { for await status in statuses { sink.yield(.status(status)) } }
        let timer = Task {
            guard let interval = syncInterval else { return }
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                sink.yield(.syncDue)
            }
        }
        // Other processes write to the same install (`trendy log` in another terminal, an import):
        // the screen is read again every two seconds and drawn only when it changed.
        let refresher = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(2))
                sink.yield(.refresh)
            }
        }
        let modules = env.modules
        let launchHooks = Task {
            for module in modules { await module.didLaunch() }
            sink.yield(.refresh)
        }

        func startSync() {
            guard syncing == nil, phase == .foreground, route == .authenticated else { return }
            writesSinceSync = false
            let env = env
            syncing = Task {
                let run = await env.sync.sync(full: false)
                await env.syncFinished(run)
                sink.yield(.synced(run))
            }
        }

        var status: Int32 = 0
        loop: for await input in events {
            switch input {
            case .key(let key):
                guard let command = ui.handle(key, context) else { continue }
                if command == .quit { break loop }
                if await perform(command, ui: &ui, route: route, sink: sink) {
                    writesSinceSync = true
                    await env.sync.refreshCounts()
                    // A local write: sync shortly after, once, however many writes come meanwhile.
                    debounce?.cancel()
                    let delay = writeDebounce
                    debounce = Task {
                        try? await Task.sleep(for: delay)
                        if !Task.isCancelled { sink.yield(.syncDue) }
                    }
                }
                if command == .syncNow { startSync() }
                // A step that moved the route took effect at once: the next key sees the new screen.
                if env.routing.route != route {
                    route = env.routing.route
                    log.info("Route changed", metadata: ["to": .string(route.description)])
                }
            case .inputEnded:
                log.info("Input ended")
                break loop
            case .route(let next):
                guard next != route else { continue }
                log.info("Route changed", metadata: ["to": .string(next.description)])
                route = next
                ui.mode = .browse
                ui.selection = 0
            case .status(let next):
                banner = next.bannerText
            case .syncDue:
                startSync()
            case .synced(let run):
                syncing = nil
                ui.message = run.outcome == .ok ? nil : "Sync: \(run.error ?? run.outcome.rawValue)"
            case .message(let text):
                ui.message = text
            case .refresh:
                guard phase == .foreground else { continue }
            case .control(let line, let answer):
                do throws(ControlRequest.Unreadable) {
                    let request = try ControlRequest(line: line)
                    await handle(
                        request, answer: answer, ui: &ui, route: route, pendingLinks: &pendingLinks, moves: &moves,
                        sink: sink)
                } catch {
                    answer(ControlReply.refused(error.reason).line)
                }
            case .signal(SIGTSTP):
                // A session leader has no shell to resume it: suspending would only bounce back.
                guard getsid(0) != getpid() else {
                    ui.message = "Cannot suspend here (no job control); q quits."
                    break
                }
                await enterBackground(reason: "SIGTSTP", phase: &phase)
                terminal.leave()
                // Suspend for real: the default action, raised at ourselves; `fg` continues here.
                signals.suspend()
                terminal.enter()
                repaint()
                await enterForeground(phase: &phase)
            case .signal(SIGCONT), .signal(SIGWINCH):
                // Continued after a stop we did not ask for (SIGSTOP), or resized: repaint.
                repaint()
            case .signal(let other):
                log.info("Signal", metadata: ["signal": .int(Int(other))])
                status = other == SIGINT ? 130 : 0
                break loop
            }
            if route == .authenticated, !pendingLinks.isEmpty {
                for link in pendingLinks { _ = await open(link, ui: &ui) }
                pendingLinks = []
            }
            await draw()
        }

        // A clean exit: a pass running is let finish (cancelling it would record a failure), and
        // changes made since the last pass are sent (bounded by the network budget like any
        // pass); then the background hooks (persist, flush), then the terminal as it was.
        debounce?.cancel()
        if let running = syncing { await running.value }
        await moves?.value
        if writesSinceSync, phase == .foreground, route == .authenticated {
            let run = await env.sync.sync(full: false)
            await env.syncFinished(run)
            log.info(
                "Synced before exit", metadata: ["outcome": .string(run.outcome.rawValue), "pushed": .int(run.pushed)])
        }
        var ended = phase
        if ended == .foreground { await enterBackground(reason: "exit", phase: &ended) }
        for task in [input, routeTask, statusTask, timer, refresher, launchHooks] { task.cancel() }
        env.routing.stop()
        signals.stop()
        control?.stop()
        terminal.leave()
        log.info("App exited", metadata: ["frames": .int(frames)])
        return status
    }
}
