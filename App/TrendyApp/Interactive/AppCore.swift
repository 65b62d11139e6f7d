import Foundation
import TrendyModels
import TrendyRouting
import TrendySync

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The running app's state and every decision it makes, without I/O: ``AppRunner`` turns what
/// happens (a key, a signal, a route, a sync status, a control request, the answer of a use case
/// or a screen read) into an ``Input``, and carries out the ``Effect``s ``handle(_:)`` answers —
/// the only I/O. Tested like `RouteMachine`, input by input (`AppCoreTests`).
struct AppCore: Sendable {
    /// How a control request is answered: one line back on its connection.
    struct Reply: Sendable {
        let send: @Sendable (String) -> Void
    }

    /// Where a deep link leads, once the store was asked.
    enum LinkTarget: Sendable, Equatable {
        case tab(MainTab)
        /// The event at this position of the newest-first list.
        case event(index: Int)
        /// A new event of this type.
        case log(typeId: UUIDv7)
        /// Why it leads nowhere.
        case missing(String)
    }

    /// What a use case did: the line to show, and whether it wrote locally (a sync follows).
    struct Outcome: Sendable, Equatable {
        var message: String?
        var wrote = false
        /// Refused: a form it came from stays as typed.
        var failed = false
        /// What `u` would take back.
        var undo: AppUI.Undo?
        /// Where the events list should stand (a jump to a date): the event's place in it.
        var position: Int?
        /// The event the command named is gone (deleted here or by a pass meanwhile).
        var gone = false
    }

    /// What the core reacts to.
    enum Input: Sendable {
        case key(Key)
        case inputEnded
        /// A signal; `canSuspend`: the process has a shell to resume it (not a session leader).
        case signal(Int32, canSuspend: Bool)
        case route(AppRoute)
        case banner(String)
        case syncDue
        case synced(SyncRun)
        case message(String)
        /// Time to look at the store again (another process may have written).
        case refresh
        /// Time to look whether anything was queued to send (here or by another process).
        case watch
        /// The store's ``LocalStore/localChangeMark()`` now; `ours`: asked after a write of this app's.
        case marked(Int64, ours: Bool)
        /// A line on the control socket, and when it came (a link that waits for sign-in keeps it).
        case control(String, Reply, at: Date? = nil)
        /// A use case finished (``Effect/perform(_:)``); `route` is routing's route after it.
        case performed(AppUI.Command, Outcome, route: AppRoute)
        /// A link was looked up (``Effect/resolve(_:_:)``).
        case resolved(DeepLink, LinkTarget, Reply?)
        /// The screen's data was read (``Effect/read``).
        case read(AppViewData)
    }

    /// What the runner does, in order.
    enum Effect: Sendable {
        /// Run the use case behind a key; answer ``Input/performed(_:_:route:)``.
        case perform(AppUI.Command)
        /// Run a use case that waits on the server (signing in or up) while keys still work; it
        /// comes back as ``Input/performed(_:_:route:)``.
        case performInBackground(AppUI.Command)
        /// Give up the use case running in the background.
        case cancelBackground
        /// Start a sync pass; it answers ``Input/synced(_:)`` when done.
        case startSync
        /// A sync shortly, once, however many writes come meanwhile.
        case syncSoon
        /// A pass again after this long (the server was out: back-off, not the sync interval).
        case retrySync(after: Duration)
        /// Count the outbox (the banner follows) and read its change mark; answer
        /// ``Input/marked(_:ours:)``.
        case markLocalChanges(ours: Bool)
        /// Look a link up in the store; answer ``Input/resolved(_:_:_:)``.
        case resolve(DeepLink, Reply?)
        /// Tell routing a link was opened.
        case announce(DeepLink)
        /// Move the simulated device (after any move still running); its line goes back to `reply`
        /// and comes in as a ``Input/message(_:)``.
        case move(ControlRequest, Reply)
        case answer(ControlReply, Reply)
        /// Read the screen's data; answer ``Input/read(_:)``.
        case read
        /// Put this screen on the terminal.
        case paint(index: Int, route: AppRoute, screen: String, banner: String?, text: String)
        /// Forget what is on the terminal: the next paint draws everything.
        case repaint
        /// Background hooks, terminal restored, suspended; on `fg`, the terminal and foreground hooks.
        case suspend
        case log(String, [String: String])
        /// End the loop with this status.
        case exit(Int32)
    }

    var route: AppRoute
    var ui: AppUI
    var banner: String
    let plain: Bool
    /// Links that open once the person is signed in and onboarded.
    var pendingLinks: [DeepLink]
    /// When each waiting link came, by link, oldest first: a `trendy://log/<type>` link logs at
    /// the time it was sent (it logged at the sign-in, minutes later).
    var linkTimes: [String: [Date]] = [:]
    /// A pass is running.
    var syncing = false
    /// Local writes since the last pass started.
    var writesSinceSync = false
    /// The store's change mark when last looked at (nil: not yet).
    var seenMark: Int64?
    /// Signed in here a moment ago: links wait for the first pass's download (an event link
    /// used to resolve before it, to "No event").
    var awaitingFirstPass = false
    /// A use case waiting on the server (signing in or up): Esc gives it up, q quits; other keys
    /// wait (the form froze for 10 s with Esc and q ignored).
    var busy: AppUI.Command?
    /// The background use case given up on: its answer, when it comes, moves only the route.
    var abandoned: AppUI.Command?
    /// The wait before the next retry after a pass the server's absence cut short (2 s, doubling
    /// to a minute; back to 2 s after a pass that worked).
    var retryDelay: Duration = .seconds(2)
    /// What the keys are judged against: set by every read from what it showed.
    var context: AppUI.Context
    var frames = 0
    var lastText = ""
    /// What the screen last showed (a banner change is drawn from it).
    var lastData: AppViewData?
    /// A sign-in's line, to say on the screen routing moves to next.
    var arrivalMessage: String?
    /// The form and line the last frame showed (--plain announces a keystroke as its field only).
    var shownForm: AppUI.Form?
    var shownMessage: String?
    /// The event as shown when its note form opened: when a pass deletes it while the note is
    /// typed, `u` logs it again with the note (``afterward(_:_:)``) instead of the note being lost.
    var noted: Event?

    init(route: AppRoute, tab: MainTab, banner: String, plain: Bool, links: [DeepLink]) {
        self.route = route
        self.banner = banner
        self.plain = plain
        pendingLinks = links
        ui = AppUI()
        ui.tab = tab
        context = AppUI.Context(route: route, types: [], page: [], hasMore: false)
    }

    /// Whether changes made since the last pass are sent before the app exits.
    var syncsBeforeExit: Bool { writesSinceSync && route == .authenticated }

    /// Handles one input; answers what the runner must do. An input from outside that changed
    /// something ends with the pending links (once signed in) and a read of the screen
    /// (``thenRead(_:)``); the answers of the runner's own effects are handled where they came from.
    mutating func handle(_ input: Input) -> [Effect] {
        switch input {
        case .performed(let command, let outcome, let next):
            if let given = abandoned, given == command, busy == nil {
                // Given up on: only a route it moved after all is news.
                abandoned = nil
                return next != route ? thenRead(moved(to: next)) : []
            }
            if busy == command {
                // A background use case's answer comes on its own: the screen is read after it.
                busy = nil
                return thenRead(performed(command, outcome, route: next))
            }
            return performed(command, outcome, route: next)
        case .resolved(let link, let target, let reply): return resolved(link, target, reply)
        case .read(let data): return read(data)
        case .banner(let text):
            // Only the banner changed: drawn from the data last read, no store read. A pass
            // reports progress many times a second; reading the screen for each fell minutes
            // behind on a big account, with keys and SIGTERM queued after the reads.
            banner = text
            guard let data = lastData else { return [.read] }
            return render(data)
        case .key(let key):
            if busy != nil { return whileBusy(key) }
            let before = ui.mode
            let asked = ui.handle(key, context)
            rememberNoted(before: before)
            guard let command = asked else { return [] }
            if noteChangedMeanwhile(command, before: before) { return thenRead([]) }
            switch command {
            case .quit:
                // The exit lets a pass in progress end and sends what waits, bounded by the
                // network budget: against a hung server that is seconds with the screen as it was,
                // and `q` looked not taken (an outsider's finding). Said before the wait.
                guard syncing || syncsBeforeExit else { return [.exit(0)] }
                ui.message =
                    syncing ? "Quitting once the sync in progress ends…" : "Sending your changes, then quitting…"
                return thenRead([]) + [.exit(0)]
            case .signIn, .signUp, .changePassword:
                busy = command
                ui.message = "\(command.waiting)… (Esc cancels)"
                return thenRead([.performInBackground(command)])
            default: return thenRead([.perform(command)])
            }
        case .inputEnded:
            return [.log("Input ended", [:]), .exit(0)]
        case .signal(let signal, let canSuspend):
            return react(to: signal, canSuspend: canSuspend)
        case .route(let next):
            guard next != route else { return [] }
            ui.selection = 0
            return thenRead(moved(to: next))
        case .syncDue:
            return thenRead(startSync())
        case .synced(let run):
            syncing = false
            awaitingFirstPass = false
            // A pass the account change superseded says nothing (the screen moves on).
            if run.outcome == .ok || run.outcome == .superseded {
                // The pass's own line goes; what a key did stays ("Took back the log." went 0.5 s later).
                if ui.message == "Syncing…" || ui.message?.hasPrefix("Sync: ") == true { ui.message = nil }
            } else {
                ui.message = "Sync: \(run.error ?? run.outcome.rawValue)"
            }
            // Written while the pass ran (here or elsewhere): another pass shortly.
            if writesSinceSync && route == .authenticated { return thenRead([.syncSoon]) }
            return thenRead(retry(after: run))
        case .message(let text):
            ui.message = text
            return thenRead([])
        case .refresh:
            return thenRead([])
        case .watch:
            return [.markLocalChanges(ours: false)]
        case .marked(let mark, let ours):
            return marked(mark, ours: ours)
        case .control(let line, let reply, let at):
            return thenRead(control(line, reply, at: at))
        }
    }

    /// A key while a use case waits on the server: Esc gives it up (the form stays as typed), q
    /// quits, anything else waits.
    mutating func whileBusy(_ key: Key) -> [Effect] {
        switch key {
        case .escape:
            abandoned = busy
            busy = nil
            ui.message = "Cancelled: not signed in."
            keepFormForAnotherTry()
            return thenRead([.cancelBackground])
        case .char("q"): return [.cancelBackground, .exit(0)]
        default: return []
        }
    }

    /// `effects`, then the links waiting for sign-in and a read of the screen.
    mutating func thenRead(_ effects: [Effect]) -> [Effect] { effects + openPendingLinks() + [.read] }

    mutating func react(to signal: Int32, canSuspend: Bool) -> [Effect] {
        switch signal {
        case SIGTSTP:
            guard canSuspend else {
                ui.message = "Cannot suspend here (no job control); q quits."
                return thenRead([])
            }
            lastText = ""
            return thenRead([.suspend, .repaint])
        case SIGCONT, SIGWINCH:
            // Continued after a stop we did not ask for (SIGSTOP), or resized: repaint.
            lastText = ""
            return thenRead([.repaint])
        default:
            return [.log("Signal", ["signal": "\(signal)"]), .exit(signal == SIGINT ? 130 : 0)]
        }
    }

    /// Something was queued since the last look — by a key here, or by another process of the
    /// install (`trendy log`, an import, a visit, a conflict restored): it is shown and sent
    /// shortly, and before the app exits. Without a mark yet (the runner sets one at launch), a
    /// look only sets it.
    mutating func marked(_ mark: Int64, ours: Bool) -> [Effect] {
        defer { seenMark = max(seenMark ?? mark, mark) }
        guard !ours, let seen = seenMark, mark > seen, route == .authenticated else { return [] }
        writesSinceSync = true
        return thenRead(syncing ? [] : [.syncSoon])
    }

    /// A pass, unless one runs or nobody is signed in and onboarded.
    mutating func startSync() -> [Effect] {
        guard !syncing, route == .authenticated else { return [] }
        syncing = true
        writesSinceSync = false
        return [.startSync]
    }

    /// A use case finished: its line, a sync soon after a local write, a pass when asked, and a
    /// route it moved (the next key sees the new screen).
    mutating func performed(_ command: AppUI.Command, _ outcome: Outcome, route next: AppRoute) -> [Effect] {
        var effects: [Effect] = []
        if next != route { effects += moved(to: next) }
        if let message = outcome.message { ui.message = message }
        if command.signsIn, next == route {
            // Refused: the form stays. Accepted before routing moved: its line is said on arrival
            // (the route's move, just after, cleared it).
            if outcome.failed { keepFormForAnotherTry() } else { arrivalMessage = outcome.message }
        }
        afterward(command, outcome)
        if outcome.wrote {
            if command.deletesRow { ui.selection = max(0, ui.selection - 1) }
            writesSinceSync = true
            effects += [.syncSoon, .markLocalChanges(ours: true)]
        }
        if command == .syncNow { effects += startSync() }
        return effects
    }

    /// The route moved. Signed in and onboarded just now (here, or in another terminal): a pass
    /// at once — the dashboard used to say "Sync failed: not signed in" beside "No events yet"
    /// until the interval — and links wait for its download.
    mutating func moved(to next: AppRoute) -> [Effect] {
        let arrived = next == .authenticated && route != .authenticated
        route = next
        // Another screen: the last one's line and form go (a refusal stayed through the rest of
        // onboarding); a sign-in's own line is said there.
        ui.message = arrivalMessage
        arrivalMessage = nil
        // What `u` would take back belonged to the account and screen left (it was offered to the next account).
        ui.undo = nil
        ui.mode = .browse
        var effects: [Effect] = [.log("Route changed", ["to": next.description])]
        guard arrived else { return effects }
        // Signed in again after switching account: that account's dashboard, not the last one's tab.
        if ui.tab == .account { ui.tab = .dashboard }
        awaitingFirstPass = true
        // A pass that began before the sign-in downloads nothing: another one follows it.
        if syncing { writesSinceSync = true }
        effects += startSync()
        return effects
    }

    /// The screen's data came: the selection stays on its event when rows above it came or went;
    /// a last page that emptied shows the one before; the frame is painted when it changed.
    mutating func read(_ data: AppViewData) -> [Effect] {
        if let filter = ui.filter, ui.tab == .events, !data.types.contains(where: { $0.id == filter }) {
            // The filtered type was deleted (here or elsewhere): every event again.
            ui.filter = nil
            ui.page = 0
            ui.selection = 0
            ui.message = "That type is gone: showing every event."
            return [.read]
        }
        let selected = context.page.indices.contains(ui.selection) ? context.page[ui.selection] : nil
        if let selected, let row = data.page.firstIndex(where: { $0.id == selected }), row != ui.selection {
            ui.selection = row
        } else if ui.selection >= data.page.count, !data.page.isEmpty {
            ui.selection = data.page.count - 1
        } else if data.page.isEmpty, ui.page > 0, !data.hasMore, ui.tab == .events, route == .authenticated {
            // The last page emptied (its only event deleted): show the one before.
            ui.page -= 1
            return [.read]
        }
        let rows = data.rows(ui.tab)
        if ui.tab != .events, context.rows.indices.contains(ui.selection),
            let row = rows.firstIndex(of: context.rows[ui.selection]), row != ui.selection
        {
            // The selected type or place moved (renamed, or a row came or went above it): it stays selected.
            ui.selection = row
        } else if ui.tab != .events, ui.selection >= rows.count {
            // The selected type, place or conflict went (here or elsewhere): the last row.
            ui.selection = max(0, rows.count - 1)
        }
        context = AppUI.Context(
            route: route, types: data.types, page: data.page.map(\.id), hasMore: data.hasMore,
            notes: Dictionary(
                data.page.compactMap { e in e.notes.map { (e.id, $0) } }, uniquingKeysWith: { a, _ in a }),
            rows: data.rows(ui.tab), names: data.rowNames, counts: data.typeCounts, unsent: data.account.unsent,
            times: Dictionary(data.page.map { ($0.id, $0.timestamp) }, uniquingKeysWith: { a, _ in a }),
            hasEvents: data.onboarding.eventCount > 0, prefill: data.editFields,
            fields: Dictionary(grouping: data.definitions, by: \.eventTypeId).mapValues {
                $0.map { AppUI.LogField(key: $0.key, label: AppHelp.fieldLabel($0), fallback: $0.defaultValue?.text) }
            },
            eventTypes: Dictionary(data.page.map { ($0.id, $0.eventTypeId) }, uniquingKeysWith: { a, _ in a }),
            values: Dictionary(
                data.page.map { e in (e.id, e.properties.mapValues(\.text)) }, uniquingKeysWith: { a, _ in a }))
        lastData = data
        return render(data)
    }

    /// The frame for `data`, painted when its text changed.
    mutating func render(_ data: AppViewData) -> [Effect] {
        let (id, text) = AppScreens.render(ui, route: route, data: data, banner: banner, plain: plain)
        guard text != lastText else { return [] }
        lastText = text
        // A screen reader hears only the field typed into, not the whole screen per key (--plain).
        let said = plain ? typedInto() ?? text : text
        frames += 1
        return [
            .paint(
                index: frames, route: route, screen: id, banner: route == .authenticated ? banner : nil, text: said)
        ]
    }
}
