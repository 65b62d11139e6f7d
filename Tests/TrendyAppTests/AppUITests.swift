import Foundation
import Testing
import TrendyModels
import TrendyRouting

@testable import TrendyApp

/// Every key path of the running app's state, without a terminal.
@Suite struct AppUITests {
    static let ids = UUIDv7Generator()
    static let coffee = EventType(id: ids.next(), name: "Coffee")
    static let tea = EventType(id: ids.next(), name: "Tea")
    static let page = (0..<3).map { _ in ids.next() }

    func context(_ route: AppRoute = .authenticated, hasMore: Bool = true) -> AppUI.Context {
        AppUI.Context(route: route, types: [Self.coffee, Self.tea], page: Self.page, hasMore: hasMore)
    }

    @Test func tabsQuitAndSync() {
        var ui = AppUI()
        #expect(ui.handle(.char("3"), context()) == .redraw && ui.tab == .calendar)
        #expect(ui.handle(.char("\t"), context()) == .redraw && ui.tab == .analytics)
        #expect(ui.handle(.char("\t"), context()) == .redraw && ui.tab == .types)
        #expect(ui.handle(.char("7"), context()) == .redraw && ui.tab == .account)
        #expect(ui.handle(.char("\t"), context()) == .redraw && ui.tab == .dashboard)
        #expect(ui.handle(.char("s"), context()) == .syncNow)
        #expect(ui.handle(.char("q"), context()) == .quit)
        #expect(ui.handle(.char("x"), context()) == nil, "an unknown key changes nothing")
    }

    @Test func loggingPicksATypeByNumberOrSelection() {
        var ui = AppUI()
        #expect(ui.handle(.char("l"), context()) == .redraw && ui.mode == .pickType(.log))
        #expect(ui.handle(.char("2"), context()) == .log(typeId: Self.tea.id) && ui.mode == .browse)
        _ = ui.handle(.char("l"), context())
        _ = ui.handle(.down, context())
        _ = ui.handle(.down, context())
        #expect(ui.pick == 1, "the selection stops at the last type")
        _ = ui.handle(.up, context())
        #expect(ui.handle(.enter, context()) == .log(typeId: Self.coffee.id))
        _ = ui.handle(.char("l"), context())
        #expect(ui.handle(.char("9"), context()) == nil, "no ninth type")
        #expect(ui.handle(.escape, context()) == .redraw && ui.mode == .browse)
        var empty = AppUI()
        let none = AppUI.Context(route: .authenticated, types: [], page: [], hasMore: false)
        #expect(empty.handle(.char("l"), none) == .redraw && empty.mode == .browse && empty.message != nil)
    }

    /// An outside tester: "Delete the selected event?" did not say which (from the details, or
    /// after the list moved under a sync). The question names the event by its type and time.
    @Test func theDeleteQuestionNamesTheEvent() {
        let at = Date(timeIntervalSince1970: 1_795_000_000)
        var named = context()
        named.eventTypes = [Self.page[0]: Self.coffee.id]
        named.times = [Self.page[0]: at]
        var ui = AppUI()
        _ = ui.handle(.char("2"), named)
        _ = ui.handle(.char("d"), named)
        #expect(ui.mode == .confirm(.delete(eventId: Self.page[0]), "Delete Coffee, \(AppHelp.when(at, .current))?"))
    }

    /// An outside tester: the details showed a property's key ("shots"), not its label, in key
    /// order. By label in the type's order now; a value whose property is gone keeps its key.
    @Test func theDetailsShowPropertiesByLabelInTheTypesOrder() {
        var data = AppViewData()
        data.types = [Self.coffee]
        data.definitions = [
            PropertyDefinition(
                id: Self.ids.next(), eventTypeId: Self.coffee.id, key: "size", label: "Cup size", propertyType: .text),
            PropertyDefinition(
                id: Self.ids.next(), eventTypeId: Self.coffee.id, key: "shots", label: "Espresso shots",
                propertyType: .number, displayOrder: 1),
        ]
        let event = Event(
            id: Self.page[0], eventTypeId: Self.coffee.id, timestamp: Date(),
            properties: ["shots": .number(2), "size": .text("large"), "old": .text("kept")])
        let lines = AppHelp.detail(event, data, .current)
        let properties = Array(lines.drop { $0 != "Properties:" }.dropFirst())
        #expect(properties == ["  Cup size: large", "  Espresso shots: 2", "  old: kept"])
    }

    @Test func theEventsPageSelectsPagesFiltersEditsAndDeletesWithConfirmation() {
        var ui = AppUI()
        _ = ui.handle(.char("2"), context())
        #expect(ui.handle(.char("k"), context()) == nil, "already at the top")
        _ = ui.handle(.char("j"), context())
        _ = ui.handle(.char("j"), context())
        #expect(ui.handle(.char("j"), context()) == nil && ui.selection == 2, "stops at the last row")
        #expect(ui.handle(.char("n"), context()) == .redraw && ui.page == 1 && ui.selection == 0)
        #expect(ui.handle(.char("n"), context(hasMore: false)) == nil, "no page after the last")
        _ = ui.handle(.char("p"), context())
        #expect(ui.handle(.char("p"), context()) == nil && ui.page == 0)
        _ = ui.handle(.char("f"), context())
        #expect(ui.filter == Self.coffee.id)
        _ = ui.handle(.char("f"), context())
        #expect(ui.filter == Self.tea.id)
        _ = ui.handle(.char("f"), context())
        #expect(ui.filter == nil, "then all types again")
        _ = ui.handle(.char("d"), context())
        #expect(ui.mode == .confirm(.delete(eventId: Self.page[0]), "Delete the selected event?"))
        #expect(ui.handle(.char("n"), context()) == .redraw && ui.mode == .browse, "anything but y keeps it")
        _ = ui.handle(.char("d"), context())
        #expect(ui.handle(.char("y"), context()) == .delete(eventId: Self.page[0]))
        _ = ui.handle(.char("e"), context())
        #expect(ui.handle(.char("2"), context()) == .retype(eventId: Self.page[0], typeId: Self.tea.id))
        _ = ui.handle(.char("c"), context())
        for c in "flat white" { _ = ui.handle(.char(c), context()) }
        #expect(ui.handle(.enter, context()) == .editNote(eventId: Self.page[0], note: "flat white"))
        _ = ui.handle(.char("c"), context())
        #expect(ui.handle(.enter, context()) == .editNote(eventId: Self.page[0], note: nil), "empty clears")
    }

    /// With ten types or more a typed number waits for its second digit (issue 32, item 11: "1"
    /// then "0" logged type 1 at once); Enter takes the one typed; a number with no type logs
    /// nothing (outside tester: "1" "4" of 13 logged type 4); with fewer, a digit chooses.
    @Test func aPickerOfThirteenTypesTakesTwoDigits() {
        let types = (1...13).map { EventType(id: UUIDv7Generator().next(), name: "T\($0)") }
        let many = AppUI.Context(route: .authenticated, types: types, page: [], hasMore: false)
        var ui = AppUI()
        _ = ui.handle(.char("l"), many)
        #expect(ui.handle(.char("1"), many) == .redraw, "1 could be 10-13")
        #expect(ui.handle(.char("0"), many) == .log(typeId: types[9].id))
        _ = ui.handle(.char("l"), many)
        _ = ui.handle(.char("1"), many)
        #expect(ui.handle(.enter, many) == .log(typeId: types[0].id), "Enter takes 1")
        _ = ui.handle(.char("l"), many)
        #expect(ui.handle(.char("2"), many) == .log(typeId: types[1].id), "no 20: 2 at once")
        _ = ui.handle(.char("l"), many)
        _ = ui.handle(.char("1"), many)
        #expect(ui.handle(.char("7"), many) == .redraw, "no type 17: nothing is logged")
        #expect(ui.message == "There is no type 17." && ui.mode == .pickType(.log))
        var few = AppUI()
        _ = few.handle(.char("l"), context())
        #expect(few.handle(.char("1"), context()) == .log(typeId: context().types[0].id))
    }

    /// `?` shows every key and any key closes it; Enter on an event opens it in full, where its
    /// note, type and delete are a key away and Esc goes back (issue 32: no help, no detail).
    @Test func helpAndTheEventDetailView() {
        var ui = AppUI()
        #expect(ui.handle(.char("?"), context()) == .redraw && ui.mode == .help)
        #expect(ui.handle(.char("x"), context()) == .redraw && ui.mode == .browse)
        _ = ui.handle(.char("?"), context())
        #expect(ui.handle(.char("q"), context()) == .quit)
        ui = AppUI()
        _ = ui.handle(.char("2"), context())
        _ = ui.handle(.char("j"), context())
        #expect(ui.handle(.enter, context()) == .redraw && ui.mode == .detail(Self.page[1]))
        #expect(ui.handle(.escape, context()) == .redraw && ui.mode == .browse)
        _ = ui.handle(.enter, context())
        _ = ui.handle(.char("d"), context())
        #expect(
            ui.mode == .confirm(.delete(eventId: Self.page[1]), "Delete the selected event?"),
            "d in the detail view deletes that event")
        #expect(ui.handle(.enter, AppUI.Context(route: .authenticated, types: [], page: [], hasMore: false)) == .redraw)
        var empty = AppUI()
        _ = empty.handle(.char("2"), context())
        let none = AppUI.Context(route: .authenticated, types: [], page: [], hasMore: false)
        #expect(empty.handle(.enter, none) == nil, "nothing to open")
    }

    /// Bracketed paste: a paste is one key however the reads cut it; a lone Esc is not held
    /// back; in a field a pasted line break is a space, outside a field a paste does nothing
    /// (outside tester: a pasted "pasted\ndy" committed the note, then deleted the event).
    @Test func aPasteIsTextNeverKeys() {
        var reader = PasteReader()
        let bytes = Array("j\u{1B}[200~pasted\ndy\u{1B}[201~k".utf8)
        var keys: [Key] = []
        for chunk in stride(from: 0, to: bytes.count, by: 3) {
            keys += reader.feed(Array(bytes[chunk..<min(chunk + 3, bytes.count)]))
        }
        #expect(keys == [.char("j"), .paste("pasted\ndy"), .char("k")])
        var esc = PasteReader()
        #expect(esc.feed([0x1B]) == [.escape], "Esc at the end of a read is a key at once")
        var ui = AppUI()
        _ = ui.handle(.char("2"), context())
        _ = ui.handle(.char("c"), context())
        #expect(ui.handle(.paste("pasted\ndy"), context()) == .redraw)
        #expect(ui.handle(.enter, context()) == .editNote(eventId: Self.page[0], note: "pasted dy"))
        #expect(ui.handle(.paste("dy"), context()) == nil, "outside a field a paste does nothing")
        #expect(ui.mode == .browse)
    }

    /// From the outside attack: Shift-Tab is the field before (it closed the form); Esc takes a
    /// form's failure with it; bidi controls show as escapes; list times are unambiguous.
    @Test func smallThingsAPersonMeets() {
        #expect(Key.decode(Array("\u{1B}[Z".utf8)) == [.up])
        var ui = AppUI()
        ui.mode = .form(AppUI.Form(.signUp))
        ui.message = "That is not a valid email address."
        _ = ui.handle(.escape, context(.onboarding(.auth)))
        #expect(ui.message == nil)
        #expect(oneLine("a \u{202E}b") == "a \\u{202e}b")
        let utc = TimeZone(identifier: "UTC")!
        #expect(Screen.when(Date(timeIntervalSince1970: 1_796_202_300), utc) == "Wed  2 Dec 2026 09:05")
    }

    /// A frame taller than the window keeps its top and its keys, and says what it left out
    /// (outside tester: at 50×15 the key bar, "q quit" with it, was cut off).
    @Test func aTallFrameKeepsItsKeys() {
        let frame =
            ["┌ Trendy", "│ banner"] + (1...20).map { "│ line \($0)" } + ["│ Keys: a · b", "│       q quit", "└──"]
        let fitted = Terminal.fit(frame, rows: 10, columns: 80)
        #expect(fitted.count == 10)
        #expect(fitted.prefix(7) == frame.prefix(7))
        #expect(fitted[7] == "│ … 15 more line(s): a taller window shows them")
        #expect(Array(fitted.suffix(2)) == ["│ Keys: a · b · q quit", "└──"], "the keys flow to the width")
        #expect(
            Terminal.fit(frame, rows: 40, columns: 80).count == frame.count - 1, "a frame that fits keeps its lines")
        #expect(Terminal.fit(frame, rows: 3, columns: 80).count == 3)
    }

    /// Back and forward, past this month too (issue 32, item 9: an event dated next month could
    /// not be reached).
    @Test func theCalendarMovesBackAndIntoTheFuture() {
        var ui = AppUI()
        _ = ui.handle(.char("3"), context())
        #expect(ui.handle(.char("]"), context()) == .redraw)
        #expect(ui.monthOffset == -1, "next month")
        _ = ui.handle(.char("["), context())
        _ = ui.handle(.char("["), context())
        _ = ui.handle(.left, context())
        #expect(ui.monthOffset == 2)
        _ = ui.handle(.right, context())
        #expect(ui.monthOffset == 1)
    }

    @Test func formsTypeEditAndSubmit() {
        var ui = AppUI()
        #expect(ui.handle(.enter, context(.login)) == .redraw)
        for c in "ana@x.io" { _ = ui.handle(.char(c), context(.login)) }
        _ = ui.handle(.backspace, context(.login))
        _ = ui.handle(.char("o"), context(.login))
        _ = ui.handle(.enter, context(.login))
        for c in "pw q" { _ = ui.handle(.char(c), context(.login)) }
        #expect(ui.handle(.enter, context(.login)) == .signIn(email: "ana@x.io", password: "pw q"))
        if case .form(let kept) = ui.mode {
            #expect(kept.values == ["ana@x.io", "pw q"], "the form stays while the server answers")
        } else {
            Issue.record("the form closed on submit")
        }
        ui.mode = .browse
        _ = ui.handle(.char("l"), context(.login))
        #expect(ui.handle(.escape, context(.login)) == .redraw && ui.mode == .browse)
    }

    @Test func onboardingKeysFollowTheStep() {
        var ui = AppUI()
        #expect(ui.handle(.enter, context(.onboarding(.welcome))) == .onboardingNext)
        #expect(ui.handle(.char("u"), context(.onboarding(.auth))) == .redraw)
        #expect(ui.mode == .form(AppUI.Form(.signUp)))
        _ = ui.handle(.escape, context(.onboarding(.auth)))
        // Types already there are offered: Enter keeps them, n makes another.
        #expect(ui.handle(.enter, context(.onboarding(.createEventType))) == .onboardingNext)
        let none = AppUI.Context(route: .onboarding(.createEventType), types: [], page: [], hasMore: false)
        #expect(ui.handle(.enter, none) == .redraw && ui.mode == .form(AppUI.Form(.firstType)))
        _ = ui.handle(.escape, none)
        _ = ui.handle(.char("n"), context(.onboarding(.createEventType)))
        for c in "Tea" { _ = ui.handle(.char(c), context(.onboarding(.createEventType))) }
        #expect(ui.handle(.enter, context(.onboarding(.createEventType))) == .firstType(name: "Tea"))
        _ = ui.handle(.enter, context(.onboarding(.logFirstEvent)))
        #expect(ui.handle(.char("1"), context(.onboarding(.logFirstEvent))) == .firstEvent(typeName: "Coffee"))
        var logged = context(.onboarding(.logFirstEvent))
        logged.hasEvents = true
        #expect(ui.handle(.enter, logged) == .onboardingNext, "events already there: Enter goes on")
        #expect(ui.handle(.char("a"), context(.onboarding(.permissions))) == .permissions(allow: true))
        #expect(ui.handle(.char("s"), context(.onboarding(.permissions))) == .onboardingSkip)
        #expect(ui.handle(.char("b"), context(.onboarding(.permissions))) == .onboardingBack)
        #expect(ui.handle(.enter, context(.onboarding(.finish))) == .onboardingNext)
    }

    @Test func linesFitTheTerminalByCellsAndKeysWrap() {
        #expect(Terminal.fitting("abcdef", columns: 4) == "abcd")
        #expect(Terminal.fitting("日本語テキスト", columns: 5) == "日本", "wide characters take two cells")
        #expect(Terminal.fitting("e\u{301}x", columns: 2) == "e\u{301}x", "a combining mark takes none")
        let lines = AppScreens.keyLines(Array(repeating: "j/k select", count: 12))
        #expect(lines.count > 1 && lines.allSatisfy { $0.count <= 72 })
        #expect(lines.joined().components(separatedBy: "j/k select").count == 13, "no key lost")
    }

    @Test func noScreenSendsControlCharactersToTheTerminal() {
        let note = "line1\nline2 \u{1B}[2J\u{1B}]0;PWNED\u{07}"
        let event = Event(id: Self.ids.next(), eventTypeId: Self.coffee.id, timestamp: Date(), notes: note)
        let facts = MainFacts(typeNames: [Self.coffee.id: "Coffee\u{1B}[31m"], recent: [event], today: 1)
        var data = AppViewData()
        data.types = [Self.coffee]
        data.recent = [event]
        for plain in [false, true] {
            let launch = ScreenRenderer.render(.main(.dashboard, facts, banner: "x"), plain: plain)
            let app = AppScreens.render(AppUI(), route: .authenticated, data: data, banner: "x", plain: plain).text
            for text in [launch, app] {
                #expect(!text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || $0.value == 0x7F })
                #expect(text.contains("\\u{1b}[2J"), "shown as an escape")
            }
        }
    }

    @Test func keysDecodeFromATerminalAndFromAScript() {
        #expect(Key.decode(Array("a\u{1B}[A\r\u{7F}\u{1B}".utf8)) == [.char("a"), .up, .enter, .backspace, .escape])
        #expect(Key.decode(Array("é".utf8)) == [.char("é")])
        #expect(
            Key.script("ab<enter><esc><nope>") == [.char("a"), .char("b"), .enter, .escape] + "<nope>".map(Key.char))
    }
}
