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
            abstract: "Change the password (GoTrue's PUT /user); every other device is signed out.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Read the new password from standard input.") var passwordStdin = false

        struct Result: Encodable {
            let changed: Bool
        }

        func run() async throws {
            let fromStandardInput = passwordStdin
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
                do throws(AuthError) { try await env.auth.changePassword(to: password) } catch { throw error.cli }
                out.line("Password changed. Your other devices are signed out; this one stays signed in.")
                out.document(Result(changed: true))
            }
        }
    }
}
