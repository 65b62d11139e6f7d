import Foundation
import Testing
import TrendyAPI
import TrendyModels
import TrendyRouting
import TrendySync

@testable import TrendyApp

/// The later screens without a terminal (issue 32): logging with a note at another time, undo,
/// search, jumping to a day, the types, places and account tabs, conflicts in words, and times as
/// a person types them.
@Suite struct AppManageTests {
    static let ids = UUIDv7Generator()
    static let coffee = EventType(id: ids.next(), name: "Coffee")
    static let tea = EventType(id: ids.next(), name: "Tea")
    static let page = (0..<3).map { _ in ids.next() }

    func context(rows: [String] = [], unsent: Int = 0) -> AppUI.Context {
        AppUI.Context(
            route: .authenticated, types: [Self.coffee, Self.tea], page: Self.page, hasMore: false, rows: rows,
            names: [Self.coffee.id.description: "Coffee"], counts: [Self.coffee.id.description: 40], unsent: unsent)
    }

    /// `keys` typed one after the other; the last command.
    @discardableResult func type(_ keys: [Key], _ ui: inout AppUI, _ context: AppUI.Context) -> AppUI.Command? {
        var last: AppUI.Command?
        for key in keys { last = ui.handle(key, context) }
        return last
    }

    func chars(_ text: String) -> [Key] { text.map { .char($0) } }

    static let utc: Calendar = {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = TimeZone(identifier: "UTC")!
        return c
    }()

    @Test func timesAndDaysAsAPersonTypesThem() {
        let now = ISO8601.parse("2026-11-26T17:20:30Z")!
        func time(_ text: String) -> String? {
            WhenText.time(text, now: now, calendar: Self.utc).map { ISO8601.format($0) }
        }
        #expect(time("") == ISO8601.format(now) && time("now") == ISO8601.format(now))
        #expect(time("-2h") == "2026-11-26T15:20:30.000Z")
        #expect(time("30m ago") == "2026-11-26T16:50:30.000Z" && time("- 1d") == "2026-11-25T17:20:30.000Z")
        #expect(time("yesterday 18:00") == "2026-11-25T18:00:00.000Z")
        #expect(time("9:05") == "2026-11-26T09:05:00.000Z", "a time alone is today's")
        #expect(time("2026-11-20") == "2026-11-20T00:00:00.000Z")
        #expect(time("2026-11-20 09:00") == "2026-11-20T09:00:00.000Z")
        #expect(time("2026-11-20T09:00:00Z") == "2026-11-20T09:00:00.000Z")
        for bad in ["2026-02-30", "25:00", "9:5", "nyesterday", "tomorrow 8:00", "-2x", "2026-11-20 09:00 x"] {
            #expect(time(bad) == nil, "\(bad)")
        }
        #expect(
            WhenText.day("-7d", now: now, calendar: Self.utc).map { ISO8601.format($0) } == "2026-11-19T00:00:00.000Z")
        #expect(WhenText.typed(now, calendar: Self.utc) == "2026-11-26 17:20")
    }

    @Test func loggingWithANoteAtAnotherTimeKeepsTheFormUntilItIsAccepted() {
        var core = AppCore(route: .authenticated, tab: .events, banner: "", plain: true, links: [])
        core.context = context()
        _ = core.handle(.key(.char("L")))
        #expect(core.ui.mode == .pickType(.logWithDetails))
        _ = core.handle(.key(.char("1")))
        for key in chars("oat milk") + [.char("\t")] + chars("yesterday 8:15") { _ = core.handle(.key(key)) }
        let command = AppUI.Command.logAt(typeId: Self.coffee.id, when: "yesterday 8:15", note: "oat milk")
        #expect(core.handle(.key(.enter)).contains { if case .perform(command) = $0 { true } else { false } })
        let refused = AppCore.Outcome(message: "not a time", failed: true)
        _ = core.handle(.performed(command, refused, route: .authenticated))
        guard case .form(let form) = core.ui.mode else {
            Issue.record("a refused time keeps the form")
            return
        }
        #expect(form.values == ["oat milk", "yesterday 8:15"])
        let logged = AppUI.Undo.unlog(Event(id: Self.page[0], eventTypeId: Self.coffee.id, timestamp: Date()), mark: 1)
        _ = core.handle(
            .performed(command, AppCore.Outcome(message: "Logged", wrote: true, undo: logged), route: .authenticated))
        #expect(core.ui.mode == .browse && core.ui.undo == logged, "accepted: the form closes, u can take it back")
        #expect(core.ui.handle(.char("u"), core.context) == .undo(logged) && core.ui.undo == nil)
        #expect(core.ui.handle(.char("u"), core.context) == .redraw && core.ui.message == "Nothing to undo.")
    }

    /// The events list showing `event` first, and its note form just opened (`c`).
    func noteFormOpen(on event: Event) -> (AppCore, AppViewData) {
        var core = AppCore(route: .authenticated, tab: .events, banner: "", plain: true, links: [])
        core.context = context()
        var data = AppViewData()
        data.page = [event]
        core.lastData = data
        _ = core.handle(.key(.char("c")))
        return (core, data)
    }

    @Test func aNoteForAnEventDeletedMeanwhileIsKeptForU() {
        let shown = Event(id: Self.page[0], eventTypeId: Self.coffee.id, timestamp: Date(), notes: "was")
        var (core, data) = noteFormOpen(on: shown)
        #expect(core.noted == shown, "the event as shown when its note form opened")
        for key in chars("typed") { _ = core.handle(.key(key)) }
        let command = AppUI.Command.editNote(eventId: shown.id, note: "typed")
        #expect(core.handle(.key(.enter)).contains { if case .perform(command) = $0 { true } else { false } })
        let gone = AppCore.Outcome(message: "That event is gone.", failed: true, gone: true)
        _ = core.handle(.performed(command, gone, route: .authenticated))
        var again = shown
        again.notes = "typed"
        #expect(core.ui.undo == .relog(again), "u logs it again with the note")
        #expect(core.ui.message?.contains("u logs it again with your note") == true)
        // Cleared, or another event's: nothing to keep.
        core.ui.undo = nil
        _ = core.handle(.performed(.editNote(eventId: shown.id, note: nil), gone, route: .authenticated))
        _ = core.handle(.performed(.editNote(eventId: Self.page[1], note: "x"), gone, route: .authenticated))
        #expect(core.ui.undo == nil)
        // Reopened after the event changed: the event as shown now, not as it was; typing keeps
        // it even when the event has left the screen.
        var moved = shown
        moved.timestamp = shown.timestamp.addingTimeInterval(-3_600)
        data.page = [moved]
        core.lastData = data
        _ = core.handle(.key(.char("c")))
        #expect(core.noted == moved)
        core.lastData = AppViewData()
        _ = core.handle(.key(.char("x")))
        #expect(core.noted == moved)
    }

    /// An outsider's attack: the note form opened with "original", another device's note came in
    /// meanwhile (the list showed it), and Enter put the form's text over it everywhere, with no
    /// conflict. Now the form stays and says so; a second Enter saves over it knowingly.
    @Test func aNoteChangedElsewhereWhileTypedIsNotOverwrittenUnasked() {
        let shown = Event(id: Self.page[0], eventTypeId: Self.coffee.id, timestamp: Date(), notes: "original")
        var (core, data) = noteFormOpen(on: shown)
        for key in chars("mine") { _ = core.handle(.key(key)) }
        var theirs = shown
        theirs.notes = "their important edit"
        data.page = [theirs]
        core.lastData = data
        let command = AppUI.Command.editNote(eventId: shown.id, note: "mine")
        func performs(_ effects: [AppCore.Effect]) -> Bool {
            effects.contains { if case .perform(command) = $0 { true } else { false } }
        }
        #expect(!performs(core.handle(.key(.enter))), "not saved over theirs unasked")
        #expect(core.ui.message?.contains("“their important edit”") == true)
        guard case .form(let form) = core.ui.mode else {
            Issue.record("the form stays as typed")
            return
        }
        #expect(form.values == ["mine"])
        #expect(performs(core.handle(.key(.enter))), "asked: the second Enter saves")
        // Unchanged meanwhile: one Enter saves.
        _ = core.handle(.key(.char("c")))
        for key in chars("again") { _ = core.handle(.key(key)) }
        let again = AppUI.Command.editNote(eventId: shown.id, note: "again")
        #expect(core.handle(.key(.enter)).contains { if case .perform(again) = $0 { true } else { false } })
    }

    @Test func formsTakeCtrlUAndTabAndNoOtherControlKey() {
        var ui = AppUI()
        ui.tab = .events
        type([.char("c")], &ui, context())
        type(chars("abc") + [.char("\u{15}")] + chars("x") + [.char("\u{01}")], &ui, context())
        #expect(ui.mode == .form(AppUI.Form(.note(Self.page[0])).with(values: ["x"])))
        var sign = AppUI()
        #expect(type([.char("u")], &sign, AppUI.Context(route: .login, types: [], page: [], hasMore: false)) == .redraw)
        #expect(sign.mode == .form(AppUI.Form(.signUp)), "a new account from the sign-in screen")
        type(chars("a@b.c") + [.char("\t")], &sign, AppUI.Context(route: .login, types: [], page: [], hasMore: false))
        guard case .form(let form) = sign.mode else { return }
        #expect(form.field == 1 && form.values[0] == "a@b.c" && form.isSecret(1) && !form.isSecret(0))
    }

    @Test func aRefusedValueIsSaidInWords() {
        let error = ValidationError(
            entity: "Geofence",
            issues: [
                FieldIssue(field: "color", reason: "must be a colour like #3B82F6"),
                FieldIssue(field: "center.latitude", reason: "must be between -90 and 90 degrees"),
                FieldIssue(field: "entry_event_type_id", reason: "names no type"),
            ])
        #expect(
            AppHelp.refusal(error)
                == "Colour must be a colour like #3B82F6; Latitude must be between -90 and 90 degrees; "
                + "Entry event type names no type")
    }

    /// An outside tester typed 👩‍💻 into a note and got 👩💻: the zero-width joiner arrives as a
    /// key of its own and was dropped as a control character. Bidi controls still are.
    @Test func formsKeepAJoinerTypedBetweenEmoji() {
        var ui = AppUI()
        ui.tab = .events
        type([.char("c")], &ui, context())
        type(
            chars("a ") + [.char("👩"), .char("\u{200D}"), .char("💻"), .char("\u{202E}"), .char("\u{9B}")], &ui,
            context())
        guard case .form(let form) = ui.mode else {
            Issue.record("the note form stays open")
            return
        }
        #expect(Array(form.values[0].unicodeScalars) == Array("a 👩\u{200D}💻".unicodeScalars))
        #expect(form.values[0].count == 3, "one character: the joined emoji")
        #expect(AppUI.isText("\u{FE0F}") && !AppUI.isText("\u{1B}") && !AppUI.isText("\u{2067}"))
    }

    @Test func searchJumpAndTimeOnTheEventsList() {
        var core = AppCore(route: .authenticated, tab: .events, banner: "", plain: true, links: [])
        core.context = context()
        core.context.times = [Self.page[0]: ISO8601.parse("2026-11-20T09:05:00Z")!]
        core.ui.calendar = Self.utc
        core.ui.page = 2
        _ = core.handle(.key(.char("/")))
        for key in chars("sam") + [.enter] { _ = core.handle(.key(key)) }
        #expect(core.ui.query == "sam" && core.ui.page == 0 && core.ui.mode == .browse)
        _ = core.handle(.key(.escape))
        #expect(core.ui.query == nil, "Esc shows every event again")
        _ = core.handle(.key(.char("t")))
        #expect(core.ui.mode == .form(AppUI.Form(.time(Self.page[0])).with(values: ["2026-11-20 09:05"])))
        _ = core.handle(.key(.escape))
        _ = core.handle(.key(.char("g")))
        for key in chars("2026-11-01") { _ = core.handle(.key(key)) }
        _ = core.handle(.key(.enter))
        _ = core.handle(
            .performed(.jump("2026-11-01"), AppCore.Outcome(message: "From", position: 23), route: .authenticated))
        #expect(core.ui.page == 2 && core.ui.selection == 3 && core.ui.mode == .browse)
    }

    @Test func typesPlacesAndAccountAskBeforeTheyDelete() {
        var ui = AppUI()
        ui.tab = .types
        let types = context(rows: [Self.coffee.id.description, Self.tea.id.description])
        type([.char("d")], &ui, types)
        #expect(ui.mode == .confirm(.deleteType(Self.coffee.id), "Delete the type Coffee and its 40 events?"))
        #expect(type([.char("y")], &ui, types) == .deleteType(Self.coffee.id))
        var counting = types
        counting.counts = nil
        type([.char("d")], &ui, counting)
        #expect(
            ui.mode == .confirm(.deleteType(Self.coffee.id), "Delete the type Coffee and all its events?"),
            "not counted yet: never a question that hides the events")
        ui.mode = .browse
        type([.char("r")], &ui, types)
        #expect(ui.mode == .form(AppUI.Form(.renameType(Self.coffee.id)).with(values: ["Coffee", "", ""])))
        #expect(
            type([.escape, .char("j"), .enter], &ui, types) == .redraw && ui.tab == .events && ui.filter == Self.tea.id)

        var places = AppUI()
        places.tab = .places
        let place = Self.ids.next()
        type([.char("d")], &places, context(rows: [place.description]))
        #expect(type([.char("n")], &places, context(rows: [place.description])) == .redraw)
        #expect(places.message == "Nothing was changed.", "any key but y keeps it")

        var account = AppUI()
        account.tab = .account
        #expect(type([.char("j"), .char("r")], &account, context(rows: ["c1", "c2"])) == .restoreConflict("c2"))
        #expect(type([.char("x")], &account, context(rows: ["c1", "c2"])) == .dismissConflict("c2"))
        type([.char("o")], &account, context(unsent: 3))
        guard case .confirm(.signOut, let question) = account.mode else {
            Issue.record("signing out asks first")
            return
        }
        #expect(question.contains("3 change(s) not sent yet"))
        account.mode = .browse
        type([.char("p")] + chars("password-1") + [.enter] + chars("password-2") + [.enter], &account, context())
        #expect(account.message == "The two passwords differ.")
        #expect(type(chars("password-1") + [.enter], &account, context()) == .changePassword("password-1"))
    }

    @Test func switchingAccountOpensTheSignInFormAndPasswordsWaitInTheBackground() {
        var core = AppCore(route: .authenticated, tab: .account, banner: "", plain: true, links: [])
        _ = core.handle(.performed(.switchAccount, AppCore.Outcome(message: "Signed out."), route: .login))
        #expect(core.route == .login && core.ui.mode == .form(AppUI.Form(.signIn)))
        var busy = AppCore(route: .authenticated, tab: .account, banner: "", plain: true, links: [])
        busy.ui.mode = .form(AppUI.Form(.password).with(values: ["password-1", "password-1"], field: 1))
        let effects = busy.handle(.key(.enter))
        #expect(effects.contains { if case .performInBackground(.changePassword) = $0 { true } else { false } })
        #expect(busy.ui.message == "Changing the password… (Esc cancels)")
    }

    @Test func aConflictInWords() {
        var data = AppViewData()
        data.types = [Self.coffee, Self.tea]
        let event = Self.ids.next().description
        data.words = ConflictWords(
            typeNames: data.typeNames, subjects: [event: "Coffee, Thu 26 Nov 2026 17:24"], deviceId: "mine")
        let at = ISO8601.parse("2026-11-26T17:24:00Z")!
        let field = SyncConflict(
            id: "c1", kind: .field, entityType: .event, entityId: event, field: "event_type_id",
            keptValue: "\"\(Self.tea.id)\"", lostValue: "\"\(Self.coffee.id)\"", keptBy: "mine", keptAt: at,
            lostBy: "9f8e7d6c5b4a39281706f5e4d3c2b1a0", lostAt: at, detectedAt: at)
        let words = AppTabs.conflict(field, data, TimeZone(identifier: "UTC")!)
        #expect(words[0] == "Coffee, Thu 26 Nov 2026 17:24: its type")
        #expect(words[1] == "kept: Tea (this device, Thu 26 Nov 2026 17:24)")
        #expect(words[2] == "lost: Coffee (another device, Thu 26 Nov 2026 17:24)", "no hex device id, no JSON")
        var deleted = field
        deleted.kind = .deleted
        deleted.lostValue = #"{"notes":"oat milk","timestamp":"2026-11-26T08:00:00Z"}"#
        let gone = AppTabs.conflict(deleted, data, TimeZone(identifier: "UTC")!)
        #expect(
            gone[1] == "lost edits: note “oat milk”, time Thu 26 Nov 2026 08:00 (another device, Thu 26 Nov 2026 17:24)"
        )
        // Gone from this device: named by the last content the conflict keeps, not "An event".
        var elsewhere = deleted
        elsewhere.entityId = Self.ids.next().description
        elsewhere.entity =
            #"{"id":"\#(elsewhere.entityId)","event_type_id":"\#(Self.tea.id)","#
            + #""timestamp":"2026-11-25T07:30:00Z","is_all_day":false,"source_type":"manual"}"#
        let named = AppTabs.conflict(elsewhere, data, TimeZone(identifier: "UTC")!)[0]
        #expect(named.hasPrefix("Tea, Wed 25 Nov 2026 07:30: deleted"), "\(named)")
        elsewhere.entity = nil
        #expect(AppTabs.conflict(elsewhere, data, TimeZone(identifier: "UTC")!)[0].hasPrefix("An event: deleted"))
    }

    /// Issue 32: with --plain, a keystroke in a form is announced as its field alone — a password
    /// as a count — not as the whole screen read again.
    @Test func aScreenReaderHearsOnlyTheFieldTypedInto() {
        var core = AppCore(route: .login, tab: .dashboard, banner: "", plain: true, links: [])
        func said(_ key: Key) -> String? {
            _ = core.handle(.key(key))
            for effect in core.handle(.read(AppViewData())) {
                if case .paint(_, _, _, _, let text) = effect { return text }
            }
            return nil
        }
        _ = core.handle(.read(AppViewData()))
        #expect(said(.enter)?.contains("Sign in") == true, "a new form: the whole screen")
        #expect(said(.char("a")) == "Email: a")
        #expect(said(.enter)?.contains("Password") == true, "another field: the whole screen")
        #expect(said(.char("x")) == "Password: 1 character")
        #expect(said(.char("y")) == "Password: 2 characters", "never the password itself")
        #expect(said(.backspace) == "Password: 1 character")
    }

    /// Outside attack: at 50 columns a question lost its "y: yes" and tabs 6 and 7; at 30×10 the
    /// selected row and "Delete …? y" were hidden, so y deleted what could not be seen.
    @Test func aSmallWindowWrapsLongLinesAndKeepsTheCursorAndTheQuestion() {
        let question = "│ Sign out? 3 change(s) not sent yet stay here and go out when you sign in again. y: yes"
        let wrapped = Terminal.wrapping(question, columns: 50)
        #expect(wrapped.count == 2 && wrapped.allSatisfy { Terminal.fitting($0, columns: 50) == $0 })
        #expect(wrapped.joined(separator: " ").replacingOccurrences(of: "│     ", with: "").contains("again. y: yes"))
        #expect(wrapped[1].hasPrefix("│     "), "inside the frame, indented")
        #expect(Terminal.wrapping("└" + String(repeating: "─", count: 80), columns: 50).count == 1, "a rule is cut")
        #expect(Terminal.wrapping("│ 日本語日本語日本語日本語", columns: 12).allSatisfy { Terminal.fitting($0, columns: 12) == $0 })
        let frame =
            ["┌ tabs", "│ banner", ""] + (1...10).map { $0 == 8 ? "│ › row \($0)" : "│   row \($0)" }
            + ["│", "│ Delete the selected event? y: yes · any other key: no", "│", "│ Keys: a", "└──"]
        let fitted = Terminal.fit(frame, rows: 8, columns: 80)
        #expect(fitted.count == 8)
        #expect(fitted.contains("│ › row 8") && fitted.contains { $0.contains("y: yes") }, "\(fitted)")
        #expect(fitted.first == "┌ tabs" && fitted.suffix(2) == ["│ Keys: a", "└──"])
        #expect(fitted[1].contains("more line(s)"), "what is left out is said, above what is shown")
        let keys = Terminal.flowKeys(
            ["│ Keys: j/k select · Enter details · c note", "│       d delete · q quit"], columns: 30)
        #expect(keys.allSatisfy { Terminal.fitting($0, columns: 30) == $0 } && keys.last?.hasSuffix("q quit") == true)
        #expect(keys.first == "│ Keys: j/k select", "\(keys)")
    }

    /// Issue 32's words: no ⟳ beside a banner that says nothing syncs; permissions in words.
    @Test func theBannerAndPermissionsInWords() {
        #expect(Screen.bannerLine("Up to date · last synced 09:05", plain: false) == "⟳ Up to date · last synced 09:05")
        #expect(Screen.bannerLine("Syncing 2 of 5", plain: false).hasPrefix("⟳"))
        for trouble in [
            "Offline — 2 pending", "Server trouble (503); retrying soon", "Sync failed: x",
            "3 change(s) could not sync",
        ] {
            #expect(Screen.bannerLine(trouble, plain: false).hasPrefix("⚠"), "\(trouble)")
        }
        #expect(Screen.bannerLine("Offline", plain: true) == "Sync: Offline")
        #expect(ScreenCopy.words(.notRequested) == "not asked yet" && ScreenCopy.words(.granted) == "allowed")
    }

    /// Second outside attack: a line outlived its action under the next picker.
    @Test func aNewPickerStartsClean() {
        var core = AppCore(route: .authenticated, tab: .events, banner: "", plain: true, links: [])
        core.context = context()
        core.ui.message = "The time is as it was."
        _ = core.handle(.key(.char("l")))
        #expect(core.ui.mode == .pickType(.log) && core.ui.message == nil)
    }

    @Test func theHelpScreenFitsEightyColumns() {
        for line in AppHelp.lines { #expect(line.count <= 76, "\(line)") }
    }
}

extension AppUI.Form {
    /// This form with `values` typed and the cursor on `field`.
    func with(values: [String], field: Int = 0) -> AppUI.Form {
        var form = self
        form.values = values
        form.field = field
        return form
    }
}
