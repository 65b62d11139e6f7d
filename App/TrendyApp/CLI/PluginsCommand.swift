import ArgumentParser
import Foundation

/// `trendy plugins`: the features this program is built from, with the commands and settings
/// each one owns. Reads nothing from the data directory.
struct PluginsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugins", abstract: "List the features this program is built from, their commands and settings.")

    @OptionGroup var global: GlobalOptions

    struct Document: Encodable {
        let program_settings: [PluginSetting]
        let plugins: [Listing]
    }

    struct Listing: Encodable {
        let name: String
        let summary: String
        let commands: [String]
        let settings: [PluginSetting]
    }

    /// What every command reads, whatever the plugins.
    static let programSettings: [PluginSetting] = [
        .init(.option, "--data-dir", "the data directory (also $TRENDY_DATA_DIR, else $XDG_DATA_HOME/trendy)"),
        .init(.environment, "TRENDY_DATA_DIR", "the data directory"),
        .init(.option, "--plain", "plain text for screen readers (also $TRENDY_PLAIN=1)"),
        .init(.option, "--json", "results as one JSON document"),
    ]

    /// The listing of `plugins`.
    static func listings(_ plugins: [any TrendyPlugin]) -> [Listing] {
        plugins.map { plugin in
            Listing(
                name: plugin.name, summary: plugin.summary,
                commands: plugin.commands.map { $0._commandName }, settings: plugin.settings)
        }
    }

    func run() async throws {
        let output = Output(json: global.json, style: global.style(environment: ProcessInfo.processInfo.environment))
        let listings = Self.listings(AppPlugins.active)
        output.line("program: every command")
        for setting in Self.programSettings {
            output.line("  \(setting.kind.rawValue) \(setting.name): \(setting.summary)")
        }
        for listing in listings {
            output.line("\(listing.name): \(listing.summary)")
            if !listing.commands.isEmpty { output.line("  commands: \(listing.commands.joined(separator: ", "))") }
            for setting in listing.settings {
                output.line("  \(setting.kind.rawValue) \(setting.name): \(setting.summary)")
            }
        }
        output.document(Document(program_settings: Self.programSettings, plugins: listings))
    }
}
