import ArgumentParser
import Foundation
import Logging
import TrendyAPI
import TrendyLogging

/// Options every command accepts.
public struct GlobalOptions: ParsableArguments, Sendable {
    /// The data directory option's name, shared with ``dataDirectory(in:)``.
    static let dataDirectoryOption = "data-dir"

    /// Overrides the data directory.
    @Option(
        name: .customLong(dataDirectoryOption),
        help: "Data directory (default: $TRENDY_DATA_DIR, else $XDG_DATA_HOME/trendy, else ~/.local/share/trendy).")
    public var dataDirectory: String?

    /// Log levels.
    @Option(
        name: .customLong("log-level"),
        help:
            "Log level, optionally per category: info | debug | warning,sync=debug (default: $TRENDY_LOG_LEVEL or info)."
    )
    public var logLevel: String?

    /// Console log format.
    @Option(name: .customLong("log-format"), help: "Console log format: human or json.")
    public var logFormat: LogFormatOption = .human

    /// A separate server instead of the embedded backend.
    @Option(
        name: .customLong("api-url"),
        help:
            "Trendy API server root, e.g. http://127.0.0.1:8080 (default: $TRENDY_API_URL, else the embedded backend).")
    public var apiURL: String?

    /// The auth server.
    @Option(
        name: .customLong("auth-url"), help: "Auth (GoTrue) root (default: $TRENDY_AUTH_URL, else <api-url>/auth/v1).")
    public var authURL: String?

    /// How long to wait for the server.
    @Option(
        name: .customLong("server-timeout"),
        help: ArgumentHelp(
            "Seconds a server may take to accept a connection and answer the health check before it counts as "
                + "not responding (default: $TRENDY_SERVER_TIMEOUT, else 2). A refused connection fails at once.",
            valueName: "seconds"))
    public var serverTimeout: Double?

    /// Output a screen reader reads well.
    @Flag(
        name: .long,
        help: "Plain text for screen readers: no box drawing, bars, colour or cursor movement (also $TRENDY_PLAIN=1).")
    public var plain = false

    /// Machine-readable output.
    @Flag(name: .long, help: "Print results as JSON on standard output.")
    public var json = false

    /// Creates default options.
    public init() {}

    /// The backend to talk to; `TRENDY_API_KEY` is sent as `apikey` (Supabase anon key).
    func backend(environment: [String: String]) throws(CLIError) -> BackendOptions {
        func url(_ text: String?, _ name: String) throws(CLIError) -> URL? {
            guard let text, !text.isEmpty else { return nil }
            guard let u = URL(string: text), let scheme = u.scheme, ["http", "https"].contains(scheme), u.host != nil
            else {
                throw CLIError(
                    code: .invalidUrl, message: "\(name) must be an http(s) URL, got '\(text)'", exitCode: .usage)
            }
            return u
        }
        let api = try url(apiURL ?? environment["TRENDY_API_URL"], "--api-url")
        let auth = try url(authURL ?? environment["TRENDY_AUTH_URL"], "--auth-url")
        if auth != nil, api == nil {
            throw CLIError(code: .invalidUrl, message: "--auth-url needs --api-url as well", exitCode: .usage)
        }
        return BackendOptions(
            apiURL: api, authURL: auth, apiKey: environment["TRENDY_API_KEY"], budget: try budget(environment))
    }

    /// The network budget from `--server-timeout` or `TRENDY_SERVER_TIMEOUT`.
    func budget(_ environment: [String: String]) throws(CLIError) -> NetworkBudget {
        let text = serverTimeout.map { String($0) } ?? environment["TRENDY_SERVER_TIMEOUT"]
        guard let text, !text.isEmpty else { return .standard }
        guard let seconds = Double(text), seconds.isFinite, seconds >= 0.05, seconds <= 600 else {
            throw CLIError(
                code: .invalidServerTimeout,
                message: "the server timeout must be a number of seconds from 0.05 to 600, got '\(text)'",
                exitCode: .usage)
        }
        return .responding(within: seconds)
    }

    /// Rejects an unreadable `--log-level` before anything runs.
    public func validate() throws {
        if let logLevel {
            do {
                _ = try LogConfiguration(parsing: logLevel)
            } catch {
                throw ValidationError(error.description)
            }
        }
    }

    /// The resolved install paths.
    func paths(environment: [String: String]) -> AppPaths {
        AppPaths.resolve(flag: dataDirectory, environment: environment)
    }

    /// The `--data-dir` value in raw arguments (the last one, as the parser takes it), read
    /// before any parsing so a launch can decide its route first; the parsed options are
    /// compared with it afterwards and win.
    public static func dataDirectory(in arguments: [String]) -> String? {
        let flag = "--" + dataDirectoryOption
        var found: String?
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            if argument == "--" { break }
            if argument == flag, index + 1 < arguments.endIndex {
                found = arguments[index + 1]
                index += 2
                continue
            }
            if argument.hasPrefix(flag + "=") { found = String(argument.dropFirst(flag.count + 1)) }
            index += 1
        }
        return found
    }

    /// How output may look (`--plain`, `TRENDY_PLAIN`, `NO_COLOR`, `TERM=dumb`, a terminal or not).
    func style(environment: [String: String]) -> TerminalStyle {
        TerminalStyle.resolve(plain: plain, environment: environment, isTerminal: isatty(STDERR_FILENO) == 1)
    }

    /// The resolved logging options; an explicit `--log-level` also applies to the console.
    func loggingOptions(environment: [String: String]) throws(CLIError) -> AppComposition.LoggingOptions {
        let spec = logLevel ?? environment["TRENDY_LOG_LEVEL"] ?? "info"
        let configuration: LogConfiguration
        do {
            configuration = try LogConfiguration(parsing: spec)
        } catch {
            throw CLIError(code: .invalidLogLevel, message: error.description, exitCode: .usage)
        }
        let consoleLevel = logLevel != nil ? configuration.defaultLevel : .warning
        return AppComposition.LoggingOptions(
            configuration: configuration, consoleFormat: logFormat.format, consoleLevel: consoleLevel,
            consoleColour: style(environment: environment).colour)
    }
}

/// `--log-format` values.
public enum LogFormatOption: String, ExpressibleByArgument, Sendable, CaseIterable {
    /// Readable lines.
    case human
    /// JSON lines.
    case json

    var format: LogFormat { self == .json ? .json : .human }
}
