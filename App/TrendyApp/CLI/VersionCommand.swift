import ArgumentParser
import Foundation

/// `trendy version`: the program's version and build facts.
struct VersionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "version", abstract: "Show the version.")

    @OptionGroup var global: GlobalOptions

    struct Info: Encodable {
        let version: String
        let swift: String
        let platform: String
    }

    func run() async throws {
        let output = Output(json: global.json)
        #if os(Linux)
            let platform = "linux"
        #else
            let platform = "darwin"
        #endif
        #if swift(>=6.3)
            let swift = "6.3"
        #else
            let swift = "6.x"
        #endif
        let info = Info(version: TrendyVersion.current, swift: swift, platform: platform)
        output.line("trendy \(info.version) (swift \(info.swift), \(info.platform))")
        output.document(info)
    }
}
