import Foundation
import Synchronization
import Testing
import TrendyModels
import TrendyRouting
import TrendySync

@testable import TrendyApp

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The running app's decisions, input by input, without a terminal, a store or a clock: what each
/// input changes and which effects it asks for, in order.
@Suite struct AppCoreTests {
    static let ids = UUIDv7Generator()
    static let coffee = EventType(id: ids.next(), name: "Coffee")

    /// The lines control replies sent.
    final class Replies: Sendable {
        let lines = Mutex<[String]>([])
        var reply: AppCore.Reply { AppCore.Reply { line in self.lines.withLock { $0.append(line) } } }
    }

    func core(_ route: AppRoute = .authenticated, links: [DeepLink] = []) -> AppCore {
        AppCore(route: route, tab: .dashboard, banner: "Synced", plain: true, links: links)
    }

    /// Each effect's name, and what it names (enough to tell effects apart in an expectation).
    func names(_ effects: [AppCore.Effect]) -> [String] {
        effects.map { effect in
            switch effect {
            case .perform(let command): "perform \(command)"
            case .performInBackground(let command): "background \(command)"
            case .cancelBackground: "cancel background"
            case .startSync: "startSync"
            case .syncSoon: "syncSoon"
            case .retrySync(let after): "retry in \(after)"
            case .markLocalChanges(let ours): ours ? "mark (ours)" : "mark"
            case .resolve(let link, let reply): "resolve \(link)\(reply == nil ? "" : " (reply)")"
            case .announce(let link): "announce \(link)"
            case .move: "move"
            case .answer(let reply, _): "answer \(reply.line)"
            case .read: "read"
            case .paint(let index, _, let screen, _, _): "paint \(index) \(screen)"
            case .repaint: "repaint"
            case .suspend: "suspend"
            case .log(let message, _): "log \(message)"
            case .exit(let status): "exit \(status)"
            }
        }
    }

    func run(_ outcome: SyncOutcome, error: String? = nil) -> SyncRun {
        SyncRun(startedAt: Date(), duration: 0, pushed: 0, pulled: 0, outcome: outcome, error: error)
    }

    @Test func aKeyRunsItsUseCaseAndAWriteSyncsSoonOnce() {
        var core = core()
        #expect(names(core.handle(.key(.char("s")))) == ["perform syncNow", "read"])
        let log = AppUI.Command.log(typeId: Self.coffee.id)
        let wrote = core.handle(
            .performed(log, AppCore.Outcome(message: "Logged Coffee.", wrote: true), route: .authenticated))
        #expect(names(wrote) == ["syncSoon", "mark (ours)"])
        #expect(core.writesSinceSync && core.ui.message == "Logged Coffee.")
        #expect(core.syncsBeforeExit, "a write not yet sent goes before exit")
        #expect(names(core.handle(.key(.char("x")))) == [], "a key that changes nothing reads nothing")
        // Quitting waits to send it: said before the wait, drawn, then the exit.
        #expect(names(core.handle(.key(.char("q")))) == ["read", "exit 0"])
        #expect(core.ui.message == "Sending your changes, then quitting…")
        var idle = self.core()
        #expect(names(idle.handle(.key(.char("q")))) == ["exit 0"], "nothing to wait for: no word")
        var syncing = self.core()
        _ = syncing.handle(.syncDue)
        #expect(names(syncing.handle(.key(.char("q")))) == ["read", "exit 0"])
        #expect(syncing.ui.message == "Quitting once the sync in progress ends…")
    }

    @Test func oneSyncAtATimeAndOnlyWhenSignedInAndOnboarded() {
        var core = core()
        #expect(names(core.handle(.syncDue)) == ["startSync", "read"])
        #expect(core.syncing && !core.writesSinceSync)
        #expect(names(core.handle(.syncDue)) == ["read"], "a pass runs: no second one")
        #expect(
            names(core.handle(.performed(.syncNow, AppCore.Outcome(), route: .authenticated))) == [],
            "s while a pass runs starts nothing")
        #expect(
            names(core.handle(.synced(run(.waiting, error: "the server did not answer"))))
                == ["retry in 2.0 seconds", "read"])
        #expect(!core.syncing && core.ui.message == "Sync: the server did not answer")
        #expect(names(core.handle(.synced(run(.ok)))) == ["read"])
        #expect(core.ui.message == nil)

        var login = self.core(.login)
        #expect(names(login.handle(.syncDue)) == ["read"], "nobody signed in: no pass")
        #expect(!login.syncsBeforeExit)
    }

    /// Signed in inside the app (issue 32, item 5): the stale failure goes, a pass starts at once
    /// (it used to wait for the interval, beside "No events yet"), and a pass already running when
    /// the person signed in is followed by another.
    @Test func signingInStartsAPassAtOnce() {
        var core = core(.login)
        core.ui.message = "Sync: not signed in"
        #expect(names(core.handle(.route(.authenticated))) == ["log Route changed", "startSync", "read"])
        #expect(core.ui.message == nil && core.syncing)
        var racing = self.core(.login)
        _ = racing.handle(.route(.onboarding(.welcome)))
        racing.syncing = true
        #expect(!names(racing.handle(.route(.authenticated))).contains("startSync"))
        #expect(names(racing.handle(.synced(run(.error, error: "not signed in")))) == ["syncSoon", "read"])
    }

    /// Signing in waits on the server while keys work (issue 32, item 6: the form froze for 10 s,
    /// Esc and q ignored): a word of progress, Esc gives up and keeps the form, q quits, and the
    /// answer of a sign-in given up on is ignored.
    @Test func signingInRunsInTheBackgroundAndEscGivesUp() {
        var core = core(.login)
        let signIn = AppUI.Command.signIn(email: "a@b.c", password: "password-1")
        core.ui.mode = .form(AppUI.Form(.signIn))
        for c in "a@b.c" { _ = core.handle(.key(.char(c))) }
        _ = core.handle(.key(.enter))
        for c in "password-1" { _ = core.handle(.key(.char(c))) }
        #expect(names(core.handle(.key(.enter))) == ["background \(signIn)", "read"])
        #expect(core.ui.message?.hasPrefix("Signing in…") == true)
        #expect(names(core.handle(.key(.char("x")))) == [], "other keys wait")
        #expect(names(core.handle(.key(.escape))) == ["cancel background", "read"])
        #expect(core.busy == nil && core.ui.message == "Cancelled: not signed in.")
        #expect(names(core.handle(.performed(signIn, AppCore.Outcome(message: "Signed in"), route: .login))) == [])
        #expect(core.ui.message == "Cancelled: not signed in.")
        guard case .form(let kept) = core.ui.mode else {
            Issue.record("the form is gone: \(core.ui.mode)")
            return
        }
        #expect(kept.values == ["a@b.c", ""] && kept.field == 1, "the email stays; the password to type again")
        var quitting = self.core(.login)
        quitting.busy = signIn
        #expect(names(quitting.handle(.key(.char("q")))) == ["cancel background", "exit 0"])
    }

    /// After an outage the app retries on its own, 2 s then doubling to a minute, and a pass that
    /// worked starts the back-off again (issue 32: it waited for the 60-second timer).
    @Test func aPassTheServerCutShortIsRetriedWithBackOff() {
        var core = core()
        var waits: [String] = []
        for outcome in [SyncOutcome.offline, .unavailable, .waiting, .offline, .offline, .offline, .offline] {
            _ = core.handle(.syncDue)
            waits += names(core.handle(.synced(run(outcome)))).filter { $0.hasPrefix("retry") }
        }
        #expect(waits == ["2", "4", "8", "16", "32", "60", "60"].map { "retry in \($0).0 seconds" })
        _ = core.handle(.syncDue)
        #expect(names(core.handle(.synced(run(.ok)))) == ["read"])
        _ = core.handle(.syncDue)
        #expect(names(core.handle(.synced(run(.offline)))) == ["retry in 2.0 seconds", "read"])
        _ = core.handle(.syncDue)
        #expect(names(core.handle(.synced(run(.error, error: "no")))) == ["read"], "an error waits for the person")
    }

    @Test func aLinkWaitsForSignInThenOpensOnce() {
        let replies = Replies()
        var core = core(.onboarding(.welcome))
        let link = DeepLink.tab(.calendar)
        let waiting = core.handle(.control("open \(link)", replies.reply))
        #expect(names(waiting).contains("answer waiting \(link) opens once you are signed in and onboarded"))
        #expect(core.pendingLinks == [link])
        // Signed in: a pass at once; the link waits for its download (an event it names may
        // only arrive with it).
        #expect(names(core.handle(.route(.authenticated))) == ["log Route changed", "startSync", "read"])
        #expect(core.pendingLinks == [link])
        #expect(names(core.handle(.synced(run(.ok)))) == ["resolve \(link)", "read"])
        #expect(core.pendingLinks.isEmpty)
        #expect(names(core.handle(.refresh)) == ["read"], "opened once")
        let opened = core.handle(.resolved(link, .tab(.calendar), nil))
        #expect(names(opened) == ["announce \(link)"])
        #expect(core.ui.tab == .calendar)
    }

    /// A `trendy://log/<type>` link sent while signed out logs at the time it was sent, not at the
    /// sign-in minutes later (issue 32).
    @Test func aLogLinkThatWaitedLogsAtTheTimeItWasSent() {
        let replies = Replies()
        var core = core(.login)
        let sent = ISO8601.parse("2026-11-26T08:00:00Z")!
        let link = DeepLink.log(typeName: "Coffee")
        _ = core.handle(.control("open \(link)", replies.reply, at: sent))
        _ = core.handle(.route(.authenticated))
        #expect(names(core.handle(.synced(run(.ok)))).contains("resolve \(link)"))
        let logged = core.handle(.resolved(link, .log(typeId: Self.coffee.id), nil))
        let command = AppUI.Command.logAt(typeId: Self.coffee.id, when: ISO8601.format(sent), note: nil)
        #expect(names(logged) == ["announce \(link)", "perform \(command)"])
        let now = core.handle(.resolved(link, .log(typeId: Self.coffee.id), nil))
        #expect(names(now) == ["announce \(link)", "perform \(AppUI.Command.log(typeId: Self.coffee.id))"], "once")
    }

    @Test func linksAnswerWhatTheyOpenedOrWhyNot() {
        let replies = Replies()
        var core = core()
        let event = Self.ids.next()
        #expect(
            names(core.handle(.control("open trendy://events/\(event)", replies.reply))).contains(
                "resolve trendy://events/\(event) (reply)"))
        let found = core.handle(.resolved(.event(event), .event(index: 23), replies.reply))
        #expect(names(found) == ["announce trendy://events/\(event)", "answer done opened trendy://events/\(event)"])
        #expect(core.ui.tab == .events && core.ui.page == 2 && core.ui.selection == 3 && core.ui.filter == nil)
        let missing = core.handle(.resolved(.log(typeName: "Tea"), .missing("No event type named Tea."), replies.reply))
        #expect(names(missing) == ["announce trendy://log/Tea", "answer refused No event type named Tea."])
        #expect(core.ui.message == "No event type named Tea.")
        let log = core.handle(.resolved(.log(typeName: "Coffee"), .log(typeId: Self.coffee.id), nil))
        #expect(names(log) == ["announce trendy://log/Coffee", "perform \(AppUI.Command.log(typeId: Self.coffee.id))"])
    }

    @Test func anUnreadableControlLineIsRefusedAndMovesGoToTheRunner() {
        let replies = Replies()
        var core = core()
        let refused = names(core.handle(.control("fly me to the moon", replies.reply)))
        #expect(refused.first?.hasPrefix("answer refused") == true)
        #expect(names(core.handle(.control("location now 52.52,13.405", replies.reply))) == ["move", "read"])
    }

    @Test func signalsSuspendRepaintOrEnd() {
        var core = core()
        #expect(names(core.handle(.signal(SIGTSTP, canSuspend: false))) == ["read"])
        #expect(core.ui.message == "Cannot suspend here (no job control); q quits.")
        #expect(names(core.handle(.signal(SIGTSTP, canSuspend: true))) == ["suspend", "repaint", "read"])
        #expect(names(core.handle(.signal(SIGWINCH, canSuspend: true))) == ["repaint", "read"])
        #expect(names(core.handle(.signal(SIGINT, canSuspend: true))) == ["log Signal", "exit 130"])
        #expect(names(core.handle(.signal(SIGTERM, canSuspend: true))) == ["log Signal", "exit 0"])
        #expect(names(core.handle(.inputEnded)) == ["log Input ended", "exit 0"])
    }

    @Test func theScreenIsPaintedWhenItChangesAndTheSelectionFollowsItsEvent() {
        var core = core()
        core.ui.tab = .events
        let events = (0..<3).map { i in
            Event(
                id: Self.ids.next(), eventTypeId: Self.coffee.id,
                timestamp: Date(timeIntervalSince1970: 1e9 + Double(i)))
        }
        var data = AppViewData()
        data.types = [Self.coffee]
        data.page = events
        #expect(names(core.read(data)) == ["paint 1 events"])
        #expect(names(core.read(data)) == [], "the same screen is not painted again")
        core.ui.selection = 1
        _ = core.read(data)
        // A new event above the selected one: the selection stays on its event.
        data.page = [Event(id: Self.ids.next(), eventTypeId: Self.coffee.id, timestamp: Date())] + events
        _ = core.read(data)
        #expect(core.ui.selection == 2 && core.context.page[2] == events[1].id)
        // Deleting moves the selection up; the last page emptied shows the one before.
        _ = core.handle(
            .performed(
                .delete(eventId: events[1].id), AppCore.Outcome(message: "Deleted.", wrote: true), route: .authenticated
            ))
        #expect(core.ui.selection == 1)
        core.ui.page = 1
        #expect(names(core.read(AppViewData())) == ["read"])
        #expect(core.ui.page == 0)
    }

    /// Another process queued a change (issue 32, item 2): the banner's counts are asked for
    /// every half second with the mark; a mark that moved without a write of the app's shows it
    /// and sends it soon, and before exit; the first mark and the app's own writes only set it.
    @Test func aChangeQueuedByAnotherProcessIsShownAndSentSoon() {
        var core = core()
        #expect(names(core.handle(.watch)) == ["mark"])
        #expect(names(core.handle(.marked(7, ours: false))) == [], "the first look sets the mark")
        #expect(names(core.handle(.marked(7, ours: false))) == [], "nothing new")
        #expect(!core.syncsBeforeExit)
        #expect(names(core.handle(.marked(8, ours: false))) == ["syncSoon", "read"])
        #expect(core.syncsBeforeExit, "what another terminal logged goes out before exit")
        #expect(names(core.handle(.marked(9, ours: true))) == [], "the app's own write already asked")
        // Written while a pass runs: no pass on top of it, one after it.
        _ = core.handle(.syncDue)
        #expect(core.syncing && !core.writesSinceSync)
        #expect(names(core.handle(.marked(10, ours: false))) == ["read"])
        #expect(names(core.handle(.synced(run(.ok)))) == ["syncSoon", "read"])
        // Signed out: nothing is sent.
        var out = self.core(.login)
        _ = out.handle(.marked(1, ours: false))
        #expect(names(out.handle(.marked(2, ours: false))) == [])
    }

    @Test func aUseCaseThatMovesTheRouteIsSeenByTheNextKey() {
        var core = core(.onboarding(.welcome))
        let effects = core.handle(.performed(.onboardingSkip, AppCore.Outcome(wrote: true), route: .authenticated))
        #expect(names(effects) == ["log Route changed", "startSync", "syncSoon", "mark (ours)"])
        #expect(core.route == .authenticated)
    }

    @Test func aBannerChangeIsDrawnFromTheLastReadWithoutReadingTheStore() {
        var core = core()
        #expect(names(core.handle(.banner("Syncing 1 of 9"))) == ["read"], "nothing read yet: read")
        var data = AppViewData()
        data.types = [Self.coffee]
        #expect(names(core.handle(.read(data))) == ["paint 1 dashboard"])
        #expect(names(core.handle(.banner("Syncing 2 of 9"))) == ["paint 2 dashboard"], "no store read")
        #expect(core.lastText.contains("Syncing 2 of 9"))
        #expect(names(core.handle(.banner("Syncing 2 of 9"))) == [], "the same banner paints nothing")
    }

    @Test func aFilterOfADeletedTypeGivesWayToEveryEvent() {
        var core = core()
        core.ui.tab = .events
        core.ui.filter = Self.ids.next()
        core.ui.page = 2
        var data = AppViewData()
        data.types = [Self.coffee]
        #expect(names(core.handle(.read(data))) == ["read"])
        #expect(core.ui.filter == nil && core.ui.page == 0)
        #expect(core.ui.message == "That type is gone: showing every event.")
    }
}
