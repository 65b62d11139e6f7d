import ArgumentParser
import Foundation
import TrendyAPI
import TrendyModels
import TrendySync
import TrendySyncLive

/// `trendy export`: the events, in the importer's own columns, so an export imports back.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write every event (or a filtered part) as CSV or JSON that imports back.",
        discussion: """
            Columns: type,timestamp,end_date,notes,all_day,external_id,location_name,latitude,longitude,time_zone, then one per property (each value as \
            `trendy log --prop` takes it) — the ones `trendy import` reads, so \
            importing an export into the same account adds nothing and into another makes the same events. \
            Newest first, as `trendy events list` shows them. Without -o, to standard output; with -o, the file is written beside its place and \
            moved there when complete (owner-only).
            """)
    @OptionGroup var global: GlobalOptions
    @Option(help: "csv or json.") var format = "csv"
    @Option(name: .shortAndLong, help: "The file to write (standard output when left out).") var output: String?
    @Option(help: "Only events of this type (name or id).") var type: String?
    @Option(help: "Only events at or after this ISO-8601 time.") var since: String?
    @Option(help: "Only events before this ISO-8601 time.") var until: String?
    @Flag(
        help: "Everything the account holds (types, properties, places, events with ids, open conflicts), versioned.")
    var archive = false

    func validate() throws {
        guard ["csv", "json"].contains(format) else { throw ValidationError("--format must be csv or json") }
        if archive, type != nil || since != nil || until != nil {
            throw ValidationError("--archive holds everything; leave out --type, --since and --until")
        }
    }

    func run() async throws {
        if archive {
            try await CommandRunner(global).run { env, out in
                let sink = try ExportSink(path: output)
                let tty = output != nil && out.style.cursorControl && !out.json
                let count = try await Archive.write(env.store, now: env.now(), { sink.write($0) }) { n in
                    if tty { FileHandle.standardError.write(Data("\r\u{1B}[2KExporting… \(n) events".utf8)) }
                }
                if tty { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
                try sink.finish()
                if let output {
                    out.line("Archived \(count) event(s) and everything else the account holds to \(output).")
                }
                out.document(["events": count])
            }
            return
        }
        try await CommandRunner(global).run { env, out in
            var typeId: UUIDv7?
            if let type { typeId = try await resolveType(env, type).id }
            let filter = EventFilter(
                typeId: typeId, since: try since.map { text throws(CLIError) in try parseTime(text, now: env.now()) },
                until: try until.map { text throws(CLIError) in try parseTime(text, now: env.now()) })
            let names = Dictionary(
                try await env.store.eventTypes().map { ($0.value.id, $0.value.name) }, uniquingKeysWith: { a, _ in a })
            let sink = try ExportSink(path: output)
            // One column per key in any case: a definition's spelling first, then the first seen.
            var keys: [String: String] = [:]
            for definition in try await env.store.propertyDefinitions(ofType: typeId) {
                keys[definition.value.key.lowercased()] = definition.value.key
            }
            for key in try await env.store.propertyKeysInUse(ofType: typeId) where keys[key.lowercased()] == nil {
                keys[key.lowercased()] = key
            }
            let tty = output != nil && out.style.cursorControl && !out.json
            let count = try await Self.write(
                env.store, filter, names, properties: keys.values.sorted(), json: format == "json", into: sink
            ) { n in
                if tty { FileHandle.standardError.write(Data("\r\u{1B}[2KExporting… \(n) events".utf8)) }
            }
            if tty { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
            try sink.finish()
            if let output { out.line("Exported \(count) event(s) to \(output).") }
        }
    }

    /// Writes the events `filter` lets through, newest first (as `events list` shows them), a page
    /// at a time from the time index: memory stays flat however many there are. How many.
    static func write(
        _ store: any LocalStore, _ filter: EventFilter, _ names: [UUIDv7: String], properties: [String] = [],
        json: Bool, into sink: ExportSink, progress: (Int) -> Void = { _ in }
    ) async throws -> Int {
        let header =
            [
                "type", "timestamp", "end_date", "notes", "all_day", "external_id", "location_name", "latitude",
                "longitude", "time_zone",
            ]
            + properties
        sink.write(json ? "[" : header.map(csvField).joined(separator: ",") + "\n")
        var written = 0
        let page = 1_000
        var filter = filter
        while true {
            let events = try await store.eventPage(offset: 0, limit: page, filter: filter)
            filter.after = events.last?.value
            for event in events.map(\.value) {
                sink.write(
                    json ? (written == 0 ? "\n" : ",\n") + jsonItem(event, names) : csvRow(event, names, properties))
                written += 1
            }
            progress(written)
            if events.count < page { break }
        }
        sink.write(json ? (written == 0 ? "]\n" : "\n]\n") : "")
        return written
    }

    static func csvRow(_ e: Event, _ names: [UUIDv7: String], _ properties: [String] = []) -> String {
        ([
            names[e.eventTypeId] ?? e.eventTypeId.description, TrendyJSON.formatDate(e.timestamp),
            e.endDate.map(TrendyJSON.formatDate) ?? "", e.notes ?? "", e.isAllDay ? "true" : "false",
            e.externalId ?? "", e.locationName ?? "", e.location.map { String($0.latitude) } ?? "",
            e.location.map { String($0.longitude) } ?? "", e.timeZone ?? "",
        ]
            + properties.map { key in
                (e.properties[key] ?? e.properties.first { $0.key.lowercased() == key.lowercased() }?.value)?.text ?? ""
            }).map(csvField).joined(separator: ",") + "\n"
    }

    /// A CSV field: quoted when it holds a comma, a quote or a line break (quotes doubled).
    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    static func jsonItem(_ e: Event, _ names: [UUIDv7: String]) -> String {
        var item: [String: Any] = [
            "type": names[e.eventTypeId] ?? e.eventTypeId.description, "timestamp": TrendyJSON.formatDate(e.timestamp),
            "all_day": e.isAllDay,
        ]
        if let end = e.endDate { item["end_date"] = TrendyJSON.formatDate(end) }
        if let notes = e.notes { item["notes"] = notes }
        if let external = e.externalId { item["external_id"] = external }
        if let place = e.locationName { item["location_name"] = place }
        if let at = e.location {
            item["latitude"] = at.latitude
            item["longitude"] = at.longitude
        }
        if let zone = e.timeZone { item["time_zone"] = zone }
        if !e.properties.isEmpty, let wire = try? FieldPatch.object(e.properties) { item["properties"] = wire }
        let data = (try? JSONSerialization.data(withJSONObject: item, options: [.sortedKeys])) ?? Data("{}".utf8)
        return "  " + String(decoding: data, as: UTF8.self)
    }
}

/// Where an export goes: standard output, or a file written beside its place and moved there
/// when complete (a failure leaves nothing half-written), owner-only.
final class ExportSink {
    let handle: FileHandle
    let temporary: URL?
    let destination: URL?

    init(path: String?) throws(CLIError) {
        guard let path else {
            handle = FileHandle.standardOutput
            temporary = nil
            destination = nil
            return
        }
        let url = URL(fileURLWithPath: path)
        let temp = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).partial")
        guard FileManager.default.createFile(atPath: temp.path, contents: nil, attributes: [.posixPermissions: 0o600]),
            let handle = try? FileHandle(forWritingTo: temp)
        else {
            throw CLIError(
                code: .cannotWrite, message: "cannot write \(path): is the folder there, and may you write in it?",
                exitCode: .cannotCreate)
        }
        self.handle = handle
        temporary = temp
        destination = url
    }

    /// What waits to be written: one write per 64 KB, not one per row.
    private var buffer = Data()

    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 65_536 { flush() }
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        handle.write(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    /// The file in its place (standard output: flushed).
    func finish() throws(CLIError) {
        flush()
        guard let temporary, let destination else { return }
        try? handle.close()
        // rename(2): the finished file takes the place at once, replacing what was there.
        guard rename(temporary.path, destination.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw CLIError(
                code: .cannotWrite, message: "cannot write \(destination.path): \(reason)", exitCode: .cannotCreate)
        }
    }

    deinit {
        if let temporary { try? FileManager.default.removeItem(at: temporary) }
    }
}
