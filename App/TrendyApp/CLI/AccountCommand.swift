import ArgumentParser
import Foundation
import TrendyAuth

/// `trendy account`: the signed-in account itself.
struct AccountCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "account", abstract: "The signed-in account: change its password.",
        subcommands: [Password.self])

    struct Password: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "password",
            abstract: "Change the password (GoTrue's PUT /user); every other device is signed out.",
            discussion: """
                A server that requires reauthentication (GoTrue's secure password change) mails a \
                code when the session is more than a day old: the command asks for it on a terminal, \
                or says to run again with --code.
                """)
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Read the new password from standard input.") var passwordStdin = false
        @Option(help: "The code the server mailed to confirm this change (when it asks for one).") var code: String?

        struct Result: Encodable {
            let changed: Bool
        }

        func run() async throws {
            let fromStandardInput = passwordStdin
            let code = code
            try await CommandRunner(global).run { env, out in
                let code = try code.map { code throws(CLIError) in try Self.checkedCode(code) }
                guard env.auth.currentSession != nil else { throw AuthError.notSignedIn.cli }
                try await env.requireServer()
                let password = try PasswordInput.read(fromStandardInput: fromStandardInput, prompt: "New password: ")
                if !fromStandardInput {
                    let again = try PasswordInput.read(fromStandardInput: false, prompt: "Again: ")
                    guard again == password else {
                        throw CLIError(
                            code: .passwordsDiffer, message: "the two passwords differ; nothing was changed",
                            exitCode: .usage)
                    }
                }
                try await Self.change(env, to: password, code: code, interactive: !fromStandardInput)
                out.line("Password changed. Your other devices are signed out; this one stays signed in.")
                out.document(Result(changed: true))
            }
        }

        /// Changes the password; when the server wants a code first, has it mailed and asks for
        /// it on a terminal (or says to run again with `--code`).
        static func change(_ env: AppEnvironment, to password: String, code: String?, interactive: Bool)
            async throws(CLIError)
        {
            do throws(AuthError) {
                try await env.auth.changePassword(to: password, nonce: code)
                return
            } catch .reauthenticationNeeded where code == nil {
                // Asked below.
            } catch { throw error.cli }
            let email = env.auth.currentSession?.user.email ?? "your email address"
            do throws(AuthError) {
                try await env.auth.requestReauthentication()
            } catch .rateLimited {
                // No new mail: the server sent one less than a minute ago (whose code may be used).
                throw CLIError(
                    code: .reauthenticationCodeRecent,
                    message: "the server sent a code to \(email) less than a minute ago and will not send another yet: "
                        + "run again with --code CODE if that code is unused, or in a minute for a new one. "
                        + "Nothing was changed.",
                    exitCode: .temporaryFailure)
            } catch { throw error.cli }
            guard interactive, isatty(STDIN_FILENO) == 1 else {
                throw CLIError(
                    code: .reauthenticationNeeded,
                    message: "the server mailed a code to \(email) to confirm this change: run again with --code CODE. "
                        + "Nothing was changed.",
                    exitCode: .noPermission)
            }
            FileHandle.standardError.write(Data("The server mailed a code to \(email). Code: ".utf8))
            let entered = try Self.checkedCode(readLine(strippingNewline: true) ?? "")
            do throws(AuthError) { try await env.auth.changePassword(to: password, nonce: entered) } catch {
                throw error.cli
            }
        }

        /// A reauthentication code as the server sends it: six ASCII digits (surrounding white
        /// space dropped). Anything else is refused here, so it does not use up one of the five
        /// tries the server allows.
        static func checkedCode(_ text: String) throws(CLIError) -> String {
            let code = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard code.utf8.count == 6, code.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
                throw CLIError(
                    code: .invalidCode, message: "the code is the six digits from the mail; nothing was changed",
                    exitCode: .usage)
            }
            return code
        }
    }
}
