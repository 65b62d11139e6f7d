import ArgumentParser
import Foundation
import TrendyLogging

/// Logging: the log files and `trendy logs`; flushes on background.
public struct LoggingPlugin: TrendyPlugin {
    /// Creates the plugin.
    public init() {}

    /// The plugin's name.
    public var name: String { "logging" }
    /// What the feature does.
    public var summary: String { "Structured logs per category, rotated files, redaction." }
    /// The commands the feature owns.
    public var commands: [any ParsableCommand.Type] { [LogsCommand.self] }
    /// What the feature reads.
    public var settings: [PluginSetting] {
        [
            .init(.file, "logs/", "rotated JSON log files, owner-only"),
            .init(.environment, "TRENDY_LOG_LEVEL", "log level, optionally per category"),
            .init(.option, "--log-level", "the same, for one command"),
            .init(.option, "--log-format", "console format: human or json"),
        ]
    }

    /// Builds the feature's live parts.
    public func install(into app: inout AppAssembly) {
        app.modules.append(LoggingModule(logs: app.platform.logs, directory: app.platform.paths.logDirectory))
    }
}

/// Logging's contribution to the lifecycle: flush on background, report where logs go.
struct LoggingModule: AppModule {
    let logs: LogSystem
    let directory: URL

    var name: String { "logging" }

    func didEnterBackground() async { logs.flush() }

    func health() async -> ModuleHealth {
        let writable = FileManager.default.isWritableFile(atPath: directory.path)
        return ModuleHealth(
            module: name, ok: writable,
            details: ["log_directory": directory.path, "writable": String(writable)])
    }
}
