/// The stable, machine-readable codes `trendy` prints in `{"error": {"code": …}}` (docs/cli.md
/// lists every one with its exit code). A code is a promise to scripts: it is never renamed, and a
/// new failure gets a new code here — never a string written at the call site.
public struct CLIErrorCode: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The code as printed.
    public let rawValue: String

    /// A code. Only the static members below are printed; this exists for decoding.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The code as printed.
    public var description: String { rawValue }

    /// Encodes as the bare string.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }

    /// Decodes the bare string.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    /// Exit 65: a place name matches more than one geofence: use its id.
    public static let ambiguousGeofence = CLIErrorCode(rawValue: "ambiguous_geofence")

    /// Exit 1: the running `trendy app` refused a location handed to it.
    public static let appRefused = CLIErrorCode(rawValue: "app_refused")
    /// Exit 75: the running `trendy app` did not take a request in time (suspended); nothing was done.
    public static let appNotAnswering = CLIErrorCode(rawValue: "app_not_answering")

    /// Exit 64: a command that deletes more than it names (a type with its events) needs `--yes`
    /// without a terminal to ask on.
    public static let confirmationNeeded = CLIErrorCode(rawValue: "confirmation_needed")

    /// Exit 65: an import file is malformed (not CSV/JSON of events, a bad header).
    public static let badFile = CLIErrorCode(rawValue: "bad_file")

    /// Exit 73: the export file could not be written (nothing was left half-written).
    public static let cannotWrite = CLIErrorCode(rawValue: "cannot_write")

    /// Exit 75: another `trendy` command is busy with this install (a sync, a repair): try again.
    public static let busy = CLIErrorCode(rawValue: "busy")

    /// Exit 73: a region event a background launch brought could not be stored.
    public static let cannotCapture = CLIErrorCode(rawValue: "cannot_capture")

    /// Exit 1: onboarding cannot go back from this step.
    public static let cannotGoBack = CLIErrorCode(rawValue: "cannot_go_back")

    /// Exit 78: the configuration is invalid.
    public static let configuration = CLIErrorCode(rawValue: "configuration")

    /// Exit 65: the server refused the change as conflicting (a name or time already taken).
    public static let conflict = CLIErrorCode(rawValue: "conflict")

    /// Exit 73: the data directory cannot be created or used (permissions, a file in the way).
    public static let dataDirectoryUnusable = CLIErrorCode(rawValue: "data_directory_unusable")

    /// Exit 74: the local database is damaged: `trendy repair` keeps the unsynced changes.
    public static let databaseDamaged = CLIErrorCode(rawValue: "database_damaged")

    /// Exit 73: the log export file cannot be written.
    public static let exportFailed = CLIErrorCode(rawValue: "export_failed")

    /// Exit 78: the command needs a feature this program is built without.
    public static let featureUnavailable = CLIErrorCode(rawValue: "feature_unavailable")

    /// Exit 70: a bug: an unexpected internal error.
    public static let internalError = CLIErrorCode(rawValue: "internal_error")

    /// Exit 65: the input or the server refused a value as invalid (the message names the field).
    public static let invalid = CLIErrorCode(rawValue: "invalid")

    /// Exit 64: the reauthentication code is malformed.
    public static let invalidCode = CLIErrorCode(rawValue: "invalid_code")

    /// Exit 77: wrong email or password.
    public static let invalidCredentials = CLIErrorCode(rawValue: "invalid_credentials")

    /// Exit 65: not an email address.
    public static let invalidEmail = CLIErrorCode(rawValue: "invalid_email")

    /// Exit 65: a GPX track file cannot be read as GPX.
    public static let invalidGpx = CLIErrorCode(rawValue: "invalid_gpx")

    /// Exit 64: not an event id.
    public static let invalidId = CLIErrorCode(rawValue: "invalid_id")

    /// Exit 64: latitude/longitude/accuracy out of range.
    public static let invalidLocation = CLIErrorCode(rawValue: "invalid_location")

    /// Exit 64: `--log-level`/`TRENDY_LOG_LEVEL` is not a level.
    public static let invalidLogLevel = CLIErrorCode(rawValue: "invalid_log_level")

    /// Exit 64: `--server-timeout`/`TRENDY_SERVER_TIMEOUT` is not 0.05–600 seconds.
    public static let invalidServerTimeout = CLIErrorCode(rawValue: "invalid_server_timeout")

    /// Exit 64: not an ISO-8601 time (or `now`).
    public static let invalidTime = CLIErrorCode(rawValue: "invalid_time")

    /// Exit 64: insight settings that cannot be kept (an unknown zone, a day start past 12, an
    /// unknown weekday, a bad date).
    public static let invalidSettings = CLIErrorCode(rawValue: "invalid_settings")

    /// Exit 64: `--api-url`/`--auth-url` is not an http(s) URL.
    public static let invalidUrl = CLIErrorCode(rawValue: "invalid_url")

    /// Exit 77: geofencing needs "always" location access.
    public static let locationNotAlways = CLIErrorCode(rawValue: "location_not_always")

    /// Exit 74: the log file cannot be read.
    public static let logUnreadable = CLIErrorCode(rawValue: "log_unreadable")

    /// Exit 66: an input file does not exist or cannot be read.
    public static let noInput = CLIErrorCode(rawValue: "no_input")

    /// Exit 64: no password given (no terminal to ask on, nothing on standard input).
    public static let noPassword = CLIErrorCode(rawValue: "no_password")

    /// Exit 65: no such entity (event, type, geofence) here or on the server.
    public static let notFound = CLIErrorCode(rawValue: "not_found")

    /// Exit 77: the command needs a signed-in session, or the server rejected it.
    public static let notSignedIn = CLIErrorCode(rawValue: "not_signed_in")

    /// Exit 1: only the permissions step of onboarding can be skipped.
    public static let notSkippable = CLIErrorCode(rawValue: "not_skippable")

    /// Exit 69: the server cannot be reached; nothing was lost, changes stay queued.
    public static let offline = CLIErrorCode(rawValue: "offline")

    /// Exit 65: the install holds another account's unsynced data: sign in to that account, or move it aside.
    public static let otherAccountData = CLIErrorCode(rawValue: "other_account_data")

    /// Exit 65: the password is longer than the server accepts.
    public static let passwordTooLong = CLIErrorCode(rawValue: "password_too_long")

    /// Exit 64: the password and its confirmation differ.
    public static let passwordsDiffer = CLIErrorCode(rawValue: "passwords_differ")

    /// Exit 75: the server asked to slow down: try again after the wait it names.
    public static let rateLimited = CLIErrorCode(rawValue: "rate_limited")

    /// Exit 75: a reauthentication code was mailed moments ago: wait before asking again.
    public static let reauthenticationCodeRecent = CLIErrorCode(rawValue: "reauthentication_code_recent")

    /// Exit 77: the server wants a mailed code before this change: run again with `--code`.
    public static let reauthenticationNeeded = CLIErrorCode(rawValue: "reauthentication_needed")

    /// Exit 77: the reauthentication code is wrong, used or expired.
    public static let reauthenticationNotValid = CLIErrorCode(rawValue: "reauthentication_not_valid")

    /// Exit 74: `trendy repair` could not rebuild the database (nothing was removed).
    public static let repairFailed = CLIErrorCode(rawValue: "repair_failed")

    /// Exit 65: the new password equals the current one.
    public static let samePassword = CLIErrorCode(rawValue: "same_password")

    /// Exit 1: the server failed to answer an account request.
    public static let serverError = CLIErrorCode(rawValue: "server_error")

    /// Exit 69: something answers at the address, but not a working Trendy API.
    public static let serverUnavailable = CLIErrorCode(rawValue: "server_unavailable")

    /// Exit 77: the session was ended elsewhere (signed out everywhere, password changed): sign in again.
    public static let sessionRevoked = CLIErrorCode(rawValue: "session_revoked")

    /// Exit 64: the onboarding step needs something first (a type, a first event).
    public static let stepIncomplete = CLIErrorCode(rawValue: "step_incomplete")

    /// Exit 75: another sign-in or sign-out replaced this one while it ran.
    public static let superseded = CLIErrorCode(rawValue: "superseded")

    /// Exit 1: a sync pass failed for a reason that is not transient.
    public static let syncFailed = CLIErrorCode(rawValue: "sync_failed")

    /// Exit 65: no geofence of that name or id.
    public static let unknownGeofence = CLIErrorCode(rawValue: "unknown_geofence")

    /// Exit 65: no event type of that name.
    public static let unknownType = CLIErrorCode(rawValue: "unknown_type")
    /// Exit 65: the type has no property of that key (the message lists the ones it has).
    public static let unknownProperty = CLIErrorCode(rawValue: "unknown_property")

    /// Exit 65: an account with this email exists: sign in.
    public static let userAlreadyExists = CLIErrorCode(rawValue: "user_already_exists")

    /// Exit 75: a transient failure (5xx, dropped connection, timeout) met the pass, or it waits to retry one.
    public static let waitingToRetry = CLIErrorCode(rawValue: "waiting_to_retry")

    /// Exit 65: the password is too weak for the server.
    public static let weakPassword = CLIErrorCode(rawValue: "weak_password")

    /// Every code the program can print, in the order docs/cli.md lists them.
    public static let all: [CLIErrorCode] = [
        .ambiguousGeofence,
        .appNotAnswering,
        .appRefused,
        .cannotWrite,
        .badFile,
        .busy,
        .cannotCapture,
        .cannotGoBack,
        .configuration,
        .confirmationNeeded,
        .conflict,
        .dataDirectoryUnusable,
        .databaseDamaged,
        .exportFailed,
        .featureUnavailable,
        .internalError,
        .invalid,
        .invalidCode,
        .invalidCredentials,
        .invalidEmail,
        .invalidGpx,
        .invalidId,
        .invalidLocation,
        .invalidLogLevel,
        .invalidServerTimeout,
        .invalidSettings,
        .invalidTime,
        .invalidUrl,
        .locationNotAlways,
        .logUnreadable,
        .noInput,
        .noPassword,
        .notFound,
        .notSignedIn,
        .notSkippable,
        .offline,
        .otherAccountData,
        .passwordTooLong,
        .passwordsDiffer,
        .rateLimited,
        .reauthenticationCodeRecent,
        .reauthenticationNeeded,
        .reauthenticationNotValid,
        .repairFailed,
        .samePassword,
        .serverError,
        .serverUnavailable,
        .sessionRevoked,
        .stepIncomplete,
        .superseded,
        .syncFailed,
        .unknownGeofence,
        .unknownProperty,
        .unknownType,
        .userAlreadyExists,
        .waitingToRetry,
        .weakPassword,
    ]
}
