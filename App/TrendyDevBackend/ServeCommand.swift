import ArgumentParser
import Foundation
import TrendyApp
import TrendyServer

/// `trendy serve`: runs the dev backend in the foreground (database in the data directory).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Trendy dev backend (auth + API) until interrupted.",
        discussion: "The database defaults to <data-dir>/server.sqlite. Secrets: TRENDY_JWT_SECRET, TRENDY_ADMIN_TOKEN."
    )

    @Option(
        name: .customLong("data-dir"),
        help: "Data directory (default: $TRENDY_DATA_DIR, else $XDG_DATA_HOME/trendy, else ~/.local/share/trendy).")
    var dataDirectory: String?

    @OptionGroup var server: ServerOptions

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let paths = AppPaths.resolve(flag: dataDirectory, environment: environment)
        do {
            try paths.prepare()
        } catch {
            FileHandle.standardError.write(
                Data("trendy: cannot use the data directory: \(error.localizedDescription)\n".utf8))
            throw ExitCode(TrendyExitCode.cannotCreate.rawValue)
        }
        let defaultDatabase = paths.dataDirectory.appendingPathComponent("server.sqlite").path
        do {
            try await server.run(environment: environment, defaultDatabase: defaultDatabase) { line in
                FileHandle.standardOutput.write(Data((line + "\n").utf8))
            }
        } catch {
            FileHandle.standardError.write(Data("trendy: the server stopped: \(error)\n".utf8))
            throw ExitCode(TrendyExitCode.unavailable.rawValue)
        }
    }
}
