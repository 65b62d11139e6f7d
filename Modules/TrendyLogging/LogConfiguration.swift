import Foundation
import Logging

/// Levels for the app's loggers: one default and optional per-category overrides.
public struct LogConfiguration: Sendable, Equatable {
    /// The level for categories without an override.
    public var defaultLevel: Logger.Level
    /// Per-category overrides, by category name.
    public var categoryLevels: [String: Logger.Level]

    /// Creates a configuration.
    public init(defaultLevel: Logger.Level = .info, categoryLevels: [String: Logger.Level] = [:]) {
        self.defaultLevel = defaultLevel
        self.categoryLevels = categoryLevels
    }

    /// The level in force for `category`.
    public func level(for category: LogCategory) -> Logger.Level {
        categoryLevels[category.name] ?? defaultLevel
    }

    /// Parses `info`, `sync=debug` or `warning,sync=debug,auth=trace`.
    public init(parsing spec: String) throws(LogConfigurationError) {
        self.init()
        for part in spec.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !part.isEmpty {
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            if pieces.count == 1 {
                defaultLevel = try Self.parseLevel(pieces[0])
            } else {
                guard !pieces[0].isEmpty else { throw .unknownLevel(part) }
                categoryLevels[pieces[0].lowercased()] = try Self.parseLevel(pieces[1])
            }
        }
    }

    static func parseLevel(_ text: String) throws(LogConfigurationError) -> Logger.Level {
        let t = text.lowercased()
        if t == "warn" { return .warning }
        guard let level = Logger.Level(rawValue: t) else { throw .unknownLevel(text) }
        return level
    }
}

/// A log level specification that could not be read.
public enum LogConfigurationError: Error, Equatable, CustomStringConvertible {
    /// The named level is not one of trace, debug, info, notice, warning, error, critical.
    case unknownLevel(String)

    /// A readable explanation.
    public var description: String {
        switch self {
        case .unknownLevel(let text):
            return
                "unknown log level '\(text)': use trace, debug, info, notice, warning, error or critical, optionally per category as sync=debug"
        }
    }
}
