import Foundation
import TrendyModels
import TrendyOnboarding
import TrendyRouting

/// What the running app shows besides the route: the tab, the open picker or form, the page,
/// the filter, the month. A value: every key press is `handle(_:_:)`, which changes it and says
/// what to do — pure, so every key path is unit-tested without a terminal.
struct AppUI: Sendable, Equatable {
    /// What takes the keys.
    enum Mode: Sendable, Equatable {
        /// The screen itself.
        case browse
        /// Choosing an event type (for a new event, to move an event, or onboarding's first one).
        case pickType(Purpose)
        /// A question ("Delete this event?"): y runs the command, any other key keeps things as they are.
        case confirm(Command, String)
        /// Typing into fields.
        case form(Form)
        /// Every key of every screen (`?`); any key closes it.
        case help
        /// One event in full (Enter on the events list).
        case detail(UUIDv7)
    }

    /// What a key is judged against: the route and what the screen lists.
    struct Context: Sendable {
        var route: AppRoute
        /// Event types by name.
        var types: [EventType]
        /// The events on the current page, in order.
        var page: [UUIDv7]
        /// Whether there is a next page.
        var hasMore: Bool
        /// The notes of the page's events (a note is amended, not typed again).
        var notes: [UUIDv7: String] = [:]
        /// The selectable rows of the types, places and account tabs (their ids).
        var rows: [String] = []
        /// Names by row id (a question names what it deletes) and events per type (nil: not
        /// counted yet).
        var names: [String: String] = [:]
        var counts: [String: Int]? = [:]
        /// Changes not sent yet (signing out asks first).
        var unsent = 0
        /// The times of the page's events (a time is amended, not typed again).
        var times: [UUIDv7: Date] = [:]
        /// The account holds events (onboarding offers them instead of asking for a first one).
        var hasEvents = false
        /// An edit form's fields as they are, by row id (a type or place is amended, not typed again).
        var prefill: [String: [String]] = [:]
        /// Each type's properties, as the log form asks for them.
        var fields: [UUIDv7: [LogField]] = [:]
        /// The page's events' types and values as typed (`v` amends them).
        var eventTypes: [UUIDv7: UUIDv7] = [:]
        var values: [UUIDv7: [String: String]] = [:]
    }

    var tab: MainTab = .dashboard
    var mode: Mode = .browse
    /// The selected row of the events page.
    var selection = 0
    /// The selected row of an open type picker.
    var pick = 0
    /// The digits typed in the picker so far: with ten types or more, "1" waits for a second digit
    /// (or Enter) — it used to log type 1 before "0" could make it 10.
    var typed = ""
    /// The events page (0: newest).
    var page = 0
    /// Only events of this type (events tab).
    var filter: UUIDv7?
    /// Months back from the current one (calendar tab).
    var monthOffset = 0
    /// A line under the screen: what just happened.
    var message: String?
    /// What `u` takes back: the last log, delete or change made with a key here.
    var undo: Undo?
    /// The events list shows only events with these words (`/`).
    var query: String?

    static let pageSize = 10
    /// The calendar times are typed and shown in (the device's zone).
    var calendar = ScreenCounts.calendar

    /// Handles one key; returns what the runner must do (nil: nothing changed).
    mutating func handle(_ key: Key, _ context: Context) -> Command? {
        switch mode {
        case .form(var form): return handleForm(key, &form)
        case .pickType(let purpose): return handlePicker(key, purpose, context)
        case .confirm(let command, _):
            mode = .browse
            if key == .char("y") { return command }
            message = "Nothing was changed."
            return .redraw
        case .help:
            mode = .browse
            return key == .char("q") ? .quit : .redraw
        case .detail(let id): return handleDetail(key, id, context)
        case .browse: break
        }
        if key == .char("q") { return .quit }
        if key == .char("?") {
            mode = .help
            return .redraw
        }
        switch context.route {
        case .authenticated:
            let command = handleMain(key, context)
            // A picker, form or question opened: the last action's line goes ("The time is as it
            // was." stayed under the next type picker).
            if mode != .browse, !isAsking { message = nil }
            return command
        case .login:
            if key == .enter || key == .char("l") {
                mode = .form(Form(.signIn))
                return .redraw
            }
            if key == .char("u") {
                // A new account from the sign-in screen (it could only be made during onboarding).
                mode = .form(Form(.signUp))
                return .redraw
            }
            return nil
        case .onboarding(let step): return handleOnboarding(key, step, context)
        case .loading, .error: return nil
        }
    }

    mutating func handleMain(_ key: Key, _ context: Context) -> Command? {
        switch key {
        case .char("1"), .char("2"), .char("3"), .char("4"), .char("5"), .char("6"), .char("7"):
            guard case .char(let c) = key, let n = c.wholeNumberValue else { return nil }
            tab = MainTab.allCases[n - 1]
            selection = 0
            // A line belongs to the moment it was said (a move's result outlived tab switches).
            message = nil
            return .redraw
        case .char("\t"):
            nextTab()
            return .redraw
        case .right where tab != .calendar:
            nextTab()
            return .redraw
        case .char("s"):
            message = "Syncing…"
            return .syncNow
        case .char("l"), .char("L"):
            guard !context.types.isEmpty else {
                message = "No event types yet: create one with `trendy types add <name>`."
                return .redraw
            }
            mode = .pickType(key == .char("L") ? .logWithDetails : .log)
            pick = 0
            return .redraw
        case .char("u"):
            guard let undo else {
                message = "Nothing to undo."
                return .redraw
            }
            self.undo = nil
            return .undo(undo)
        default: break
        }
        switch tab {
        case .events: return handleEvents(key, context)
        case .calendar:
            switch key {
            case .char("["), .left:
                monthOffset += 1
                return .redraw
            case .char("]"), .right:
                // Into the future too: an event logged for next month is shown there.
                guard monthOffset > -1_200 else { return nil }
                monthOffset -= 1
                return .redraw
            default: return nil
            }
        case .types: return handleTypes(key, context)
        case .places: return handlePlaces(key, context)
        case .account: return handleAccount(key, context)
        case .dashboard, .analytics: return nil
        }
    }

    mutating func nextTab() {
        let all = MainTab.allCases
        tab = all[((all.firstIndex(of: tab) ?? 0) + 1) % all.count]
        selection = 0
        message = nil
    }

    mutating func handleEvents(_ key: Key, _ context: Context) -> Command? {
        switch key {
        case .char("j"), .down, .char("k"), .up: return moveRow(key, count: context.page.count)
        case .char("n"):
            guard context.hasMore else { return nil }
            page += 1
            selection = 0
        case .char("p"):
            guard page > 0 else { return nil }
            page -= 1
            selection = 0
        case .char("f"):
            // Cycles through the types, then back to all.
            let ids = context.types.map(\.id)
            if let filter, let i = ids.firstIndex(of: filter) {
                self.filter = i + 1 < ids.count ? ids[i + 1] : nil
            } else {
                filter = ids.first
            }
            page = 0
            selection = 0
        case .char("d"):
            guard context.page.indices.contains(selection) else { return nil }
            // Named by type and time, from what the context holds, when asked (not at every read):
            // "the selected event" did not say which (an outside tester).
            let id = context.page[selection]
            var named = "the selected event"
            if let type = context.eventTypes[id], let name = context.types.first(where: { $0.id == type })?.name,
                let at = context.times[id]
            {
                named = "\(name), \(AppHelp.when(at, .current))"
            }
            mode = .confirm(.delete(eventId: id), "Delete \(named)?")
        case .char("e"):
            guard context.page.indices.contains(selection) else { return nil }
            mode = .pickType(.retype(context.page[selection]))
            pick = 0
        case .enter:
            guard context.page.indices.contains(selection) else { return nil }
            mode = .detail(context.page[selection])
        case .char("c"):
            guard context.page.indices.contains(selection) else { return nil }
            let event = context.page[selection]
            var form = Form(.note(event))
            // The note as it is, to amend (it opened empty: the whole note typed again).
            form.values[0] = context.notes[event] ?? ""
            mode = .form(form)
        default: return moreEventKeys(key, context)
        }
        return .redraw
    }

    /// The detail view: the event's note, type and delete are a key away; Esc goes back.
    mutating func handleDetail(_ key: Key, _ id: UUIDv7, _ context: Context) -> Command? {
        switch key {
        case .escape, .backspace, .left, .enter:
            mode = .browse
            return .redraw
        case .char("q"): return .quit
        case .char("c"), .char("e"), .char("d"), .char("t"), .char("v"):
            mode = .browse
            guard let row = context.page.firstIndex(of: id) else { return .redraw }
            selection = row
            return handleEvents(key, context)
        default: return nil
        }
    }

    mutating func handlePicker(_ key: Key, _ purpose: Purpose, _ context: Context) -> Command? {
        let types = context.types
        var chosen: EventType?
        let digits = typed
        typed = ""
        switch key {
        case .escape, .char("q"):
            mode = .browse
            pick = 0
            return .redraw
        case .char("j"), .down:
            pick = min(pick + 1, max(types.count - 1, 0))
            return .redraw
        case .char("k"), .up:
            pick = max(pick - 1, 0)
            return .redraw
        case .enter:
            chosen = types.indices.contains(pick) ? types[pick] : nil
        case .char(let c) where c.isASCII && c.isNumber:
            // The digits so far and this one; a number no longer one could start with is chosen.
            let number = Int(digits + String(c)).flatMap { types.indices.contains($0 - 1) ? $0 : nil }
            guard
                let n = number
                    ?? (digits.isEmpty
                        ? c.wholeNumberValue.flatMap({ types.indices.contains($0 - 1) ? $0 : nil }) : nil)
            else {
                // "1" then "4" of 13 types: no type 14 — nothing is logged (it logged type 4).
                message = digits.isEmpty ? nil : "There is no type \(digits)\(c)."
                return digits.isEmpty ? nil : .redraw
            }
            pick = n - 1
            guard n * 10 > types.count else {
                typed = String(n)
                return .redraw
            }
            chosen = types[n - 1]
        default: return nil
        }
        guard let chosen else { return nil }
        mode = .browse
        pick = 0
        switch purpose {
        case .log: return .log(typeId: chosen.id)
        case .retype(let event): return .retype(eventId: event, typeId: chosen.id)
        case .firstEvent: return .firstEvent(typeName: chosen.name)
        case .logWithDetails:
            mode = .form(Form(.logDetails(chosen.id, fields: context.fields[chosen.id] ?? [])))
            return .redraw
        }
    }

    /// Whether a typed or pasted character goes into a field: not a control character (C0, C1)
    /// and not a bidi control, which would reorder what the terminal shows after it. Format
    /// characters are text: a zero-width joiner typed between two emoji makes one (Foundation's
    /// `controlCharacters` counts them as control characters, and a typed 👩‍💻 was stored as 👩💻).
    static func isText(_ c: Character) -> Bool {
        !c.unicodeScalars.contains { scalar in
            scalar.properties.generalCategory == .control || (0x202A...0x202E).contains(scalar.value)
                || (0x2066...0x2069).contains(scalar.value)
        }
    }

    mutating func handleForm(_ key: Key, _ form: inout Form) -> Command? {
        switch key {
        case .escape:
            mode = .browse
            // The form's failure goes with it (it stayed on the screen, and in the next form).
            message = nil
            return .redraw
        case .backspace:
            if !form.values[form.field].isEmpty { form.values[form.field].removeLast() }
            message = nil
        case .char("\u{15}"):
            // Ctrl-U empties the field, as in a shell.
            form.values[form.field] = ""
            message = nil
        case .char("\t"):
            // Tab is the next field (it went into the field as text).
            form.field = (form.field + 1) % form.values.count
        case .char(let c) where !Self.isText(c):
            // Other control keys are not text (Ctrl-U went into the field, unseen).
            return nil
        case .char(let c):
            form.values[form.field].append(c)
            // A failure's line goes once the person types again ("at least 8 characters" stayed
            // while a valid password was typed).
            message = nil
        case .paste(let text):
            // Pasted text is text: line breaks and tabs become spaces, other control characters go.
            let flat = text.map { $0.isNewline || $0 == "\t" ? " " : $0 }.filter(Self.isText)
            form.values[form.field].append(contentsOf: flat)
            message = nil
        case .enter, .down:
            if form.field + 1 < form.values.count {
                form.field += 1
            } else if key == .enter {
                return submit(form)
            }
        case .up:
            form.field = max(0, form.field - 1)
        default: return nil
        }
        mode = .form(form)
        return .redraw
    }

    mutating func handleOnboarding(_ key: Key, _ step: OnboardingStep, _ context: Context) -> Command? {
        switch (step, key) {
        case (.welcome, .enter), (.finish, .enter): return .onboardingNext
        case (.auth, .char("u")), (.auth, .enter):
            mode = .form(Form(.signUp))
            return .redraw
        case (.auth, .char("l")):
            mode = .form(Form(.signIn))
            return .redraw
        case (.createEventType, .enter) where !context.types.isEmpty, (.logFirstEvent, .enter) where context.hasEvents:
            // The account has some already (another device, an import): they are offered, not asked for again.
            return .onboardingNext
        case (.createEventType, .enter), (.createEventType, .char("n")):
            mode = .form(Form(.firstType))
            return .redraw
        case (.logFirstEvent, .enter), (.logFirstEvent, .char("n")):
            mode = .pickType(.firstEvent)
            pick = 0
            return .redraw
        case (.permissions, .char("a")): return .permissions(allow: true)
        case (.permissions, .enter), (.permissions, .char("s")): return .onboardingSkip
        case (_, .char("b")): return .onboardingBack
        default: return nil
        }
    }
}
