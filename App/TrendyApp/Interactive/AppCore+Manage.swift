import Foundation
import TrendyModels
import TrendyRouting
import TrendySync

/// What the core does after the use cases of the later screens: a form closes unless refused,
/// `u` learns what it takes back, a jump moves the list, switching account opens the sign-in form.
extension AppCore {
    mutating func afterward(_ command: AppUI.Command, _ outcome: Outcome) {
        if command.closesForm, case .form = ui.mode, !outcome.failed { ui.mode = .browse }
        if command.undoable, !outcome.failed {
            // The last change made here is what `u` takes back; an undo is not undone in turn.
            ui.undo = outcome.undo
        }
        if case .editNote(let id, let note?) = command, outcome.gone, var event = noted, event.id == id {
            // Deleted (elsewhere, most likely) while the note was typed: the note is not lost.
            event.notes = note
            ui.undo = .relog(event)
            ui.message =
                "That event was deleted (here or on another device), so the note was not saved: "
                + "u logs it again with your note."
        }
        if let position = outcome.position {
            // The position is in the list of every event (of the filtered type), not a search's.
            ui.query = nil
            ui.tab = .events
            ui.page = position / AppUI.pageSize
            ui.selection = position % AppUI.pageSize
        }
        if command == .switchAccount, route == .login { ui.mode = .form(AppUI.Form(.signIn)) }
    }

    /// After a pass the server's absence cut short (offline, unavailable, a temporary failure), the
    /// next one comes on its own with back-off: the app used to wait for the 60-second timer
    /// after the server came back.
    mutating func retry(after run: SyncRun) -> [Effect] {
        guard route == .authenticated, [.offline, .unavailable, .waiting].contains(run.outcome) else {
            if run.outcome == .ok { retryDelay = .seconds(2) }
            return []
        }
        defer { retryDelay = min(retryDelay * 2, .seconds(60)) }
        return [.retrySync(after: retryDelay)]
    }

    /// When only the text of the field with the cursor changed since the last frame: that field,
    /// as a screen reader should hear it ("Password: 9 characters"); nil when more changed.
    mutating func typedInto() -> String? {
        defer {
            if case .form(let form) = ui.mode { shownForm = form } else { shownForm = nil }
            shownMessage = ui.message
        }
        guard case .form(let form) = ui.mode, let before = shownForm, before.kind == form.kind,
            before.field == form.field, shownMessage == ui.message
        else { return nil }
        let value = form.values[form.field]
        let label = form.labels[form.field]
        guard form.isSecret(form.field) else { return "\(label): \(value.isEmpty ? "empty" : value)" }
        return "\(label): \(value.count) character\(value.count == 1 ? "" : "s")"
    }

    /// Remembers the event a note form that just opened (`before` was not it) is for, as shown
    /// then (``noted``): each opening takes it again, so a form reopened after the event changed
    /// never offers `u` the event as it was before; typing in the form keeps it, even when the
    /// event has left the screen meanwhile.
    mutating func rememberNoted(before: AppUI.Mode) {
        func noteForm(_ mode: AppUI.Mode) -> UUIDv7? {
            guard case .form(let form) = mode, case .note(let id) = form.kind else { return nil }
            return id
        }
        guard let id = noteForm(ui.mode), noteForm(before) != id else { return }
        noted = lastData?.page.first { $0.id == id }
    }

    /// Whether Enter on a note form would overwrite a note that changed since the form opened
    /// (another device's, pulled meanwhile, or another terminal's): the form stays as typed, says
    /// what the note is now, and a second Enter saves over it. Before, the form's starting text
    /// silently replaced the newer note everywhere, with no conflict on any device (an outsider's
    /// attack): from the server's view this device had seen it.
    mutating func noteChangedMeanwhile(_ command: AppUI.Command, before: AppUI.Mode) -> Bool {
        guard case .editNote(let id, let note) = command, let shown = noted, shown.id == id,
            let now = lastData?.page.first(where: { $0.id == id }), now.notes != shown.notes, note != now.notes
        else { return false }
        ui.mode = before
        noted = now
        ui.message =
            "The note was changed elsewhere since you opened it; it is now “\(now.notes ?? "")”. "
            + "Enter saves yours over it, Esc keeps it."
        return true
    }

    /// Signing in or up was refused: the form stays with the email, the password to type again.
    mutating func keepFormForAnotherTry() {
        guard case .form(var form) = ui.mode, form.values.count > 1 else { return }
        form.values[1] = ""
        form.field = 1
        ui.mode = .form(form)
    }
}

extension AppUI.Command {
    /// What the screen says while it waits on the server.
    var waiting: String {
        switch self {
        case .signUp: "Creating your account"
        case .changePassword: "Changing the password"
        default: "Signing in"
        }
    }

    /// Whether it signs in (or up).
    var signsIn: Bool {
        switch self {
        case .signIn, .signUp: true
        default: false
        }
    }

    /// Whether it removes the selected row (the selection moves up one).
    var deletesRow: Bool {
        switch self {
        case .delete, .deleteType, .deletePlace: true
        default: false
        }
    }

    /// Whether what it did can be taken back with `u` (its outcome says how), or it is an undo.
    var undoable: Bool {
        switch self {
        case .log, .logAt, .delete, .retype, .editNote, .retime, .setValues, .undo: true
        default: false
        }
    }
}
