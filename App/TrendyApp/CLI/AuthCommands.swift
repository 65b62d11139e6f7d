import ArgumentParser
import Foundation
import TrendyAPI
import TrendyAuth
import TrendyModels
import TrendyOnboarding
import TrendySync

extension AuthError {
    /// The CLI's error for an auth failure.
    var cli: CLIError {
        switch self {
        case .invalidEmail: return CLIError(code: .invalidEmail, message: description, exitCode: .dataError)
        case .weakPassword: return CLIError(code: .weakPassword, message: description, exitCode: .dataError)
        case .passwordTooLong:
            return CLIError(code: .passwordTooLong, message: description, exitCode: .dataError)
        case .samePassword: return CLIError(code: .samePassword, message: description, exitCode: .dataError)
        case .reauthenticationNeeded:
            return CLIError(code: .reauthenticationNeeded, message: description, exitCode: .noPermission)
        case .reauthenticationInvalid:
            return CLIError(code: .reauthenticationNotValid, message: description, exitCode: .noPermission)
        case .invalidCredentials:
            return CLIError(code: .invalidCredentials, message: description, exitCode: .noPermission)
        case .userAlreadyExists:
            return CLIError(code: .userAlreadyExists, message: description, exitCode: .dataError)
        case .notSignedIn: return CLIError(code: .notSignedIn, message: description, exitCode: .noPermission)
        case .superseded: return CLIError(code: .superseded, message: description, exitCode: .temporaryFailure)
        case .sessionRevoked: return CLIError(code: .sessionRevoked, message: description, exitCode: .noPermission)
        case .network: return CLIError(code: .offline, message: description, exitCode: .unavailable)
        case .rateLimited: return CLIError(code: .rateLimited, message: description, exitCode: .temporaryFailure)
        case .server: return CLIError(code: .serverError, message: description, exitCode: .failure)
        }
    }
}

extension AppEnvironment {
    /// Throws the offline error (exit 69, the reason in words) unless the server answers its
    /// health check within the budget. For commands a person waits on that need the server.
    func requireServer() async throws(CLIError) {
        let answer = await reachability.check()
        switch answer {
        case .reachable: return
        case .offline:
            throw CLIError(
                code: .offline, message: "offline: \(answer.explanation ?? "no answer"). Nothing was changed.",
                exitCode: .unavailable)
        case .failing:
            throw CLIError(
                code: .serverUnavailable, message: answer.explanation ?? "server error", exitCode: .unavailable)
        }
    }
}

extension TrendyAPIError {
    /// The CLI's error for an API failure.
    var cli: CLIError {
        switch self {
        case .transport: return CLIError(code: .offline, message: description, exitCode: .unavailable)
        case .rateLimited: return CLIError(code: .rateLimited, message: description, exitCode: .temporaryFailure)
        case .unauthorized: return CLIError(code: .notSignedIn, message: description, exitCode: .noPermission)
        case .validation, .badRequest, .payloadTooLarge:
            return CLIError(code: .invalid, message: description, exitCode: .dataError)
        case .notFound: return CLIError(code: .notFound, message: description, exitCode: .dataError)
        case .conflict: return CLIError(code: .conflict, message: description, exitCode: .dataError)
        case .server, .decoding: return CLIError(code: .serverError, message: description, exitCode: .failure)
        }
    }
}

/// Reads a password: from standard input with `--password-stdin`, else from a no-echo prompt.
enum PasswordInput {
    static func read(fromStandardInput: Bool, prompt: String) throws(CLIError) -> String {
        if fromStandardInput {
            guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                throw CLIError(code: .noPassword, message: "no password on standard input", exitCode: .usage)
            }
            return line
        }
        guard isatty(STDIN_FILENO) == 1 else {
            throw CLIError(
                code: .noPassword,
                message: "standard input is not a terminal: pass the password with --password-stdin",
                exitCode: .usage)
        }
        FileHandle.standardError.write(Data(prompt.utf8))
        var original = termios()
        tcgetattr(STDIN_FILENO, &original)
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        let line = readLine(strippingNewline: true)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &original)
        FileHandle.standardError.write(Data("\n".utf8))
        guard let line, !line.isEmpty else {
            throw CLIError(code: .noPassword, message: "no password entered", exitCode: .usage)
        }
        return line
    }
}

/// Hands the local data to the account that just signed in; refuses (and signs out again) when
/// another account's changes are still unsynced here. Returns what to tell the person when the
/// data of an earlier account with the same email was kept for this one (nil otherwise).
@discardableResult
func claimLocalData(_ env: AppEnvironment, for session: AuthSession) async throws -> String? {
    let claim: LocalClaim
    do {
        claim = try await env.store.claim(for: session.user.id, email: session.user.email)
    } catch {
        await env.auth.signOut(scope: .local)
        throw CLIError(code: .otherAccountData, message: String(describing: error), exitCode: .dataError)
    }
    guard case .carriedOver = claim else { return nil }
    return "This device holds the data of an earlier account of \(session.user.email) that the server no "
        + "longer has; it stays here and goes to this account at the next sync."
}

/// An install signed in before the owner's email was kept (D14 addendum) learns it from its
/// session, so that signing up again where a server lost the account keeps its data. Only for
/// the owner's own session: a claim for anyone else would clear the data.
func rememberOwnerEmail(_ env: AppEnvironment, _ session: AuthSession) async throws {
    guard try await env.store.ownerEmail() == nil, try await env.store.owner() == session.user.id else { return }
    try await env.store.claim(for: session.user.id, email: session.user.email)
}

/// A new account cannot take this device's data while another account's changes wait to be
/// sent: refused before the account is made (it was made, then refused here, and left behind).
/// The same email again is the same person whose account the server lost: their data goes to
/// the new account (``LocalStore/claim(for:email:)``).
func refuseNewAccountOverUnsentData(_ env: AppEnvironment, email: String) async throws {
    guard try await env.store.owner() != nil else { return }
    if let owner = try await env.store.ownerEmail(), owner.lowercased() == email.lowercased() { return }
    let unsent = try await env.store.outboxCounts().pending
    guard unsent > 0 else { return }
    throw CLIError(
        code: .otherAccountData,
        message: "this device holds \(unsent) change(s) of another account not sent yet: sign in to that account "
            + "and sync first; no account was made", exitCode: .dataError)
}

/// What sign-up, login and whoami print with `--json`.
struct SessionReport: Encodable {
    let signed_in: Bool
    let user_id: String?
    let email: String?
    let expires_at: Date?
    let verified: Bool?
    let server: SyncSummary?
    /// Where onboarding continues: `completed` or a step (sign-up and login only).
    var onboarding: String? = nil
    /// Why the session could not be verified (whoami, when `verified` is false).
    var unverified_reason: String? = nil
    /// Whether the data of an earlier account of the same email stays for this one (sign-up and
    /// login, only when it did).
    var carried_over: Bool? = nil
}

/// What signup and login share: read the password, authenticate, claim the local data, report.
func authenticate(
    _ global: GlobalOptions, email: String, passwordStdin: Bool, prompt: String, done: String,
    createsAccount: Bool = false,
    _ action: @escaping @Sendable (any AuthService, String) async throws(AuthError) -> AuthSession
) async throws {
    try await CommandRunner(global).run { env, out in
        // Ask first, within the budget: a silent server costs 2 s, not the request's deadline,
        // and nobody types a password for a server that is not there.
        try await env.requireServer()
        if createsAccount { try await refuseNewAccountOverUnsentData(env, email: email) }
        let password = try PasswordInput.read(fromStandardInput: passwordStdin, prompt: prompt)
        let session: AuthSession
        do throws(AuthError) { session = try await action(env.auth, password) } catch { throw error.cli }
        let carried = try await claimLocalData(env, for: session)
        // Signing in always fetches fresh onboarding status; a new account moves past the auth step.
        // Without the onboarding feature, every account is onboarded.
        let next: OnboardingResume
        if let onboarding = env.onboarding {
            let status = await onboarding.signedIn(userId: session.user.id).status
            next = status.map { $0.completed ? .completed : .step($0.currentStep) } ?? .unknown
        } else {
            next = .completed
        }
        out.line("\(done) as \(session.user.email).")
        if let carried { out.line(carried) }
        if case .completed = next {
            out.line("Welcome back. → trendy launch")
        } else {
            out.line("Onboarding continues at \(next.text). → trendy onboarding next")
        }
        out.document(
            SessionReport(
                signed_in: true, user_id: session.user.id, email: session.user.email, expires_at: session.expiresAt,
                verified: true, server: nil, onboarding: next.text, carried_over: carried == nil ? nil : true))
    }
}

struct SignupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "signup", abstract: "Create an account and sign in.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "Email address.") var email: String
    @Flag(help: "Read the password from standard input.") var passwordStdin = false

    func run() async throws {
        let email = self.email
        try await authenticate(
            global, email: email, passwordStdin: passwordStdin, prompt: "Choose a password: ",
            done: "Signed up and signed in", createsAccount: true
        ) { auth, password throws(AuthError) in try await auth.signUp(email: email, password: password) }
    }
}

struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "login", abstract: "Sign in.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "Email address.") var email: String
    @Flag(help: "Read the password from standard input.") var passwordStdin = false

    func run() async throws {
        let email = self.email
        try await authenticate(
            global, email: email, passwordStdin: passwordStdin, prompt: "Password: ", done: "Signed in"
        ) {
            auth, password throws(AuthError) in try await auth.signIn(email: email, password: password)
        }
    }
}

struct LogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout", abstract: "Sign out (here at once; on the server when it can be reached).")
    @OptionGroup var global: GlobalOptions
    @Option(help: "Which sessions end on the server: global, local or others.") var scope: String = "local"

    struct Result: Encodable {
        let signed_out: Bool
        let server_confirmed: Bool
        let unsent_changes: Int
        let warning: String?
    }

    func validate() throws {
        guard SignOutScope(rawValue: scope) != nil else {
            throw ValidationError("--scope must be global, local or others")
        }
    }

    func run() async throws {
        try await CommandRunner(global).run { env, out in
            guard env.auth.currentSession != nil else { throw AuthError.notSignedIn.cli }
            let unsent = (try? await env.store.outboxCounts().pending) ?? 0
            let serverError = await env.auth.signOut(scope: SignOutScope(rawValue: scope) ?? .local)
            out.line("Signed out.")
            if unsent > 0 {
                // Kept, not lost: they go out once this account signs in here again.
                FileHandle.standardError.write(
                    Data(
                        ("trendy: warning: \(unsent) change(s) were not sent yet; they stay on this device and go "
                            + "out when you sign in to this account here again (run `trendy sync` first next time).\n")
                            .utf8))
            }
            if let serverError {
                FileHandle.standardError.write(
                    Data(
                        "trendy: warning: the server was not told (\(serverError.reason)); this device is signed out.\n"
                            .utf8))
            }
            out.document(
                Result(
                    signed_out: true, server_confirmed: serverError == nil, unsent_changes: unsent,
                    warning: serverError.map { "The server was not told (\($0.reason)); this device is signed out." }))
        }
    }
}

struct WhoamiCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "whoami", abstract: "Show who is signed in, verified with the server when it can be reached.")
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Do not contact the server.") var offline = false

    func run() async throws {
        try await CommandRunner(global).run { env, out in
            guard let session = env.auth.currentSession else { throw AuthError.notSignedIn.cli }
            var verified: Bool?
            var summary: SyncSummary?
            var why = "the server could not be reached"
            if !offline {
                do throws(AuthError) {
                    _ = try await env.auth.fetchUser()
                    verified = true
                } catch {
                    switch error {
                    case .sessionRevoked, .notSignedIn: throw AuthError.sessionRevoked(code: "revoked").cli
                    default: why = error.reason.trimmingCharacters(in: CharacterSet(charactersIn: "."))
                    }
                    verified = false
                }
                if verified == true { summary = try? await env.api.syncSummary() }
            }
            let current = env.auth.currentSession ?? session
            out.line("Signed in as \(current.user.email) (user \(current.user.id)).")
            switch verified {
            case true?: out.line("Session verified with the server.")
            case false?: out.line("Not verified with the server (\(why)).")
            case nil: break
            }
            if let summary {
                out.line(
                    "On the server: \(summary.eventCount) events, \(summary.eventTypeCount) event types, \(summary.geofenceCount) geofences."
                )
            }
            out.document(
                SessionReport(
                    signed_in: true, user_id: current.user.id, email: current.user.email, expires_at: current.expiresAt,
                    verified: verified, server: summary, unverified_reason: verified == false ? why : nil))
        }
    }
}

/// Where a signed-in account's onboarding resumes, as `login`/`signup` report it (`onboarding`
/// in `--json`: `completed`, a step's name, or `unknown` when the server could not say).
enum OnboardingResume: Equatable {
    case completed
    case step(OnboardingStep)
    case unknown

    /// The reported form.
    var text: String {
        switch self {
        case .completed: "completed"
        case .step(let step): step.rawValue
        case .unknown: "unknown"
        }
    }
}
