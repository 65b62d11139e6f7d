import ArgumentParser
import Foundation
import TrendyModels
import TrendySync

extension PropertyKind: ExpressibleByArgument {}

/// `trendy types props`: the custom properties of an event type (issue 33).
struct PropsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "props", abstract: "List, add, edit and remove the custom properties of an event type.",
        subcommands: [List.self, Add.self, Edit.self, Remove.self], defaultSubcommand: List.self)

    /// One definition as `--json` gives it: the wire shape, with its sync status.
    struct Item: Encodable {
        let definition: PropertyDefinition
        let syncStatus: String

        enum CodingKeys: String, CodingKey { case sync_status }

        func encode(to encoder: any Encoder) throws {
            try definition.encode(to: encoder)
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(syncStatus, forKey: .sync_status)
        }
    }

    /// One line: `shots  number  "Shots"  default 2  [pending]`.
    static func line(_ d: PropertyDefinition, status: String) -> String {
        var parts = [d.key, d.propertyType.rawValue]
        if d.label != d.key { parts.append("\"\(oneLine(d.label))\"") }
        if let options = d.options { parts.append("options: " + options.map(oneLine).joined(separator: ", ")) }
        if let value = d.defaultValue { parts.append("default \(oneLine(value.text))") }
        return parts.joined(separator: "  ") + "  [\(status)]"
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "A type's properties.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The event type (name or id).") var type: String

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                let t = try await resolveType(env, type)
                let records = try await env.store.propertyDefinitions(ofType: t.id)
                if records.isEmpty {
                    out.line(
                        "\(t.name) has no properties. Add one: trendy types props add \(t.name) <key> --type number")
                }
                for r in records { out.line(PropsCommand.line(r.value, status: r.syncStatus.rawValue)) }
                out.document(records.map { Item(definition: $0.value, syncStatus: $0.syncStatus.rawValue) })
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add", abstract: "Give an event type a property (it syncs).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The event type (name or id).") var type: String
        @Argument(help: "Its key: a letter, then letters, digits or _.") var key: String
        @Option(name: .customLong("type"), help: "text, number, boolean, date, select, duration, url or email.")
        var kind: PropertyKind
        @Option(help: "What a person reads (the key when left out).") var label: String?
        @Option(help: "A select's options, separated by commas.") var options: String?
        @Option(help: "The value a new event gets when none is given.") var `default`: String?
        @Option(help: "Where it is listed (after the others when left out).") var order: Int?

        func validate() throws {
            if options != nil, kind != .select { throw ValidationError("--options is for --type select only") }
            if kind == .select, options == nil { throw ValidationError("a select needs --options a,b,c") }
        }

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                let t = try await resolveType(env, type)
                let definition = try await storeCall {
                    try await PropertyActions(env: env).add(
                        to: t, key: key, kind: kind, label: label, options: options.map(PropsCommand.split),
                        defaultText: `default`, order: order)
                }
                out.line("\(t.name) now has \(definition.key) (\(definition.propertyType.rawValue)); it syncs.")
                out.document(Item(definition: definition, syncStatus: "pending"))
            }
        }
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "edit", abstract: "Change a property's label, options, default or order (its key stays).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The event type (name or id).") var type: String
        @Argument(help: "The property's key.") var key: String
        @Option(help: "A new label.") var label: String?
        @Option(help: "A select's new options, separated by commas.") var options: String?
        @Option(help: "A new default.") var `default`: String?
        @Flag(help: "No default any more.") var clearDefault = false
        @Option(help: "Where it is listed.") var order: Int?

        func validate() throws {
            if `default` != nil, clearDefault {
                throw ValidationError("--default and --clear-default cannot go together")
            }
            guard label != nil || options != nil || `default` != nil || clearDefault || order != nil else {
                throw ValidationError("say what to change: --label, --options, --default, --clear-default or --order")
            }
        }

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                let t = try await resolveType(env, type)
                let definition = try await storeCall {
                    try await PropertyActions(env: env).edit(
                        key, of: t, label: label, options: options.map(PropsCommand.split), defaultText: `default`,
                        clearDefault: clearDefault, order: order)
                }
                out.line("Changed \(t.name)'s \(definition.key); it syncs.")
                out.document(Item(definition: definition, syncStatus: "pending"))
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rm", abstract: "Remove a property (events keep the values they hold under its key).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The event type (name or id).") var type: String
        @Argument(help: "The property's key.") var key: String

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                let t = try await resolveType(env, type)
                let definition = try await storeCall { try await PropertyActions(env: env).remove(key, of: t) }
                out.line("Removed \(t.name)'s \(definition.key); events keep their values.")
                out.document(["removed": definition.id.description, "key": definition.key])
            }
        }
    }

    /// `a, b,c` → `["a", "b", "c"]`.
    static func split(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    }
}
