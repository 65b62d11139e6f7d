import ArgumentParser
import Foundation
import TrendyFiles
import TrendySyncLive

struct RepairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repair",
        abstract: "Rebuild a damaged local database, keeping every unsynced change that can still be read.",
        discussion: """
            The damaged file is moved aside (trendy.sqlite.damaged-<time>, kept for a bug report); a fresh \
            database gets every row that can still be read, the outbox first among them (its entries keep \
            their idempotency keys, so nothing is sent twice). The next `trendy sync` downloads the rest.
            """)
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let paths = global.paths(environment: ProcessInfo.processInfo.environment)
        let out = Output(json: global.json)
        guard FileManager.default.fileExists(atPath: paths.database.path) else {
            out.line("There is no local database to repair.")
            out.document(["repaired": false])
            return
        }
        // Nobody else may use the database while it is replaced: wait for running commands to
        // finish (they hold the install lock shared), then keep new ones out until done.
        let install: ProcessLock.Hold
        do {
            install = try ProcessLock(file: paths.installLock).acquire(.exclusive, timeout: InstallBusy.wait)
        } catch {
            let cli = CLIError(
                code: .busy,
                message: "another trendy command is using this data directory; repair when it has finished",
                exitCode: .temporaryFailure)
            out.fail(cli)
            throw ExitCode(cli.exitCode.rawValue)
        }
        defer { install.release() }
        do {
            let report = try AppDatabase.repair(at: paths.database, plugins: AppPlugins.active)
            out.line("Rebuilt the database; the old file is kept at \(report.movedTo).")
            let total = report.copied.values.reduce(0, +)
            out.line("Kept \(total) row(s), \(report.pendingChanges) of them unsynced change(s).")
            if report.restoredFromOutbox > 0 {
                out.line("Rebuilt \(report.restoredFromOutbox) unsynced item(s) from their queued changes.")
            }
            if !report.unreadable.isEmpty {
                out.line("Could not read all of: \(report.unreadable.joined(separator: ", ")).")
            }
            out.line("Run `trendy sync` to download the rest from the server.")
            out.document(report)
        } catch {
            let cli = CLIError(
                code: .repairFailed, message: "cannot repair the database: \(error)", exitCode: .ioError)
            out.fail(cli)
            throw ExitCode(cli.exitCode.rawValue)
        }
    }
}
