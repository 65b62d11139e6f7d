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
                guard env.auth.currentSession != nil else { throw AuthError.notSignedIn.cli }
                try await env.requireServer()
                let password = try PasswordInput.read(fromStandardInput: fromStandardInput, prompt: "New password: ")
                if !fromStandardInput {
                    let again = try PasswordInput.read(fromStandardInput: false, prompt: "Again: ")
                    guard again == password else {
                        throw CLIError(
                            code: "passwords_differ", message: "the two passwords differ; nothing was changed",
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
            do throws(AuthError) {
                try await env.auth.requestReauthentication()
            } catch .rateLimited {
                // A code went out less than a minute ago: that one is still good.
            } catch { throw error.cli }
            let email = env.auth.currentSession?.user.email ?? "your email address"
            guard interactive, isatty(STDIN_FILENO) == 1 else {
                throw CLIError(
                    code: "reauthentication_needed",
                    message: "the server mailed a code to \(email) to confirm this change: run again with --code CODE. "
                        + "Nothing was changed.",
                    exitCode: .noPermission)
            }
            FileHandle.standardError.write(Data("The server mailed a code to \(email). Code: ".utf8))
            guard let entered = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces),
                !entered.isEmpty
            else { throw CLIError(code: "no_code", message: "no code entered; nothing was changed", exitCode: .usage) }
            do throws(AuthError) { try await env.auth.changePassword(to: password, nonce: entered) } catch {
                throw error.cli
            }
        }
    }
}
