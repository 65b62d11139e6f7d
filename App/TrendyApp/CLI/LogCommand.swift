import ArgumentParser
import Foundation
import TrendyModels
import TrendySync

struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log", abstract: "Log an event now (or at --at); it syncs with the next `trendy sync`.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The event type's name or id.") var type: String
    @Option(help: "When: ISO-8601 or now.") var at: String?
    @Option(help: "A note.") var note: String?
    @Option(name: .customLong("prop"), help: "A property: key=value (repeat for more; defaults fill the rest).")
    var props: [String] = []
    @Flag(help: "Push it to the server right away.") var sync = false

    struct Result: Encodable {
        let id: String
        let type: String
        let timestamp: Date
        let synced: Bool
    }

    func run() async throws {
        try await CommandRunner(global).run { env, out in
            let t = try await resolveType(env, type)
            let time = try parseTime(at, now: env.now())
            let event = try await storeCall {
                let properties = try await PropertyActions(env: env).values(props, of: t, defaults: true)
                return try await EventActions(env: env).log(typeId: t.id, at: time, note: note, properties: properties)
            }
            out.line("Logged \(t.name) at \(TrendyJSON.formatDate(event.timestamp)).")
            var synced = false
            if sync {
                let run = await env.sync.sync(full: false)
                synced = run.outcome == .ok
                out.line(synced ? "Synced." : "Saved here; it will sync later (\(run.error ?? run.outcome.rawValue)).")
            }
            out.document(Result(id: event.id.description, type: t.name, timestamp: event.timestamp, synced: synced))
        }
    }
}
