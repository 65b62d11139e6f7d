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
                let (verb, rest) = Self.split(line)
                switch verb {
                case "open":
                    guard let link = DeepLink(rest) else {
                        answer("error: not a Trendy link: \(rest)")
                        continue
                    }
                    log.info("Deep link received", metadata: ["link": .string(link.description)])
                    if route == .authenticated {
                        let failure = await open(link, ui: &ui)
                        answer(failure.map { "error: \($0)" } ?? "opened \(link)")
                    } else {
                        pendingLinks.append(link)
                        answer("waiting: \(link) opens once you are signed in and onboarded")
                    }
                case "location", "replay":
                    // One move at a time, in the order they came: each reports its own crossings.
                    let env = env
                    let previous = moves
                    moves = Task {
                        await previous?.value
                        let result = await Self.move(env, verb: verb, arguments: rest)
                        answer(result)
                        sink.yield(.message(result))
                    }
                default: answer("error: unknown request \(verb)")
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

    /// The verb of a control line and the rest.
    static func split(_ line: String) -> (String, String) {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard let space = trimmed.firstIndex(of: " ") else { return (trimmed, "") }
        return (
            String(trimmed[..<space]),
            String(trimmed[trimmed.index(after: space)...]).trimmingCharacters(in: .whitespaces)
        )
    }

    /// Opens `link`: a tab, an event on its page, or a new event of a type; why not, if it could not.
    func open(_ link: DeepLink, ui: inout AppUI) async -> String? {
        env.routing.send(.deepLink(link.description))
        ui.mode = .browse
        switch link {
        case .tab(let tab):
            ui.tab = tab
            ui.selection = 0
            return nil
        case .event(let id):
            let newest = (try? await env.store.events(limit: 1_000_000, since: nil).map(\.value.id)) ?? []
            guard let index = newest.firstIndex(of: id) else {
                ui.message = "No event \(id) on this device."
                return ui.message
            }
            ui.tab = .events
            ui.filter = nil
            ui.page = index / AppUI.pageSize
            ui.selection = index % AppUI.pageSize
            return nil
        case .log(let name):
            guard let type = try? await env.store.eventType(named: name)?.value else {
                ui.message = "No event type named \(name)."
                return ui.message
            }
            _ = await perform(.log(typeId: type.id), ui: &ui, route: .authenticated, sink: nil)
        }
        return nil
    }

    /// Moves the simulated device for a `trendy location set|replay` another process handed over
    /// (`location <lat> <lon> [<time>]`, `replay <file.gpx> <speed|max>`); one line of what happened.
    static func move(_ env: AppEnvironment, verb: String, arguments: String) async -> String {
        do {
            let words = arguments.split(separator: " ").map(String.init)
            let fixes: [LocationFix]
            var speed: Double?
            if verb == "location" {
                guard words.count >= 2 else { return "error: location needs a latitude and a longitude" }
                let point = try parseCoordinate(Array(words.prefix(2)))
                let time = try parseTime(words.count > 2 ? words[2] : nil, now: env.now())
                fixes = [LocationFix(point, time: time)]
            } else {
                guard let path = words.first, let data = FileManager.default.contents(atPath: path) else {
                    return "error: cannot read \(words.first ?? "the track")"
                }
                fixes = try GPXTrack.parse([UInt8](data))
                speed = words.count > 1 ? Double(words[1]) : nil
            }
            let summary = try await moveDevice(env, fixes: fixes, speed: speed)
            await env.sync.localWriteHappened()
            return summary.line
        } catch let error as CLIError {
            return "error: \(error.message)"
        } catch {
            return "error: \(error)"
        }
    }

    func enterBackground(reason: String, phase: inout Phase) async {
        log.info("Scene phase", metadata: ["phase": "background", "reason": .string(reason)])
        phase = .background
        for module in env.modules.reversed() { await module.didEnterBackground() }
        env.logs.flush()
    }

    func enterForeground(phase: inout Phase) async {
        phase = .foreground
        log.info("Scene phase", metadata: ["phase": "foreground"])
        for module in env.modules { await module.willEnterForeground() }
    }

    /// Does what a key asked; returns whether it wrote locally (a sync should follow).
    func perform(_ command: AppUI.Command, ui: inout AppUI, route: AppRoute, sink: AsyncStream<Input>.Continuation?)
        async -> Bool
    {
        do {
            switch command {
            case .quit, .redraw, .syncNow: return false
            case .log(let typeId):
                try await env.store.createEvent(Event(id: env.ids.next(), eventTypeId: typeId, timestamp: env.now()))
                ui.message = "Logged \(try await env.store.eventType(id: typeId)?.value.name ?? "an event")."
                await env.sync.localWriteHappened()
                return true
            case .delete(let id):
                try await env.store.deleteEvent(id: id)
                ui.message = "Deleted."
                ui.selection = max(0, ui.selection - 1)
                return true
            case .retype(let id, let typeId):
                guard var event = try await env.store.event(id: id)?.value else { return false }
                event.eventTypeId = typeId
                try await env.store.updateEvent(event)
                ui.message = "Moved."
                return true
            case .editNote(let id, let note):
                guard var event = try await env.store.event(id: id)?.value else { return false }
                event.notes = note
                try await env.store.updateEvent(event)
                ui.message = note == nil ? "Note cleared." : "Note saved."
                return true
            case .signIn(let email, let password), .signUp(let email, let password):
                let session: AuthSession
                do throws(AuthError) {
                    if case .signUp = command {
                        session = try await env.auth.signUp(email: email, password: password)
                    } else {
                        session = try await env.auth.signIn(email: email, password: password)
                    }
                } catch {
                    ui.message = error.description
                    return false
                }
                try await claimLocalData(env, for: session)
                ui.message = "Signed in as \(session.user.email)."
                return false
            case .onboardingNext, .onboardingBack, .onboardingSkip, .firstType, .firstEvent, .permissions:
                try await onboarding(command)
                return command != .onboardingBack
            }
        } catch let error as CLIError {
            ui.message = error.message
        } catch let error as LocalStoreError {
            ui.message = error.description
        } catch {
            ui.message = String(describing: error)
        }
        return false
    }

    /// Runs one onboarding step and tells routing where the person now stands.
    func onboarding(_ command: AppUI.Command) async throws {
        let steps = try env.onboardingSteps()
        let position: OnboardingPosition
        let none = CLIPermissionPrompter(answers: [:], interactive: false)
        switch command {
        case .onboardingBack: position = try await steps.backStep()
        case .onboardingSkip: position = try await steps.skipStep()
        case .firstType(let name): position = try await steps.nextStep(typeName: name, logType: nil, prompter: none)
        case .firstEvent(let type): position = try await steps.nextStep(typeName: nil, logType: type, prompter: none)
        case .permissions(let allow):
            let answer: PermissionAnswer = allow ? .allow : .skip
            let person = CLIPermissionPrompter(
                answers: Dictionary(uniqueKeysWithValues: PermissionKind.allCases.map { ($0, answer) }),
                interactive: false)
            position = try await steps.nextStep(typeName: nil, logType: nil, prompter: env.permissionPrompter(person))
        default: position = try await steps.nextStep(typeName: nil, logType: nil, prompter: none)
        }
        switch position {
        case .completed: env.routing.send(.onboardingCompleted)
        case .step(_, let step), .signedOut(let step): env.routing.send(.onboardingStepChanged(step))
        }
    }

    /// Reads what the current screen shows from the local store.
    func viewData(route: AppRoute, ui: AppUI) async -> AppViewData {
        var data = AppViewData()
        let store = env.store
        do {
            data.types = try await store.eventTypes().map(\.value).sorted {
                $0.name.localizedCaseInsensitiveCompare($1.name) == .orderedAscending
            }
            switch route {
            case .onboarding:
                data.onboarding = try await AppShell.onboardingFacts(env)
            case .authenticated:
                try await mainData(&data, ui)
            case .loading, .login, .error: break
            }
        } catch {
            log.debug("Screen read failed", metadata: ["error": .string(String(describing: error))])
        }
        return data
    }

    func mainData(_ data: inout AppViewData, _ ui: AppUI) async throws {
        let store = env.store
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        calendar.firstWeekday = 2
        let now = env.now()
        let midnight = calendar.startOfDay(for: now)
        data.today = try await store.eventCount(since: midnight)
        switch ui.tab {
        case .dashboard:
            data.recent = try await store.events(limit: 5, since: nil).map(\.value)
        case .events:
            // Newest first; a filtered page reads ahead until it has a page (or the store ends).
            let wanted = (ui.page + 1) * AppUI.pageSize + 1
            var limit = wanted
            var matching: [Event] = []
            while true {
                let batch = try await store.events(limit: limit, since: nil).map(\.value)
                matching = ui.filter.map { f in batch.filter { $0.eventTypeId == f } } ?? batch
                if matching.count >= wanted || batch.count < limit || limit >= 1_000_000 { break }
                limit *= 4
            }
            let first = ui.page * AppUI.pageSize
            data.page = Array(matching.dropFirst(first).prefix(AppUI.pageSize))
            data.hasMore = matching.count > first + AppUI.pageSize
        case .calendar:
            let thisMonth = calendar.dateInterval(of: .month, for: now)?.start ?? midnight
            let month = calendar.date(byAdding: .month, value: -ui.monthOffset, to: thisMonth) ?? thisMonth
            data.month = month
            // Per day: two index-range counts, however many events the account has.
            let range = calendar.range(of: .day, in: .month, for: month) ?? 1..<29
            var counts: [Int] = []
            for day in range.lowerBound...range.upperBound {
                let date = calendar.date(byAdding: .day, value: day - 1, to: month) ?? month
                counts.append(try await store.eventCount(since: date))
            }
            for (i, day) in range.enumerated() where counts[i] - counts[i + 1] > 0 {
                data.days[day] = counts[i] - counts[i + 1]
            }
        case .analytics:
            let thisWeek = calendar.dateInterval(of: .weekOfYear, for: now)?.start ?? midnight
            let weeks = (0..<8).reversed().compactMap { calendar.date(byAdding: .weekOfYear, value: -$0, to: thisWeek) }
            data.weeks = weeks
            let names = data.typeNames
            var perType: [String: [Int]] = [:]
            for event in try await store.events(limit: 1_000_000, since: weeks.first).map(\.value) {
                guard let week = weeks.lastIndex(where: { $0 <= event.timestamp }) else { continue }
                perType[names[event.eventTypeId] ?? "?", default: Array(repeating: 0, count: weeks.count)][week] += 1
            }
            data.perWeek = perType.sorted { a, b in
                let (x, y) = (a.value.reduce(0, +), b.value.reduce(0, +))
                return x != y ? x > y : a.key < b.key
            }.map { (name: $0.key, counts: $0.value) }
        }
    }
}

/// Signals delivered as events instead of their default actions, while the app runs: a
/// `sigaction` handler writes the signal's number to a pipe (all it may do), a thread reads the
/// pipe and calls `handler`. The pipe's write end is the one process-wide value here — a signal
/// handler has nowhere else to find it — and only one watcher runs at a time.
final class SignalWatcher: Sendable {
    let signals: [Int32]
    let pipeFDs: (read: Int32, write: Int32)

    nonisolated(unsafe) static var writeFD: Int32 = -1

    init(_ signals: [Int32], _ handler: @escaping @Sendable (Int32) -> Void) {
        var fds: [Int32] = [-1, -1]
        _ = pipe(&fds)
        pipeFDs = (fds[0], fds[1])
        self.signals = signals
        Self.writeFD = fds[1]
        for sig in signals { Self.install(sig) }
        let readFD = fds[0]
        Thread.detachNewThread {
            var byte: UInt8 = 0
            while true {
                let n = read(readFD, &byte, 1)
                if n < 0, errno == EINTR { continue }
                guard n == 1 else { break }
                handler(Int32(byte))
            }
            close(readFD)
        }
    }

    /// Routes `sig` to the pipe.
    static func install(_ sig: Int32) {
        var action = sigaction()
        let toPipe: @convention(c) (Int32) -> Void = { sig in
            var byte = UInt8(truncatingIfNeeded: sig)
            _ = write(SignalWatcher.writeFD, &byte, 1)
        }
        #if os(Linux)
            action.__sigaction_handler.sa_handler = toPipe
        #else
            action.__sigaction_u.__sa_handler = toPipe
        #endif
        action.sa_flags = SA_RESTART
        sigemptyset(&action.sa_mask)
        sigaction(sig, &action, nil)
    }

    /// Suspends the process as SIGTSTP's default action would; returns when it is continued,
    /// with SIGTSTP routed to the pipe again.
    func suspend() {
        signal(SIGTSTP, SIG_DFL)
        kill(getpid(), SIGTSTP)
        Self.install(SIGTSTP)
    }

    /// Stops watching and gives the signals their default actions back.
    func stop() {
        for sig in signals { signal(sig, SIG_DFL) }
        close(pipeFDs.write)
    }
}
