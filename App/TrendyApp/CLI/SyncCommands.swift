import ArgumentParser
import Foundation
import TrendyAuth
import TrendyModels
import TrendySync
import TrendySyncLive

/// Shows sync progress on standard error while `body` runs: a live line on a terminal
/// (`Syncing 1,200 of 5,000`), a line per phase change otherwise. Silent with `--json`.
func withProgress<T: Sendable>(_ env: AppEnvironment, _ out: Output, _ body: () async -> T) async -> T {
    guard !out.json else { return await body() }
    // The first line shows what is known (last sync, pending) rather than "Not synced yet".
    await env.sync.refreshCounts()
    let tty = out.style.cursorControl
    let updates = env.sync.statusUpdates()
    let printer = Task {
        var last: (line: String, phase: String, tenth: Int) = ("", "", -1)
        for await status in updates {
            let line = out.human(status.bannerText)
            var tenth = -1
            if case .pushing(let done, let total) = status.phase { tenth = total > 0 ? done * 10 / total : 10 }
            if tty {
                if line != last.line { FileHandle.standardError.write(Data("\r\u{1B}[2K\(line)".utf8)) }
            } else if status.phase.name != last.phase || tenth != last.tenth {
                // Without a terminal: one line per phase, and per tenth of a push.
                FileHandle.standardError.write(Data("\(line)\n".utf8))
            }
            last = (line, status.phase.name, tenth)
        }
    }
    let result = await body()
    printer.cancel()
    if tty { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
    return result
}

/// The status as `trendy status --json` prints it.
struct StatusReport: Encodable {
    let phase: String
    let banner: String
    let pending: Int
    let failed: Int
    let last_sync: Date?
    let last_error: String?
    let breaker_open_until: Date?
    let consecutive_failures: Int
    let conflicts: Int
    let failed_changes: [FailedChange]
    /// A first download (or a recovery's) cut short: the events it has stored (D69).
    let download_cut_short: Int?

    init(_ s: SyncStatus, failed: [FailedChange], downloadCutShort: Int? = nil) {
        download_cut_short = downloadCutShort
        phase = s.phase.name
        banner = s.bannerText
        pending = s.pendingCount
        self.failed = s.failedCount
        last_sync = s.lastSuccessfulSync
        last_error = s.lastError
        if case .rateLimited(let until) = s.phase { breaker_open_until = until } else { breaker_open_until = nil }
        consecutive_failures = s.consecutiveFailures
        conflicts = s.conflictCount
        failed_changes = failed
    }
}

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync", abstract: "Push local changes and pull the server's.",
        subcommands: [Run.self, History.self, Explain.self], defaultSubcommand: Run.self)

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "run", abstract: "Run a sync pass (the default).")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Download everything again (local pending changes are kept and pushed).") var full = false
        @Flag(help: "Keep syncing every --interval seconds until interrupted.") var watch = false
        @Option(help: "Seconds between passes with --watch.") var interval = 10
        @Flag(help: "Push pending changes, then jump the cursor to the server's latest without pulling anything.")
        var skipToLatest = false
        @Flag(help: "Put failed changes back in the queue, and try changes waiting after a server error now.")
        var retryFailed = false

        func validate() throws {
            guard interval >= 1 else { throw ValidationError("--interval must be at least 1") }
            guard !(full && skipToLatest) else {
                throw ValidationError("--full and --skip-to-latest exclude each other")
            }
        }

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                guard let session = env.auth.currentSession else { throw AuthError.notSignedIn.cli }
                try await rememberOwnerEmail(env, session)
                if retryFailed {
                    let n = try await env.store.retryFailed()
                    out.line("Retrying \(n) failed change(s).")
                }
                var run = await withProgress(env, out) {
                    skipToLatest ? await env.sync.skipToLatest() : await env.sync.sync(full: full)
                }
                report(run, env, out)
                await env.syncFinished(run)
                while watch {
                    try await Task.sleep(for: .seconds(interval))
                    run = await withProgress(env, out) { await env.sync.sync(full: false) }
                    report(run, env, out)
                    await env.syncFinished(run)
                }
                guard run.outcome != .ok else {
                    out.document(run)
                    return
                }
                var failure = Self.failure(run, signedOut: env.auth.currentUserId == nil)
                failure.result = run
                throw failure
            }
        }

        /// What a pass that did not end `ok` tells the person, and how the command exits.
        /// `signedOut`: the install has no session after the pass — a pass that failed or was
        /// superseded because the server ended the session (a password changed on another device,
        /// signed out everywhere) says so with 77, not as a sync failure (outside tester: exit 1);
        /// so does one that ended waiting because the session's refresh was refused (a copied data
        /// directory whose refresh token the original had used: 75, "waits to retry").
        static func failure(_ run: SyncRun, signedOut: Bool = false) -> CLIError {
            if signedOut, [.error, .superseded, .waiting].contains(run.outcome) {
                return AuthError.sessionRevoked(code: "session_revoked").cli
            }
            switch run.outcome {
            case .offline:
                return CLIError(
                    code: .offline,
                    message: "offline: \(run.error ?? "the server cannot be reached"). Your changes stay queued; "
                        + "run `trendy sync` again when the server is back.",
                    exitCode: .unavailable)
            case .rateLimited:
                return CLIError(
                    code: .rateLimited, message: "the server is rate limiting; try again later",
                    exitCode: .temporaryFailure)
            case .unavailable:
                return CLIError(
                    code: .serverUnavailable,
                    message: (run.error ?? "the server is not available") + ". Your changes stay queued.",
                    exitCode: .unavailable)
            case .waiting:
                // Every transient failure, whatever the pass was doing (issue 30): one exit code.
                return CLIError(
                    code: .waitingToRetry,
                    message: "the sync waits to retry after a temporary failure ("
                        + (run.error ?? "a server error")
                        + (run.pushed > 0
                            ? "); what was sent is kept and the rest stays queued. "
                            : "); nothing is lost: what was downloaded is kept and your changes stay queued. ")
                        + "Run `trendy sync` again later "
                        + "(`--retry-failed` tries at once).",
                    exitCode: .temporaryFailure)
            case .signedOut:
                return AuthError.notSignedIn.cli
            case .busy:
                return CLIError(
                    code: .busy, message: run.error ?? "another trendy process is syncing; try again later",
                    exitCode: .temporaryFailure)
            case .ok, .error, .superseded:
                return CLIError(code: .syncFailed, message: run.error ?? run.outcome.rawValue, exitCode: .failure)
            }
        }

        func report(_ run: SyncRun, _ env: AppEnvironment, _ out: Output) {
            let status = env.sync.status
            out.line(
                "Sync \(run.outcome): pushed \(run.pushed), pulled \(run.pulled) in \(String(format: "%.2f", run.duration)) s. "
                    + status.bannerText)
        }
    }

    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "history", abstract: "The last 10 sync passes.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                let runs = try await env.sync.history()
                if runs.isEmpty { out.line("No sync yet.") }
                for r in runs {
                    out.line(
                        "\(TrendyJSON.formatDate(r.startedAt))  \(r.outcome)  pushed \(r.pushed)  pulled \(r.pulled)  "
                            + "\(String(format: "%.2f", r.duration)) s" + (r.error.map { "  \($0)" } ?? ""))
                }
                out.document(runs)
            }
        }
    }
}

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Pending and failed changes, last sync, rate limiting, last error.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await CommandRunner(global).run { env, out in
            let summary = try await SyncStatusSummary.load(engine: env.sync, store: env.store)
            let (status, failed) = (summary.status, summary.failed)
            out.line(status.bannerText)
            out.line(
                "Pending: \(status.pendingCount)  Failed: \(status.failedCount)  Conflicts: \(status.conflictCount)")
            if status.conflictCount > 0 {
                out.line("See them with `trendy conflicts`; `trendy conflicts restore <id>` brings a lost value back.")
            }
            if let last = status.lastSuccessfulSync { out.line("Last sync: \(TrendyJSON.formatDate(last))") }
            if let stored = summary.downloadCutShort {
                out.line(
                    "Download: unfinished, \(stored) event(s) stored so far; the next `trendy sync` finishes it.")
            }
            if let error = status.lastError { out.line("Last error: \(error)") }
            for f in failed { out.line("  failed \(f.entity.rawValue) \(f.entityId) (\(f.kind.rawValue)): \(f.error)") }
            if failed.contains(where: { $0.entity == .event }) {
                out.line(
                    "Fix a refused event with `trendy events edit <id>` (it is sent again, edited; `--type` moves one "
                        + "whose type was deleted) or drop it with `trendy events rm <id>`; `trendy sync --retry-failed` "
                        + "sends every failed change again.")
            }
            out.document(StatusReport(status, failed: failed, downloadCutShort: summary.downloadCutShort))
        }
    }
}

extension ImportCommand {
    /// `trendy import <archive>`: checked whole, then what is not here is added.
    static func importArchive(_ url: URL, _ env: AppEnvironment, _ out: Output, tty: Bool) async throws {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw CLIError(code: .noInput, message: "cannot read \(url.path)", exitCode: .noInput)
        }
        let report: ArchiveImport.Report
        do {
            report = try await storeCall {
                try await ArchiveImport(store: env.store).run(data) { n in
                    if tty { FileHandle.standardError.write(Data("\r\u{1B}[2KImporting… \(n) events".utf8)) }
                }
            }
        } catch let refusal as Archive.Refusal {
            throw CLIError(code: .badFile, message: refusal.description, exitCode: .dataError)
        }
        if tty { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
        await env.sync.localWriteHappened()
        out.line(
            "Imported the archive: \(report.eventsAdded) event(s) added (\(report.eventsThere) already here), "
                + "\(report.typesAdded) type(s) (\(report.typesThere) here), \(report.propertiesAdded) propert"
                + "\(report.propertiesAdded == 1 ? "y" : "ies") (\(report.propertiesThere) here), \(report.placesAdded) "
                + "place(s) (\(report.placesThere) here)."
                + (report.conflictsCarried > 0
                    ? " Its \(report.conflictsCarried) open conflict(s) are in the file, not imported." : ""))
        out.document(report)
    }
}

struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract:
            "Import events from a .csv or .json file (type,timestamp[,end_date,notes,all_day,external_id,<property>…]).",
        discussion: "Unknown event types are created. Malformed rows are reported with their line and skipped; "
            + "importing the same file twice adds nothing.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The file.") var file: String

    struct Result: Encodable {
        let rows: Int
        let imported: Int
        let duplicates: Int
        let created_types: [String]
        let errors: [EventImporter.RowError]
        let unknown_columns: [String]
    }

    func run() async throws {
        try await CommandRunner(global).run { env, out in
            let url = URL(fileURLWithPath: file)
            guard FileManager.default.isReadableFile(atPath: url.path) else {
                throw CLIError(code: .noInput, message: "cannot read \(url.path)", exitCode: .noInput)
            }
            let tty = out.style.cursorControl && !out.json
            if let head = try? FileHandle(forReadingFrom: url).read(upToCount: 4_096), Archive.looksLikeArchive(head) {
                try await Self.importArchive(url, env, out, tty: tty)
                return
            }
            let report: ImportEvents.Report
            do {
                report = try await storeCall {
                    try await ImportEvents(store: env.store, ids: env.ids).run(url) { read in
                        if tty { FileHandle.standardError.write(Data("\r\u{1B}[2KImporting… \(read) rows".utf8)) }
                    }
                }
            } catch let error as EventImporter.FileError {
                throw CLIError(code: .badFile, message: String(describing: error), exitCode: .dataError)
            }
            if tty { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
            for e in report.errors.prefix(20) { FileHandle.standardError.write(Data("trendy: skipped \(e)\n".utf8)) }
            if report.errorCount > 20 {
                FileHandle.standardError.write(Data("trendy: … and \(report.errorCount - 20) more\n".utf8))
            }
            for named in report.unknownColumns {
                let (type, column) = (named.prefix { $0 != ":" }, named.drop { $0 != ":" }.dropFirst(2))
                FileHandle.standardError.write(
                    Data(
                        ("trendy: \(column) is not a property of \(type): its values were kept as text "
                            + "(`trendy types props add \(type) \(column) --type …` defines it)\n").utf8))
            }
            out.line(
                "Imported \(report.imported) event(s) from \(report.rows) row(s); "
                    + "\(report.duplicates) duplicate(s), \(report.errorCount) malformed row(s) skipped."
                    + (report.createdTypes.isEmpty
                        ? "" : " Created types: \(report.createdTypes.joined(separator: ", ")).")
                    + (report.imported > 0 ? " Run `trendy sync` to upload." : ""))
            out.document(
                Result(
                    rows: report.rows, imported: report.imported, duplicates: report.duplicates,
                    created_types: report.createdTypes, errors: report.errors, unknown_columns: report.unknownColumns))
        }
    }
}
