import Foundation
import TrendyModels

/// The keys of the types, places and account tabs, the events list's search, jump and time keys,
/// and what a finished form asks for. Pure, like the rest of ``AppUI``.
extension AppUI {
    /// The events list's keys beyond moving and paging: its time, search and jump.
    mutating func moreEventKeys(_ key: Key, _ context: Context) -> Command? {
        switch key {
        case .char("t"):
            guard context.page.indices.contains(selection) else { return nil }
            let id = context.page[selection]
            var form = Form(.time(id))
            // The time as it is, to amend.
            form.values[0] = context.times[id].map { WhenText.typed($0, calendar: calendar) } ?? ""
            mode = .form(form)
        case .char("v"):
            guard context.page.indices.contains(selection) else { return nil }
            let id = context.page[selection]
            let fields = context.eventTypes[id].flatMap { context.fields[$0] } ?? []
            guard !fields.isEmpty else {
                message = "Its type has no properties: add some on the Types tab or with trendy types props add."
                return .redraw
            }
            let was = fields.map { context.values[id]?[$0.key] ?? "" }
            var form = Form(.values(id, fields: fields, was: was))
            form.values = was
            mode = .form(form)
        case .char("/"):
            var form = Form(.search)
            form.values[0] = query ?? ""
            mode = .form(form)
        case .char("g"):
            mode = .form(Form(.jump))
        case .escape:
            guard query != nil else { return nil }
            query = nil
            page = 0
            selection = 0
            message = nil
        default: return nil
        }
        return .redraw
    }

    /// j/k over `count` rows: the events page, or the rows of the types, places and account tabs.
    mutating func moveRow(_ key: Key, count: Int) -> Command? {
        switch key {
        case .char("j"), .down:
            guard selection + 1 < count else { return nil }
            selection += 1
        case .char("k"), .up:
            guard selection > 0 else { return nil }
            selection -= 1
        default: return nil
        }
        return .redraw
    }

    /// The selected row's id on the types, places and account tabs.
    func selectedRow(_ context: Context) -> String? {
        context.rows.indices.contains(selection) ? context.rows[selection] : nil
    }

    mutating func handleTypes(_ key: Key, _ context: Context) -> Command? {
        if let moved = moveRow(key, count: context.rows.count) { return moved }
        if key == .char("a") {
            mode = .form(Form(.newType))
            return .redraw
        }
        guard let row = selectedRow(context), let id = UUIDv7(row) else { return nil }
        let name = context.names[row] ?? "this type"
        switch key {
        case .char("r"):
            var form = Form(.renameType(id))
            // Its name, colour and icon as they are, to change.
            form.values = context.prefill[row] ?? [name, "", ""]
            mode = .form(form)
        case .char("d"):
            let events = context.counts.map { $0[row] ?? 0 }
            // Not counted yet (a big account): the question still says its events go with it.
            let what =
                events.map { $0 == 0 ? "" : " and its \($0) event\($0 == 1 ? "" : "s")" } ?? " and all its events"
            mode = .confirm(.deleteType(id), "Delete the type \(name)\(what)?")
        case .enter:
            // Its events, on the events tab.
            tab = .events
            filter = id
            query = nil
            page = 0
            selection = 0
        default: return nil
        }
        return .redraw
    }

    mutating func handlePlaces(_ key: Key, _ context: Context) -> Command? {
        if let moved = moveRow(key, count: context.rows.count) { return moved }
        switch key {
        case .char("a"):
            var form = Form(.newPlace)
            form.values[2] = "100"
            mode = .form(form)
        case .char("d"):
            guard let row = selectedRow(context), let id = UUIDv7(row) else { return nil }
            mode = .confirm(.deletePlace(id), "Delete the place \(context.names[row] ?? "")? Its visits stay.")
        case .char("e"):
            guard let row = selectedRow(context), let id = UUIDv7(row), let values = context.prefill[row] else {
                return nil
            }
            var form = Form(.editPlace(id))
            form.values = values
            mode = .form(form)
        default: return nil
        }
        return .redraw
    }

    mutating func handleAccount(_ key: Key, _ context: Context) -> Command? {
        if let moved = moveRow(key, count: context.rows.count) { return moved }
        let unsent =
            context.unsent == 0
            ? "" : " \(context.unsent) change(s) not sent yet stay here and go out when you sign in again."
        switch key {
        case .char("r"), .char("x"):
            guard let row = selectedRow(context) else { return nil }
            return key == .char("r") ? .restoreConflict(row) : .dismissConflict(row)
        case .char("t"): return .retryFailed
        case .char("o"): mode = .confirm(.signOut, "Sign out?\(unsent)")
        case .char("w"): mode = .confirm(.switchAccount, "Sign out and sign in to another account?\(unsent)")
        case .char("p"): mode = .form(Form(.password))
        default: return nil
        }
        return .redraw
    }

    /// A form's last field was done: what it asks for. Forms whose command the runner may refuse
    /// stay open until it answers (``Command/closesForm``): a refusal leaves what was typed.
    mutating func submit(_ form: Form) -> Command? {
        let values = form.values.map { $0.trimmingCharacters(in: .whitespaces) }
        mode = .form(form)
        switch form.kind {
        case .signIn: return .signIn(email: values[0], password: form.values[1])
        case .signUp: return .signUp(email: values[0], password: form.values[1])
        case .firstType:
            mode = .browse
            return .firstType(name: values[0])
        case .note(let id):
            mode = .browse
            return .editNote(eventId: id, note: values[0].isEmpty ? nil : values[0])
        case .search:
            mode = .browse
            query = values[0].isEmpty ? nil : values[0]
            page = 0
            selection = 0
            message = nil
            return .redraw
        case .logDetails(let id, let fields):
            let properties = zip(fields, values.dropFirst(2)).filter { !$0.1.isEmpty }.map { "\($0.0.key)=\($0.1)" }
            return .logAt(
                typeId: id, when: values[1], note: values[0].isEmpty ? nil : values[0], properties: properties)
        case .time(let id): return .retime(eventId: id, when: values[0])
        case .values(let id, let fields, let was):
            let set = zip(fields, values).filter { !$0.1.isEmpty }.map { "\($0.0.key)=\($0.1)" }
            let unset = zip(fields, zip(values, was)).filter { $0.1.0.isEmpty && !$0.1.1.isEmpty }.map(\.0.key)
            return .setValues(eventId: id, set: set, unset: unset)
        case .jump: return .jump(values[0])
        case .newType: return .createType(name: values[0])
        case .renameType(let id): return .renameType(id, name: values[0], color: values[1], icon: values[2])
        case .newPlace: return .createPlace(name: values[0], center: values[1], radius: values[2], typeName: values[3])
        case .editPlace(let id):
            return .editPlace(id, name: values[0], center: values[1], radius: values[2], typeName: values[3])
        case .password:
            guard form.values[0] == form.values[1] else {
                message = "The two passwords differ."
                var again = form
                again.values[1] = ""
                mode = .form(again)
                return .redraw
            }
            return .changePassword(form.values[0])
        }
    }
}

extension AppUI {
    /// The sign-up form is open.
    var isMakingAccount: Bool {
        if case .form(let form) = mode, form.kind == .signUp { return true }
        return false
    }

    /// A question is open (y answers it).
    var isAsking: Bool {
        if case .confirm = mode { return true }
        return false
    }
}

extension AppUI.Command {
    /// Sent from a form that stays open until the answer: closed unless it was refused.
    var closesForm: Bool {
        switch self {
        case .logAt, .retime, .setValues, .jump, .createType, .renameType, .createPlace, .editPlace, .changePassword:
            true
        default: false
        }
    }
}
