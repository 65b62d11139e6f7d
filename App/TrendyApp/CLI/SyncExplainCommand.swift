import ArgumentParser
import Foundation
import TrendyAPI
import TrendyModels
import TrendySync

extension SyncCommand {
    /// `trendy sync explain <id>`: one entity's whole sync story on this install.
    struct Explain: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "explain",
            abstract: "Everything this install knows about one entity's sync, and what the next pass will do.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "An event, event type or geofence id.") var id: String

        func validate() throws {
            guard UUIDv7(id) != nil else { throw ValidationError("'\(id)' is not an id (a UUIDv7)") }
        }

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                let x = try await env.store.explain(entityId: id.lowercased())
                guard
                    x.entity != nil || !x.conflicts.isEmpty || x.tombstoned || x.mergedInto != nil
                        || x.revivedAs != nil
                else {
                    throw CLIError(
                        code: .notFound, message: "this install knows nothing of \(id)", exitCode: .dataError)
                }
                out.line("\(x.entity?.rawValue ?? "entity") \(x.entityId)")
                if let local = x.local {
                    out.line("  local: \(x.syncStatus?.rawValue ?? "?")  \(local)")
                } else {
                    let why =
                        if let merged = x.mergedInto {
                            " (the server had it already as \(merged): same type and time)"
                        } else if let revived = x.revivedAs {
                            " (deleted on the server when this install's create reached it; sent again as \(revived))"
                        } else if let type = x.deletedWithType {
                            " (deleted here with its type \(type))"
                        } else if x.tombstoned {
                            " (deleted here)"
                        } else { "" }
                    out.line("  local: none" + why)
                }
                out.line("  cursor: \(x.cursor.map(String.init) ?? "none (never synced)")")
                if x.changes.isEmpty { out.line("  outbox: nothing waiting") }
                for c in x.changes {
                    var line = "  outbox #\(c.seq): \(c.kind.rawValue)"
                    if !c.fields.isEmpty { line += " of \(c.fields.joined(separator: ", "))" }
                    line +=
                        "  \(c.state.rawValue), attempts \(c.attempts), sent \(c.sent ? "yes" : "no"), key \(c.idempotencyKey)"
                    line += ", base \(c.baseVersion.map(String.init) ?? "none")"
                    if let error = c.lastError { line += ", last error: \(error)" }
                    out.line(line)
                }
                let words = try await ConflictWords.load(env.store, ids: x.conflicts.map(\.conflict.entityId))
                for stored in x.conflicts { out.line("  conflict " + ConflictsCommand.List.describe(stored, words)) }
                out.line("  next: \(x.nextStep)")
                out.document(x)
            }
        }
    }
}
