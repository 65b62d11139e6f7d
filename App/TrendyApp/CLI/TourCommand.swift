import ArgumentParser
import Foundation
import TrendyAPI
import TrendyAuth
import TrendyGeofence
import TrendyGeofenceLive
import TrendyLogging
import TrendyModels
import TrendyOnboarding
import TrendySync

/// `trendy tour`: the whole story on a temporary install with the embedded backend, printing what
/// the app shows at each step. Every "launch" is a cold one: a new environment built from the
/// files on disk, exactly as a fresh process would.
struct TourCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tour",
        abstract: "A scripted end-to-end story: onboarding, relaunches, sign-out/in, a 5,000-event offline import.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "How many events the offline import adds.") var events = 5_000
    @Flag(help: "Keep the temporary data directory and print its path.") var keep = false

    func validate() throws {
        guard events >= 1, events <= 1_000_000 else { throw ValidationError("--events must be 1…1,000,000") }
    }

    /// The features the tour walks through.
    static let needs = ["onboarding", "geofence", "dev-backend"]

    func run() async throws {
        let json = global.json
        let missing = Self.needs.filter { !AppPlugins.has($0, in: AppPlugins.active) }
        guard missing.isEmpty else {
            let cli = CLIError.featureUnavailable(
                "the tour needs the \(missing.joined(separator: ", ")) plugin(s), which this program is built without")
            Output(json: json).fail(cli)
            throw ExitCode(cli.exitCode.rawValue)
        }
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "trendy-tour-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        var options = global
        options.dataDirectory = directory.path
        options.apiURL = nil
        options.authURL = nil
        let tour = Tour(options: options, json: json, importCount: events)
        defer { if !keep { try? FileManager.default.removeItem(at: directory) } }
        let chapters = try await tour.play()
        if json {
            Output(json: true).document(["data_directory": directory.path])
            Output(json: true).document(chapters)
        } else if keep {
            print("The tour's data directory: \(directory.path)")
        }
    }
}

/// The tour's script.
struct Tour {
    let options: GlobalOptions
    let json: Bool
    let importCount: Int
    let email = "tour-\(UInt32.random(in: 0...UInt32.max))@example.com"
    let password = "tour-password-\(UInt32.random(in: 0...UInt32.max))"

    func say(_ text: String) { if !json { print(text) } }

    /// Builds a cold environment, optionally with the network unreachable.
    func environment(offline: Bool = false) throws -> AppEnvironment {
        let env = ProcessInfo.processInfo.environment
        var backend = try options.backend(environment: env)
        if offline { backend.apiURL = URL(string: "http://127.0.0.1:9") }
        return try AppComposition.live(
            paths: options.paths(environment: env), logging: try options.loggingOptions(environment: env),
            backend: backend)
    }

    /// Runs `body` in a fresh environment and closes it.
    func step<T>(offline: Bool = false, _ body: (AppEnvironment) async throws -> T) async throws -> T {
        let env = try environment(offline: offline)
        do {
            let result = try await body(env)
            await env.close()
            env.logs.shutdown()
            return result
        } catch {
            await env.close()
            env.logs.shutdown()
            throw error
        }
    }

    /// A cold launch: decide, build, first frame, background work.
    func launch(_ title: String) async throws -> TourChapter {
        say("\n▶ \(title)")
        let start = ContinuousClock.now
        let decision = AppLaunch.decide(
            paths: options.paths(environment: ProcessInfo.processInfo.environment), start: start)
        let json = self.json
        let report = try await step { env in
            await AppLaunch(onFrame: { if !json { printFrame($0) } }).run(env, decision: decision, start: start)
        }
        say(
            String(
                format: "  route %@ decided in %.2f ms · first frame at %.1f ms · %d frame(s)", report.route,
                report.routeDecidedMs, report.firstFrameMs, report.frames.count))
        return TourChapter(title: title, frames: report.frames, notes: [])
    }

    /// An action with a line saying what happened.
    func act(_ title: String, offline: Bool = false, _ body: (AppEnvironment) async throws -> String) async throws
        -> TourChapter
    {
        say("\n▶ \(title)")
        let note = try await step(offline: offline, body)
        say("  \(note)")
        return TourChapter(title: title, frames: [], notes: [note])
    }

    func play() async throws -> [TourChapter] {
        var chapters: [TourChapter] = []
        chapters.append(try await launch("1. Fresh install: trendy launch"))
        chapters.append(
            try await act("2. Welcome → next") { env in
                "now at \(try await env.onboardingSteps().nextStep(typeName: nil, logType: nil, prompter: noAnswers).label)"
            })
        chapters.append(
            try await act("3. Sign up as \(email)") { env in
                let session = try await signUp(env)
                let status = try await env.requireOnboarding().signedIn(userId: session.user.id).status
                return "signed up; onboarding continues at \(status?.currentStep.rawValue ?? "?")"
            })
        chapters.append(
            try await act("4. Create the type \"Coffee\"") { env in
                let p = try await env.onboardingSteps().nextStep(
                    typeName: "Coffee", logType: nil, prompter: noAnswers)
                return "now at \(p.label)"
            })
        chapters.append(
            try await act("5. Log the first event") { env in
                let p = try await env.onboardingSteps().nextStep(
                    typeName: nil, logType: "Coffee", prompter: noAnswers)
                return "now at \(p.label)"
            })
        chapters.append(
            try await act("6. Permissions: allow notifications, deny location, not now for health") { env in
                let prompter = CLIPermissionPrompter(
                    answers: [.notifications: .allow, .location: .deny, .health: .skip], interactive: false)
                let p = try await env.onboardingSteps().nextStep(typeName: nil, logType: nil, prompter: prompter)
                return "now at \(p.label)"
            })
        chapters.append(
            try await act("7. Finish") { env in
                let p = try await env.onboardingSteps().nextStep(typeName: nil, logType: nil, prompter: noAnswers)
                let analytics = try env.requireOnboarding().analyticsEvents().map { $0.name.rawValue }.joined(
                    separator: ", ")
                return "\(p.label); analytics: \(analytics)"
            })
        chapters.append(try await launch("8. Relaunch: the main screen at once, no onboarding, no loading"))
        chapters.append(
            try await act("9. Sign out") { env in
                await env.auth.signOut(scope: SignOutScope.local)
                return "signed out"
            })
        chapters.append(try await launch("10. Relaunch: login, not onboarding"))
        chapters.append(
            try await act("11. Sign in again") { env in
                let session = try await signIn(env)
                let status = try await env.requireOnboarding().signedIn(userId: session.user.id).status
                return
                    "signed in; onboarding \(status?.completed == true ? "already complete" : "at \(status?.currentStep.rawValue ?? "?")")"
            })
        chapters.append(
            try await act("12. Import \(importCount) events with the network unreachable", offline: true) { env in
                try await importOffline(env)
            })
        chapters.append(try await launch("13. Relaunch: cached data at once, the sync runs with progress"))
        chapters.append(
            try await act("14. A place: allow location in Settings, add the café as a geofence, walk in and out") {
                env in try await walkToTheCafe(env)
            })
        say("\nDone. Every launch above was cold: a new environment built from the files on disk.")
        return chapters
    }

    /// Chapter 12: a bulk import made while the network is unreachable.
    func importOffline(_ env: AppEnvironment) async throws -> String {
        guard let type = try await env.store.eventType(named: "Coffee")?.value else { return "no type" }
        let base = env.now().addingTimeInterval(-Double(importCount) * 60)
        let batch = (0..<importCount).map { i in
            Event(
                id: env.ids.next(), eventTypeId: type.id, timestamp: base.addingTimeInterval(Double(i) * 60),
                sourceType: .imported, externalId: "tour-\(i)")
        }
        let summary = try await env.store.insertEvents(batch)
        await env.sync.refreshCounts()
        return "imported \(summary.inserted) events locally; \(env.sync.status.pendingCount) changes pending"
    }

    /// Chapter 14: a geofence at the café, a walk in and out, the visit logged and synced.
    func walkToTheCafe(_ env: AppEnvironment) async throws -> String {
        let (geofence, location) = try env.requireGeofence()
        await geofence.start()
        await location.setAuthorization(.always)
        await location.settled(by: geofence)
        guard let type = try await env.store.eventType(named: "Coffee")?.value else { return "no type" }
        let cafe = Coordinate(latitude: 52.5200, longitude: 13.4050)
        let away = Coordinate(latitude: 52.5245, longitude: 13.4050)  // 500 m north
        try await env.store.createGeofence(
            Geofence(id: env.ids.next(), name: "Café", center: cafe, radius: 100, entryEventTypeId: type.id))
        await geofence.reconcile(.geofencesChanged)
        let t = env.now()
        let walk = [
            LocationFix(away, time: t.addingTimeInterval(-3_600)),
            LocationFix(cafe, time: t.addingTimeInterval(-3_000)),
            LocationFix(cafe, time: t.addingTimeInterval(-2_000)),
            LocationFix(away, time: t.addingTimeInterval(-600)),
        ]
        _ = try await LocationReplayer(speed: nil).replay(
            walk, into: location, afterEvents: { _ in await location.settled(by: geofence) })
        let outcomes = await geofence.handledThisRun().map { "\($0.crossing.kind.rawValue) → \($0.outcome)" }
        let run = await env.sync.sync(full: false)
        return "crossings: \(outcomes.joined(separator: ", ")); a 40-minute Coffee visit logged and synced "
            + "(pushed \(run.pushed))"
    }

    func signUp(_ env: AppEnvironment) async throws -> AuthSession {
        do throws(AuthError) { return try await env.auth.signUp(email: email, password: password) } catch {
            throw error.cli
        }
    }

    func signIn(_ env: AppEnvironment) async throws -> AuthSession {
        do throws(AuthError) { return try await env.auth.signIn(email: email, password: password) } catch {
            throw error.cli
        }
    }
}

/// One step of the tour, for `--json`.
struct TourChapter: Encodable {
    let title: String
    let frames: [Frame]
    let notes: [String]
}

/// Answers every permission with "not now".
let noAnswers = CLIPermissionPrompter(answers: [:], interactive: false)
