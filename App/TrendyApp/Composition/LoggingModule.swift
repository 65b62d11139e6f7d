import Foundation
import TrendyLogging

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
