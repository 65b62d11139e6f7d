import ArgumentParser
import Foundation
import Logging
import TrendyLogging

/// `trendy logs path|tail|export`.
struct LogsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logs", abstract: "Find, read and export the log files.",
        subcommands: [Path.self, Tail.self, Export.self])

    struct Path: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print where the log files are.")
        @OptionGroup var global: GlobalOptions

        struct Result: Encodable {
            let directory: String
            let active_file: String
            let files: [String]
        }

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                let dir = LogDirectory(directory: env.paths.logDirectory, redactor: env.logs.redactor)
                out.line(dir.directory.path)
                out.document(
                    Result(
                        directory: dir.directory.path, active_file: dir.activeFile.path,
                        files: dir.files().map(\.path)))
            }
        }
    }

    struct Tail: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the newest log lines (redacted).")
        @OptionGroup var global: GlobalOptions
        @Option(name: [.customShort("n"), .long], help: "How many lines.") var lines = 50

        func validate() throws {
            guard lines > 0 else { throw ValidationError("--lines must be at least 1") }
        }

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                env.logs.flush()
                let dir = LogDirectory(directory: env.paths.logDirectory, redactor: env.logs.redactor)
                let tail: [String]
                do {
                    tail = try dir.tail(lines)
                } catch {
                    throw CLIError(
                        code: .logUnreadable, message: "cannot read the log files: \(error.localizedDescription)",
                        exitCode: .ioError)
                }
                for line in tail { out.line(line) }
                out.document(["lines": tail])
            }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Bundle the (redacted) log files into one file for a bug report.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The file to write.") var file: String

        struct Result: Encodable {
            let file: String
            let files: Int
            let bytes: Int
        }

        func run() async throws {
            try await CommandRunner(global).run { env, out in
                env.logger(.app).info("Exporting logs")
                env.logs.flush()
                let dir = LogDirectory(directory: env.paths.logDirectory, redactor: env.logs.redactor)
                let destination = URL(fileURLWithPath: file)
                let summary: LogDirectory.ExportSummary
                do {
                    summary = try dir.export(to: destination, appVersion: TrendyVersion.current, now: env.now())
                } catch {
                    throw CLIError(
                        code: .exportFailed,
                        message: "cannot write \(destination.path): \(error.localizedDescription)",
                        exitCode: .cannotCreate)
                }
                out.line(
                    "Exported \(summary.fileCount) log file(s), \(summary.byteCount) bytes, to \(summary.destination.path)"
                )
                out.document(Result(file: summary.destination.path, files: summary.fileCount, bytes: summary.byteCount))
            }
        }
    }
}
