import ArgumentParser
import Foundation
import TrendyAPI
import TrendyAuth
import TrendyModels
import TrendyOnboarding

/// How a person answers a permission on the command line.
enum PermissionAnswer: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// Continue past the explanation, then allow.
    case allow
    /// Continue past the explanation, then refuse.
    case deny
    /// "Not now" on the explanation.
    case skip
}

/// The system permission prompt on Linux: answered by flags, else interactively on a terminal,
/// else "not now".
struct CLIPermissionPrompter: PermissionPrompter {
    let answers: [PermissionKind: PermissionAnswer]
    let interactive: Bool

    func prime(_ kind: PermissionKind, explanation: String) async -> Bool {
        if let answer = answers[kind] { return answer != .skip }
        guard interactive else { return false }
        print("\(kind.rawValue.capitalized): \(explanation)")
        return ask("Continue? [y/N] ")
    }

    func requestSystemPermission(_ kind: PermissionKind) async -> Bool {
        if let answer = answers[kind] { return answer == .allow }
        guard interactive else { return false }
        return ask("Allow Trendy to use \(kind.rawValue)? [y/N] ")
    }

    func ask(_ question: String) -> Bool {
        print(question, terminator: "")
        fflush(nil)
        guard let line = readLine() else { return false }
        return ["y", "yes"].contains(line.trimmingCharacters(in: .whitespaces).lowercased())
    }
}

/// What `trendy onboarding … --json` prints.
struct OnboardingReport: Encodable {
    let signed_in: Bool
    let user_id: String?
    let completed: Bool
    let step: String
    let progress: Double
    let can_go_back: Bool
    let skippable: Bool
    let source: String
    let pending_write: PendingOnboardingWrite?
    let permissions: [String: String]
    let step_completed_at: [String: Date]
    let device_saw_completed_user: Bool
    let analytics: [AnalyticsEvent]

    init(_ onboarding: any OnboardingStatusService, _ position: OnboardingPosition, source: String) {
        var status: OnboardingStatus?
        switch position {
        case .signedOut: user_id = nil
        case .step(let user, _), .completed(let user):
            user_id = user
            status = onboarding.cachedStatus(for: user)
        }
        signed_in = user_id != nil
        let step: OnboardingStep
        switch position {
        case .signedOut(let s), .step(_, let s): (step, completed) = (s, false)
        case .completed: (step, completed) = (.finish, true)
        }
        self.step = position.label
        progress = completed ? 1 : OnboardingFlow.progress(at: step)
        can_go_back = position.canGoBack
        skippable = !completed && OnboardingFlow.isSkippable(step)
        self.source = source
        pending_write = user_id.flatMap { onboarding.pendingWrite(for: $0) }
        permissions = [
            "notifications": (status?.notificationsStatus ?? .notRequested).rawValue,
            "location": (status?.locationStatus ?? .notRequested).rawValue,
            "health": (status?.healthStatus ?? .notRequested).rawValue,
        ]
        step_completed_at = status?.stepCompletedAt ?? [:]
        device_saw_completed_user = onboarding.deviceSawCompletedUser
        let user = user_id
        analytics = onboarding.analyticsEvents().filter { user == nil || $0.userId == user }
    }
}

/// Runs one onboarding command: `action` says where the person now stands and where the status
/// came from (`server` or `cache`); the screen is printed for people, the report with `--json`.
func runOnboardingCommand(
    _ global: GlobalOptions,
    _ action:
        @escaping (AppEnvironment, any OnboardingStatusService, OnboardingSteps, Output) async throws -> (
            OnboardingPosition, source: String
        )
) async throws {
    try await CommandRunner(global).run { env, out in
        let steps = try env.onboardingSteps()
        let onboarding = try env.requireOnboarding()
        let (position, source) = try await action(env, onboarding, steps, out)
        try await printPosition(env, position, out)
        out.document(OnboardingReport(onboarding, position, source: source))
    }
}

/// Prints where someone stands, for people: the onboarding screen they are on.
func printPosition(_ env: AppEnvironment, _ position: OnboardingPosition, _ out: Output) async throws {
    switch position {
    case .completed:
        out.line("Onboarding is complete. → trendy launch")
    case .signedOut(let step), .step(_, let step):
        let facts = try await AppShell.onboardingFacts(env)
        out.line(ScreenRenderer.render(.onboarding(step, facts), plain: out.style.plain))
    }
}

struct OnboardingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "onboarding", abstract: "Go through onboarding: status, next, back, skip, reset.",
        subcommands: [Status.self, Next.self, Back.self, Skip.self, Reset.self], defaultSubcommand: Status.self)

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status", abstract: "Where you are in onboarding (fetched from the server when reachable).")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await runOnboardingCommand(global) { env, onboarding, steps, out in
                var source = "cache"
                if let user = env.auth.currentUserId {
                    switch await onboarding.refresh(userId: user) {
                    case .fresh: source = "server"
                    case .cached(_, let reason), .unavailable(let reason):
                        out.line("(not fetched from the server — \(reason); showing the status saved on this device)")
                    }
                }
                if let user = env.auth.currentUserId, let pending = onboarding.pendingWrite(for: user) {
                    out.line("A change is waiting to reach the server (\(pending.attempts) failed attempt(s)).")
                }
                return (await steps.position(), source)
            }
        }
    }

    struct Next: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "next", abstract: "Do the current step and move to the next one.",
            discussion: """
                welcome → auth; auth needs `trendy signup` or `trendy login`; create_event_type takes --type; \
                log_first_event takes --log; permissions asks for each permission (answer with the flags, or \
                interactively on a terminal; unanswered means "not now"); finish completes onboarding.
                """)
        @OptionGroup var global: GlobalOptions
        @Option(help: "create_event_type: the type to create.") var type: String?
        @Option(help: "log_first_event: log an event of this type now.") var log: String?
        @Option(help: "permissions: allow, deny or skip notifications.") var notifications: PermissionAnswer?
        @Option(help: "permissions: allow, deny or skip location.") var location: PermissionAnswer?
        @Option(help: "permissions: allow, deny or skip health.") var health: PermissionAnswer?

        func run() async throws {
            let answers: [PermissionKind: PermissionAnswer] = [
                .notifications: notifications, .location: location, .health: health,
            ].compactMapValues { $0 }
            let prompter = CLIPermissionPrompter(
                answers: answers, interactive: !global.json && isatty(STDIN_FILENO) == 1)
            let (type, log) = (type, log)
            try await runOnboardingCommand(global) { env, onboarding, steps, _ in
                (
                    try await steps.nextStep(
                        typeName: type, logType: log, prompter: env.permissionPrompter(prompter)), "cache"
                )
            }
        }
    }

    struct Back: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "back", abstract: "Go back one step (never back past signing in).")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await runOnboardingCommand(global) { env, onboarding, steps, _ in (try await steps.backStep(), "cache")
            }
        }
    }

    struct Skip: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "skip", abstract: "Skip the permissions step (the only one that can be skipped).")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await runOnboardingCommand(global) { env, onboarding, steps, _ in (try await steps.skipStep(), "cache")
            }
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset", abstract: "Start onboarding over (needs the server when signed in).")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await runOnboardingCommand(global) { env, onboarding, steps, _ in
                guard let user = env.auth.currentUserId else {
                    onboarding.setSignedOutStep(.welcome)
                    return (.signedOut(.welcome), "cache")
                }
                try await env.requireServer()
                do throws(TrendyAPIError) {
                    _ = try await onboarding.reset(userId: user)
                } catch {
                    throw error.cli
                }
                return (await steps.position(), "server")
            }
        }
    }
}
