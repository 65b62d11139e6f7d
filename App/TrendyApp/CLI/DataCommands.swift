import ArgumentParser
import Foundation
import TrendyModels
import TrendySync

#if canImport(Glibc)
    import Glibc
#endif

extension LocalStoreError {
    var cli: CLIError {
        switch self {
        case .notFound: return CLIError(code: .notFound, message: description, exitCode: .dataError)
        case .invalid: return CLIError(code: .invalid, message: description, exitCode: .dataError)
        case .conflict: return CLIError(code: .conflict, message: description, exitCode: .dataError)
        }
    }
}

/// Runs a store call, turning its errors into CLI errors.
func storeCall<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as LocalStoreError {
        throw error.cli
    } catch let error as TrendyModels.ValidationError {
        throw CLIError(code: .invalid, message: error.description, exitCode: .dataError)
    } catch let error as PropertyActions.UnknownKey {
        throw CLIError(code: .unknownProperty, message: error.description, exitCode: .dataError)
    }
}

/// Finds an event type by name (case-insensitive) or id.
func resolveType(_ env: AppEnvironment, _ nameOrId: String) async throws -> EventType {
    if let byName = try await env.store.eventType(named: nameOrId) { return byName.value }
    if let id = UUIDv7(nameOrId), let byId = try await env.store.eventType(id: id) { return byId.value }
    throw CLIError(
        code: .unknownType,
        message: "no event type named '\(nameOrId)'; create it with `trendy types add \(nameOrId)`",
        exitCode: .dataError)
}

/// `text` on one line for listings: line breaks, tabs and other control characters are shown
/// as escapes (`\n`), so a note never breaks a list into lines that look like other entries.
func oneLine(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            let category = scalar.properties.generalCategory
            // Bidi controls (U+202A-202E, U+2066-2069) reorder what follows on a terminal: shown
            // as escapes like any control character (U+202E reached the terminal raw).
            let bidi = (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
            if category == .control || category == .lineSeparator || category == .paragraphSeparator || bidi {
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out
}

/// Parses `--at`: ISO-8601, or `now`.
func parseTime(_ text: String?, now: Date) throws(CLIError) -> Date {
    guard let text, text != "now" else { return now }
    guard let date = TrendyJSON.parseDate(text) else {
        throw CLIError(
            code: .invalidTime, message: "'\(text)' is not a time: use ISO-8601 like 2026-11-22T08:30:00Z, or now",
            exitCode: .usage)
    }
    return date
}

struct TypesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "types", abstract: "List, add, edit and remove event types.",
        subcommands: [List.self, Add.self, Edit.self, Remove.self, PropsCommand.self],
        defaultSubcommand: List.self)

    struct Item: Encodable {
        let id: String
        let name: String
        let color: String
        let icon: String
        let sync_status: String
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List event types.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                let types = try await env.store.eventTypes()
                if types.isEmpty { out.line("No event types yet. Add one with `trendy types add <name>`.") }
                for t in types {
                    out.line("\(t.value.name)  \(t.value.color)  \(t.value.icon)  [\(t.syncStatus.rawValue)]")
                }
                out.document(
                    types.map {
                        Item(
                            id: $0.value.id.description, name: $0.value.name, color: $0.value.color,
                            icon: $0.value.icon,
                            sync_status: $0.syncStatus.rawValue)
                    })
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add an event type.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Its name.") var name: String
        @Option(help: "Colour as #RRGGBB.") var color = "#3B82F6"
        @Option(help: "Icon name.") var icon = "circle"

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                // Get or create (D39): adding a type that exists — perhaps just made by another
                // process — is not an error; the existing type is kept as it is.
                let (type, created) = try await storeCall {
                    try await TypeActions(env: env).add(name: name, color: color, icon: icon)
                }
                out.line(
                    created
                        ? "Added event type \(type.name)." : "Event type \(type.name) already exists; kept as it is.")
                let status = created ? "pending" : (try await env.store.eventType(id: type.id))?.syncStatus.rawValue
                out.document(
                    Item(
                        id: type.id.description, name: type.name, color: type.color, icon: type.icon,
                        sync_status: status ?? "pending"))
            }
        }
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "edit", abstract: "Rename an event type, or change its colour or icon (it syncs).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Name or id.") var type: String
        @Option(help: "Its new name.") var name: String?
        @Option(help: "Colour as #RRGGBB.") var color: String?
        @Option(help: "Icon name.") var icon: String?

        func validate() throws {
            guard name != nil || color != nil || icon != nil else {
                throw ValidationError("say what to change: --name, --color or --icon")
            }
        }

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                let t = try await resolveType(env, type)
                guard
                    let edited = try await storeCall({
                        try await TypeActions(env: env).edit(t.id, name: name, color: color, icon: icon)
                    })
                else { throw CLIError(code: .notFound, message: "that type is gone", exitCode: .dataError) }
                out.line("Changed event type \(edited.name); it syncs with the next `trendy sync`.")
                out.document(
                    Item(
                        id: edited.id.description, name: edited.name, color: edited.color, icon: edited.icon,
                        sync_status: "pending"))
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rm", abstract: "Remove an event type and its events (asks first when it has any).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Name or id.") var type: String
        @Flag(help: "Remove it with its events without asking (for scripts).") var yes = false

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                let t = try await resolveType(env, type)
                let events = try await env.store.eventCountsByType(from: .distantPast, to: .distantFuture)[t.id] ?? 0
                // A type's events go with it: say how many and ask (40 went without a word).
                if events > 0, !yes {
                    let what = "\(t.name) and its \(events) event\(events == 1 ? "" : "s")"
                    guard !global.json, isatty(STDIN_FILENO) == 1 else {
                        throw CLIError(
                            code: .confirmationNeeded,
                            message: "removing \(what) needs --yes (nothing was removed)", exitCode: .usage)
                    }
                    FileHandle.standardError.write(Data("Remove \(what)? Type yes to confirm: ".utf8))
                    guard ["y", "yes"].contains(readLine()?.trimmingCharacters(in: .whitespaces).lowercased()) else {
                        out.line("Nothing was removed.")
                        throw ExitCode(TrendyExitCode.failure.rawValue)
                    }
                }
                _ = try await storeCall { try await TypeActions(env: env).remove(t.id) }
                out.line("Removed event type \(t.name)" + (events > 0 ? " and its \(events) event(s)." : "."))
                out.document(["removed": t.id.description, "events_removed": String(events)])
            }
        }
    }
}

struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events", abstract: "List, edit and remove events in the local store.",
        subcommands: [List.self, Edit.self, Remove.self], defaultSubcommand: List.self)

    struct Item: Encodable {
        let id: String
        let type: String
        let timestamp: Date
        let end_date: Date?
        let notes: String?
        let source_type: String
        let sync_status: String
        let properties: [String: PropertyValue]
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Newest events first.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Only events at or after this ISO-8601 time.") var since: String?
        @Option(help: "Only events before this ISO-8601 time.") var until: String?
        @Option(help: "Only events of this type (name or id).") var type: String?
        @Option(help: "Only events that came this way: manual, imported, geofence or healthkit.") var source: String?
        @Option(help: "Only events with these words (every one, any case) in the note, the place or the type's name.")
        var text: String?
        @Option(
            name: .customLong("property"),
            help: "Only events with this value: key=value, read by the key's definition (repeat for more).")
        var properties: [String] = []
        @Option(help: "How many (default 20).") var limit: Int?
        @Flag(help: "Every event, however many (a page at a time from the time index).") var all = false

        func validate() throws {
            guard (limit ?? 1) >= 1 else { throw ValidationError("--limit must be at least 1") }
            if let source, SourceType(rawValue: source) == nil {
                throw ValidationError("--source must be manual, imported, geofence or healthkit")
            }
            if let text, text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                throw ValidationError("--text needs at least one word")
            }
            guard !(all && (since != nil || limit != nil)) else {
                throw ValidationError("--all lists every event; leave out --since and --limit")
            }
        }

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                var typeId: UUIDv7?
                if let type { typeId = try await resolveType(env, type).id }
                let filter = EventFilter(
                    text: text, typeId: typeId,
                    source: source.flatMap(SourceType.init(rawValue:)),
                    since: try since.map { text throws(CLIError) in try parseTime(text, now: env.now()) },
                    until: try until.map { text throws(CLIError) in try parseTime(text, now: env.now()) },
                    properties: try await storeCall {
                        try await PropertyActions(env: env).wanted(properties, typeId: typeId)
                    })
                let names = Dictionary(
                    try await env.store.eventTypes().map { ($0.value.id, $0.value.name) },
                    uniquingKeysWith: { a, _ in a })
                var items: [Item] = []
                var listed = 0
                // A page at a time: a big account is listed whole without holding it twice.
                let page = 5_000
                repeat {
                    let wanted = all ? page : min(page, (limit ?? 20) - listed)
                    let events = try await env.store.eventPage(offset: listed, limit: wanted, filter: filter)
                    for e in events {
                        let name = names[e.value.eventTypeId] ?? "?"
                        let note = e.value.notes.map { "  \(oneLine($0))" } ?? ""
                        let props = e.value.properties.sorted { $0.key < $1.key }
                            .map { "  \(oneLine($0.key))=\(oneLine($0.value.text))" }.joined()
                        out.line(
                            "\(TrendyJSON.formatDate(e.value.timestamp))  \(name)\(note)\(props)  [\(e.syncStatus.rawValue)]  "
                                + e.value.id.description)
                        if out.json { items.append(EventsCommand.item(e, typeName: name)) }
                    }
                    listed += events.count
                    if events.count < wanted || (!all && listed >= limit ?? 20) { break }
                } while true
                if listed == 0 { out.line("No events.") }
                out.document(items)
            }
        }
    }

    /// The item for one stored event.
    static func item(_ e: LocalRecord<Event>, typeName: String) -> Item {
        Item(
            id: e.value.id.description, type: typeName, timestamp: e.value.timestamp, end_date: e.value.endDate,
            notes: e.value.notes, source_type: e.value.sourceType.rawValue, sync_status: e.syncStatus.rawValue,
            properties: e.value.properties)
    }

    /// Finds a stored event by its id (as `trendy events list` prints it).
    static func find(_ env: AppEnvironment, _ text: String) async throws -> LocalRecord<Event> {
        guard let id = UUIDv7(text) else {
            throw CLIError(
                code: .invalidId, message: "'\(text)' is not an event id; `trendy events list` shows them",
                exitCode: .usage)
        }
        guard let event = try await env.store.event(id: id) else {
            throw CLIError(code: .notFound, message: "no event with id \(text) here", exitCode: .dataError)
        }
        return event
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "edit",
            abstract:
                "Change an event here; it syncs with the next `trendy sync` (a change the server refused goes again, edited)."
        )
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The event's id (from `trendy events list`).") var id: String
        @Option(help: "Another event type (name or id).") var type: String?
        @Option(help: "Another time: ISO-8601 or now.") var at: String?
        @Option(help: "A new note.") var note: String?
        @Flag(help: "Remove the note.") var clearNote = false
        @Option(name: .customLong("prop"), help: "Set a property: key=value (repeat for more).") var props: [String] =
            []
        @Option(name: .customLong("unset-prop"), help: "Remove a property's value (repeat for more).")
        var unsetProps: [String] = []

        func validate() throws {
            if note != nil, clearNote { throw ValidationError("--note and --clear-note cannot go together") }
            if type == nil, at == nil, note == nil, !clearNote, props.isEmpty, unsetProps.isEmpty {
                throw ValidationError(
                    "nothing to change: give --type, --at, --note, --clear-note, --prop or --unset-prop")
            }
        }

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                let found = try await EventsCommand.find(env, id).value
                var newType: EventType?
                if let type { newType = try await resolveType(env, type) }
                let time = try at.map { text throws(CLIError) in try parseTime(text, now: env.now()) }
                var properties = found.properties
                if !props.isEmpty || !unsetProps.isEmpty {
                    let owner: EventType
                    if let newType {
                        owner = newType
                    } else {
                        owner = try await resolveType(env, found.eventTypeId.description)
                    }
                    properties = try await storeCall {
                        try await PropertyActions(env: env).values(
                            props, unset: unsetProps, over: found.properties, of: owner, defaults: false)
                    }
                }
                let changed = try await storeCall {
                    try await EventActions(env: env).change(found.id) { event in
                        if let newType { event.eventTypeId = newType.id }
                        if let time { event.timestamp = time }
                        if let note { event.notes = note }
                        if clearNote { event.notes = nil }
                        event.properties = properties
                    }
                }
                guard let event = changed else {
                    throw CLIError(code: .notFound, message: "no event with id \(id) here", exitCode: .dataError)
                }
                var typeName = newType?.name ?? "?"
                if newType == nil, let stored = try await env.store.eventType(id: event.eventTypeId) {
                    typeName = stored.value.name
                }
                // A local write always leaves the event pending until the next sync takes it.
                let saved = LocalRecord(event, syncStatus: .pending)
                out.line(
                    "Changed \(typeName) at \(TrendyJSON.formatDate(event.timestamp)); it syncs with the next `trendy sync`."
                )
                out.document(EventsCommand.item(saved, typeName: typeName))
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rm", abstract: "Remove an event here; the server forgets it with the next `trendy sync`.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The event's id (from `trendy events list`).") var id: String

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                let stored = try await EventsCommand.find(env, id)
                try await storeCall { try await EventActions(env: env).delete(stored.value.id) }
                out.line("Removed the event at \(TrendyJSON.formatDate(stored.value.timestamp)).")
                out.document(["removed": stored.value.id.description])
            }
        }
    }
}
