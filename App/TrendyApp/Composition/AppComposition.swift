import Foundation
import Logging
import TrendyLogging
import TrendyModels

/// The composition root: the one place that constructs live implementations.
public enum AppComposition {
    /// How the app's logging should be set up.
    public struct LoggingOptions: Sendable {
        /// Levels per category (for the file and, when `consoleLevel` is nil, warnings on the console).
        public var configuration: LogConfiguration
        /// Console format.
        public var consoleFormat: LogFormat
        /// Lowest level shown on the console; by default warnings and errors only.
        public var consoleLevel: Logger.Level

        /// Creates options.
        public init(configuration: LogConfiguration, consoleFormat: LogFormat, consoleLevel: Logger.Level) {
            self.configuration = configuration
            self.consoleFormat = consoleFormat
            self.consoleLevel = consoleLevel
        }
    }

    /// Builds the live environment for the install at `paths`.
    public static func live(paths: AppPaths, logging: LoggingOptions) throws -> AppEnvironment {
        try paths.prepare()
        let fileSink = RotatingFileSink(directory: paths.logDirectory, format: .json)
        let console = ConsoleSink(format: logging.consoleFormat, minimumLevel: logging.consoleLevel)
        let logs = LogSystem(configuration: logging.configuration, sinks: [fileSink, console])
        let modules: [any AppModule] = [
            LoggingModule(logs: logs, directory: paths.logDirectory)
        ]
        return AppEnvironment(
            paths: paths, logs: logs, ids: UUIDv7Generator(), now: Date.init, modules: modules)
    }
}
