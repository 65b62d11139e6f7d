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
        /// "Delete this event?"
        case confirmDelete(UUIDv7)
        /// Typing into fields.
        case form(Form)
        /// Every key of every screen (`?`); any key closes it.
        case help
        /// One event in full (Enter on the events list).
        case detail(UUIDv7)
    }

    /// Why a type is being picked.
    enum Purpose: Sendable, Equatable {
        case log
        case retype(UUIDv7)
        case firstEvent
    }

    /// A form: its fields as typed, and which one has the cursor.
    struct Form: Sendable, Equatable {
        enum Kind: Sendable, Equatable {
            case signIn
            case signUp
            case firstType
            case note(UUIDv7)
        }

        var kind: Kind
        var values: [String]
        var field = 0

        init(_ kind: Kind) {
            self.kind = kind
            values = []
            values = Array(repeating: "", count: labels.count)
        }

        /// The fields' labels.
        var labels: [String] {
            switch kind {
            case .firstType: ["Name"]
            case .note: ["Note (empty clears it)"]
            case .signIn: ["Email", "Password"]
            // The rules before the first try, not only after a refusal.
            case .signUp: ["Email", "Password (at least 8 characters)"]
            }
        }
    }

    /// What a key asks the runner to do.
    enum Command: Sendable, Equatable {
        case quit
        case syncNow
        case log(typeId: UUIDv7)
        case delete(eventId: UUIDv7)
        case retype(eventId: UUIDv7, typeId: UUIDv7)
        case editNote(eventId: UUIDv7, note: String?)
        case signIn(email: String, password: String)
        case signUp(email: String, password: String)
        case onboardingNext
        case onboardingBack
        case onboardingSkip
        case firstType(name: String)
        case firstEvent(typeName: String)
        case permissions(allow: Bool)
        /// Nothing to do but draw again.
        case redraw

        /// Whether it creates an account.
        var isSignUp: Bool {
            if case .signUp = self { return true }
            return false
        }
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

    static let pageSize = 10

    /// Handles one key; returns what the runner must do (nil: nothing changed).
    mutating func handle(_ key: Key, _ context: Context) -> Command? {
        switch mode {
        case .form(var form): return handleForm(key, &form)
        case .pickType(let purpose): return handlePicker(key, purpose, context)
        case .confirmDelete(let id):
            mode = .browse
            if key == .char("y") { return .delete(eventId: id) }
            message = "Not deleted."
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
        case .authenticated: return handleMain(key, context)
        case .login:
            if key == .enter || key == .char("l") {
                mode = .form(Form(.signIn))
                return .redraw
            }
            return nil
        case .onboarding(let step): return handleOnboarding(key, step, context)
        case .loading, .error: return nil
        }
    }

    mutating func handleMain(_ key: Key, _ context: Context) -> Command? {
        switch key {
        case .char("1"), .char("2"), .char("3"), .char("4"):
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
        case .char("l"):
            guard !context.types.isEmpty else {
                message = "No event types yet: create one with `trendy types add <name>`."
                return .redraw
            }
            mode = .pickType(.log)
            pick = 0
            return .redraw
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
        case .char("j"), .down:
            guard selection + 1 < context.page.count else { return nil }
            selection += 1
        case .char("k"), .up:
            guard selection > 0 else { return nil }
            selection -= 1
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
            mode = .confirmDelete(context.page[selection])
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
        default: return nil
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
        case .char("c"), .char("e"), .char("d"):
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
        case .char(let c):
            form.values[form.field].append(c)
            // A failure's line goes once the person types again ("at least 8 characters" stayed
            // while a valid password was typed).
            message = nil
        case .paste(let text):
            // Pasted text is text: line breaks and tabs become spaces, other control characters go.
            let flat = text.map { $0.isNewline || $0 == "\t" ? " " : $0 }.filter {
                !($0.unicodeScalars.first.map { CharacterSet.controlCharacters.contains($0) } ?? false)
            }
            form.values[form.field].append(contentsOf: flat)
            message = nil
        case .enter, .down:
            if form.field + 1 < form.values.count {
                form.field += 1
            } else if key == .enter {
                mode = .browse
                let values = form.values.map { $0.trimmingCharacters(in: .whitespaces) }
                switch form.kind {
                // The form stays while the server answers: a refusal leaves what was typed.
                case .signIn:
                    mode = .form(form)
                    return .signIn(email: values[0], password: form.values[1])
                case .signUp:
                    mode = .form(form)
                    return .signUp(email: values[0], password: form.values[1])
                case .firstType: return .firstType(name: values[0])
                case .note(let id): return .editNote(eventId: id, note: values[0].isEmpty ? nil : values[0])
                }
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
        case (.createEventType, .enter):
            mode = .form(Form(.firstType))
            return .redraw
        case (.logFirstEvent, .enter):
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
