import ArgumentParser
import Foundation
import GRDB
import Logging
import TrendyFiles
import TrendyLogging
import TrendyModels
import TrendySyncLive

/// Shared plumbing for commands: builds the environment, prints results in human or JSON form,
/// turns errors into a message and a documented exit code.
struct CommandRunner {
    let global: GlobalOptions
    let environment: [String: String]

    init(_ global: GlobalOptions, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.global = global
        self.environment = environment
    }

    /// Runs `body` with a live environment, then flushes logs; errors exit non-zero.
    func run(_ body: (AppEnvironment, Output) async throws -> Void) async throws {
        let output = Output(json: global.json, style: global.style(environment: environment))
        let env: AppEnvironment
        do {
            env = try AppComposition.live(
                paths: global.paths(environment: environment),
                logging: try global.loggingOptions(environment: environment),
                backend: try global.backend(environment: environment))
        } catch let error as CLIError {
            output.fail(error)
            throw ExitCode(error.exitCode.rawValue)
        } catch  where error is NoServerConfigured || error is AppComposition.MissingPlugin {
            let cli = CLIError(code: .configuration, message: String(describing: error), exitCode: .configuration)
            output.fail(cli)
            throw ExitCode(cli.exitCode.rawValue)
        } catch  where Self.isBusy(error) {
            output.fail(Self.busy(error))
            throw ExitCode(TrendyExitCode.temporaryFailure.rawValue)
        } catch  where LocalDatabaseRepair.isDamage(error) {
            output.fail(Self.damaged(error))
            throw ExitCode(TrendyExitCode.ioError.rawValue)
        } catch {
            let cli = CLIError(
                code: .dataDirectoryUnusable,
                message: "cannot use the data directory: \(error.localizedDescription)", exitCode: .cannotCreate)
            output.fail(cli)
            throw ExitCode(cli.exitCode.rawValue)
        }
        var failure: ExitCode?
        do {
            try await body(env, output)
        } catch let error as CLIError {
            env.logger(.app).notice("Command failed", metadata: ["code": .string(error.code.rawValue)])
            output.fail(error)
            failure = ExitCode(error.exitCode.rawValue)
        } catch let error as ExitCode {
            failure = error
        } catch  where Self.isBusy(error) {
            env.logger(.app).notice("Command found the install busy", metadata: ["error": .error(error)])
            output.fail(Self.busy(error))
            failure = ExitCode(TrendyExitCode.temporaryFailure.rawValue)
        } catch  where LocalDatabaseRepair.isDamage(error) {
            env.logger(.data).error("The local database is damaged", metadata: ["error": .error(error)])
            output.fail(Self.damaged(error))
            failure = ExitCode(TrendyExitCode.ioError.rawValue)
        } catch {
            env.logger(.app).error("Command failed", metadata: ["error": .error(error)])
            let cli = CLIError(code: .internalError, message: String(describing: error), exitCode: .software)
            output.fail(cli)
            failure = ExitCode(cli.exitCode.rawValue)
        }
        await env.close()
        env.logs.shutdown()
        if let failure { throw failure }
    }
}

extension CommandRunner {
    /// Whether `error` means another process holds the install: a lock that stayed taken, or a
    /// database that stayed busy or locked for longer than the busy timeout.
    static func isBusy(_ error: any Error) -> Bool {
        if error is InstallBusy { return true }
        if case ProcessLock.Failure.busy? = error as? ProcessLock.Failure { return true }
        if let db = error as? DatabaseError { return db.resultCode == .SQLITE_BUSY || db.resultCode == .SQLITE_LOCKED }
        return false
    }

    /// What a person reads when the install is busy: exit 75, try again.
    static func busy(_ error: any Error) -> CLIError {
        let reason =
            (error as? InstallBusy)?.description
            ?? "another trendy command is writing to this data directory and did not finish in time; try again"
        return CLIError(code: .busy, message: reason, exitCode: .temporaryFailure)
    }

    /// What a person reads when the local database is damaged, and the way out.
    static func damaged(_ error: any Error) -> CLIError {
        CLIError(
            code: .databaseDamaged,
            message: "the local database is damaged (\(error)). Run `trendy repair`: it keeps every unsynced "
                + "change it can still read and downloads the rest from the server with the next `trendy sync`.",
            exitCode: .ioError)
    }
}

/// Writes command results: human text, or one JSON document with `--json`.
struct Output: Sendable {
    let json: Bool
    /// How human text may look (plain for screen readers, cursor control on a terminal).
    var style: TerminalStyle = .rich

    /// Prints a line for people (suppressed with `--json`); in plain mode without arrows and
    /// symbols (D40).
    func line(_ text: String) {
        guard !json else { return }
        print(human(text))
    }

    /// `text` as this output shows it to people.
    func human(_ text: String) -> String {
        guard style.plain else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { ScreenRenderer.plainWords(String($0)) }.joined(separator: "\n")
    }

    /// Prints the JSON document (only with `--json`).
    func document(_ value: some Encodable) {
        guard json else { return }
        let encoder = TrendyJSON.encoder()
        encoder.outputFormatting.insert(.prettyPrinted)
        if let data = try? encoder.encode(value) {
            print(String(decoding: data, as: UTF8.self))
        }
    }

    /// Reports an error: to stderr for people, as one `{"error": {...}, "result": ...}` document
    /// on stdout with `--json` (`result` only when the command had one).
    func fail(_ error: CLIError) {
        if json {
            document(ErrorDocument(code: error.code.rawValue, message: error.message, result: error.result))
        } else {
            FileHandle.standardError.write(Data("trendy: \(human(error.message))\n".utf8))
        }
    }
}

/// `{"error": {"code", "message"}, "result"?}`: the one document a failed `--json` command prints.
struct ErrorDocument: Encodable {
    let code: String
    let message: String
    let result: (any Encodable & Sendable)?

    enum Keys: String, CodingKey { case error, result }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(["code": code, "message": message], forKey: .error)
        if let result { try result.encode(to: container.superEncoder(forKey: .result)) }
    }
}
