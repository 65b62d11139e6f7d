import ArgumentParser
import Foundation
import TrendyAPI
import TrendyModels
import TrendySync

/// `trendy conflicts`: concurrent changes that lost, kept so nothing entered disappears.
struct ConflictsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conflicts", abstract: "Changes that lost to a concurrent one: list, restore, dismiss.",
        discussion: "Two devices changing the same field: the change that reaches the server last wins and the "
            + "other value is kept here. An entity deleted on one device while edited on another: the delete "
            + "wins and the edits are kept here. `restore` makes the losing value current again (an ordinary "
            + "edit that syncs; a deleted entity comes back under a new id with its last content).",
        subcommands: [List.self, Restore.self, Dismiss.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Open conflicts (the default).")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Also the dismissed and restored ones.") var all = false

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                let conflicts = try await env.store.conflicts(includeClosed: all)
                if conflicts.isEmpty { out.line(all ? "No conflicts." : "No open conflicts.") }
                let words = try await ConflictWords.load(env.store, ids: conflicts.map(\.conflict.entityId))
                for stored in conflicts { out.line(Self.describe(stored, words)) }
                out.document(conflicts.map(ConflictReport.init))
            }
        }

        /// One conflict in words, after its id (what `restore` and `dismiss` take); `--json` has
        /// every field as stored.
        static func describe(_ stored: StoredConflict, _ words: ConflictWords) -> String {
            let state =
                stored.state == .open ? "" : " [\(stored.state.rawValue.replacingOccurrences(of: "_", with: " "))]"
            let lines = words.lines(stored.conflict)
            return "\(stored.conflict.id)\(state)  \(lines[0])\n"
                + lines.dropFirst().map { "    \($0)" }.joined(separator: "\n")
        }
    }

    struct Restore: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "restore", abstract: "Make a conflict's losing value current again (it syncs).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The conflict's id (from `trendy conflicts`).") var id: String
        @Option(help: "For a deleted event: bring it back in this event type (name or id) — its own may be gone.")
        var type: String?

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                var into: UUIDv7?
                if let type { into = try await resolveType(env, type).id }
                let target = try await storeCall {
                    try await env.store.restoreConflict(id: id, newId: env.ids.next(), eventType: into)
                }
                await env.sync.localWriteHappened()
                out.line("Restored: \(target) holds the value again. Run `trendy sync` to send it.")
                out.document(["conflict": id, "entity_id": target, "state": ConflictState.restored.rawValue])
            }
        }
    }

    struct Dismiss: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "dismiss", abstract: "Close a conflict without changing anything.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The conflict's id.") var id: String

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                try await storeCall { try await env.store.dismissConflict(id: id) }
                out.line("Dismissed \(id).")
                out.document(["conflict": id, "state": ConflictState.dismissed.rawValue])
            }
        }
    }
}

/// A conflict as `--json` prints it.
struct ConflictReport: Encodable {
    let conflict: SyncConflict
    let state: ConflictState

    init(_ stored: StoredConflict) {
        conflict = stored.conflict
        state = stored.state
    }

    func encode(to encoder: any Encoder) throws {
        try conflict.encode(to: encoder)
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(state, forKey: .state)
    }

    enum Keys: String, CodingKey { case state }
}
