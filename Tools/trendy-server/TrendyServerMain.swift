import ArgumentParser
import Foundation
import TrendyServer

/// `trendy-server`: the Trendy dev backend (GoTrue-compatible auth + Trendy API v1).
@main
struct TrendyServerMain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trendy-server",
        abstract: "Run the Trendy dev backend: GoTrue-compatible auth and the Trendy API v1 over SQLite.",
        discussion: "Secrets: TRENDY_JWT_SECRET (>= 32 bytes; otherwise generated and stored in the database), "
            + "TRENDY_ADMIN_TOKEN (enables /admin/v1/faults).")

    @OptionGroup var options: ServerOptions

    func run() async throws {
        try await options.run(environment: ProcessInfo.processInfo.environment) { line in
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }
    }
}
