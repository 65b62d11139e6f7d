import Foundation
import TrendyModels

/// The app's pickers, forms and commands: what the keys of ``AppUI`` produce.
extension AppUI {
    /// Why a type is being picked.
    enum Purpose: Sendable, Equatable {
        case log
        case retype(UUIDv7)
        case firstEvent
        /// Log with a note, at another time: the form follows.
        case logWithDetails
    }

    /// A property's field in the log form: its key and what the form says of it.
    struct LogField: Sendable, Equatable {
        var key: String
        var label: String
        /// The default a new event gets when the field is left empty (the log form says so; an
        /// edit's empty field removes the value).
        var fallback: String?
    }

    /// A form: its fields as typed, and which one has the cursor.
    struct Form: Sendable, Equatable {
        enum Kind: Sendable, Equatable {
            case signIn
            case signUp
            case firstType
            case note(UUIDv7)
            /// A new event of this type: its note, its time and its properties (key, label).
            case logDetails(UUIDv7, fields: [LogField] = [])
            /// The event's time.
            case time(UUIDv7)
            /// The event's property values, as they are (`was`), by its type's fields.
            case values(UUIDv7, fields: [LogField], was: [String])
            case search
            case jump
            case newType
            case renameType(UUIDv7)
            case newPlace
            /// A place's name, centre, radius and type, as they are, to change.
            case editPlace(UUIDv7)
            case password
        }

        var kind: Kind
        var values: [String]
        var field = 0

        init(_ kind: Kind) {
            self.kind = kind
            values = []
            values = Array(repeating: "", count: labels.count)
        }

        /// Whether field `i` is a password (shown as dots).
        func isSecret(_ i: Int) -> Bool {
            switch kind {
            case .signIn, .signUp: i == 1
            case .password: true
            default: false
            }
        }

        /// The fields' labels.
        var labels: [String] {
            switch kind {
            case .firstType: ["Name"]
            case .note: ["Note (empty clears it)"]
            case .logDetails(_, let fields):
                ["Note", "When (empty: now; or -2h, yesterday 18:00, 2026-11-20 09:00)"]
                    + fields.map { field in field.fallback.map { "\(field.label), empty: \($0)" } ?? field.label }
            case .time: ["When (now, -2h, yesterday 18:00, 2026-11-20 09:00)"]
            case .values(_, let fields, _): fields.map { "\($0.label), empty: none" }
            case .search: ["Search notes, places and types (empty shows all)"]
            case .jump: ["Go to date (2026-11-20, yesterday, -7d)"]
            case .newType: ["Name"]
            case .renameType: ["Name", "Colour (#RRGGBB)", "Icon"]
            case .newPlace, .editPlace:
                ["Name", "Where (latitude, longitude)", "Radius in metres", "Event type it logs"]
            case .password: ["New password (at least 8 characters)", "The new password again"]
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
        /// An event of the type, at the time as typed (`when`), with a note and its properties
        /// as typed (`key=value`, read by their definitions).
        case logAt(typeId: UUIDv7, when: String, note: String?, properties: [String] = [])
        case retime(eventId: UUIDv7, when: String)
        /// Set these values (`key=value`) and remove those (`key`) of the event.
        case setValues(eventId: UUIDv7, set: [String], unset: [String])
        case undo(Undo)
        /// The events list from the first event on or before this day (as typed).
        case jump(String)
        case createType(name: String)
        case renameType(UUIDv7, name: String, color: String, icon: String)
        case deleteType(UUIDv7)
        case createPlace(name: String, center: String, radius: String, typeName: String)
        case editPlace(UUIDv7, name: String, center: String, radius: String, typeName: String)
        case deletePlace(UUIDv7)
        case restoreConflict(String)
        case dismissConflict(String)
        case retryFailed
        case signOut
        /// Sign out, then the sign-in form.
        case switchAccount
        case changePassword(String)
        /// Nothing to do but draw again.
        case redraw
    }

    /// What `u` takes back, with what it needs to.
    enum Undo: Sendable, Equatable {
        /// Delete the event just logged (changed since, it stays). `mark`: the store's change mark
        /// just after the key's write (``TrendySync/LocalStore/localChangeMark()``).
        case unlog(Event, mark: Int64)
        /// Log the deleted event again (under a new id: the server remembers the old one as deleted).
        case relog(Event)
        /// Put the event's type, note and time back as they were `before`, if nothing changed
        /// the event since: no local change after `mark` (here, in another terminal, a conflict
        /// restored — even one that put back the very values the key left), and the values still
        /// as the change left them (`after`; a pass may have brought another device's).
        case revert(before: Event, after: Event, mark: Int64)
    }
}
