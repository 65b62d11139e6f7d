/// The `trendy` program's exit codes (documented in docs/cli.md). They follow sysexits.h.
public enum TrendyExitCode: Int32, Sendable, CaseIterable {
    /// Done.
    case success = 0
    /// Failed for a reason not listed below.
    case failure = 1
    /// Bad arguments or options.
    case usage = 64
    /// Bad input data (malformed file, invalid value).
    case dataError = 65
    /// An input file does not exist or cannot be read.
    case noInput = 66
    /// The server cannot be reached (offline); nothing was lost.
    case unavailable = 69
    /// An internal error.
    case software = 70
    /// An output file cannot be created.
    case cannotCreate = 73
    /// Reading or writing failed.
    case ioError = 74
    /// Temporary: rate limited or busy; try again later.
    case temporaryFailure = 75
    /// Not signed in, or the credentials were rejected.
    case noPermission = 77
    /// The configuration is invalid.
    case configuration = 78
}

/// An error the CLI reports to a person: a message, a stable code for scripts, an exit code.
public struct CLIError: Error, Sendable, CustomStringConvertible {
    /// A stable machine-readable code, e.g. `invalid_log_level` (``CLIErrorCode``).
    public var code: CLIErrorCode
    /// What went wrong and what to do, for a person.
    public var message: String
    /// How the process exits.
    public var exitCode: TrendyExitCode
    /// What the command did before it failed, printed with the error as one JSON document under
    /// `result` (`--json`), e.g. the sync run that ended offline.
    public var result: (any Encodable & Sendable)?

    /// Creates an error.
    public init(
        code: CLIErrorCode, message: String, exitCode: TrendyExitCode, result: (any Encodable & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.exitCode = exitCode
        self.result = result
    }

    /// The message.
    public var description: String { message }
}

extension CLIError {
    /// A command needs a feature this program is built without (exit 78).
    static func featureUnavailable(_ message: String) -> CLIError {
        CLIError(code: .featureUnavailable, message: message, exitCode: .configuration)
    }
}
