import ArgumentParser
import Foundation
import GRDB
import Logging
import Testing
import TrendyAPI
import TrendyAuth
import TrendyLogging
import TrendyModels
import TrendyRouting
import TrendyServer
import TrendyServerTestSupport
import TrendySync
import TrendyTestSupport

@testable import TrendyApp

/// The composition root is a list of plugins: an app without a feature leaves its plugin out and
/// still builds its environment, launches, syncs and lists its commands (issue 21).
@Suite(.timeLimit(.minutes(5)))
struct AppPluginTests {
    static let withoutGeofence: [any TrendyPlugin] = [LoggingPlugin(), AuthPlugin(), SyncPlugin(), OnboardingPlugin()]
    static let withoutOnboarding: [any TrendyPlugin] = [LoggingPlugin(), GeofencePlugin(), AuthPlugin(), SyncPlugin()]

    /// A program built from `plugins`, as the `trendy` root command is built from the standard list.
    struct WithoutGeofence: AsyncParsableCommand {
        static let configuration = TrendyCommand.commandTree(plugins: AppPluginTests.withoutGeofence)
    }

    struct WithoutOnboarding: AsyncParsableCommand {
        static let configuration = TrendyCommand.commandTree(plugins: AppPluginTests.withoutOnboarding)
    }

    /// Runs `body` with an environment built from `plugins`, closing it whether `body` passed or threw.
    static func withEnvironment(
        _ plugins: [any TrendyPlugin], _ dir: TemporaryDirectory, _ server: URL,
        _ body: (AppEnvironment) async throws -> Void
    ) async throws {
        let env = try environment(plugins, dir, server)
        do {
            try await body(env)
        } catch {
            await env.close()
            throw error
        }
        await env.close()
    }

    static func environment(_ plugins: [any TrendyPlugin], _ dir: TemporaryDirectory, _ server: URL) throws
        -> AppEnvironment
    {
        try AppComposition.live(
            paths: AppPaths(dataDirectory: dir.url),
            logging: .init(
                configuration: .init(defaultLevel: .warning), consoleFormat: .human, consoleLevel: .critical),
            // Timing is not what these tests check: on CI, ~700 tests start beside them on two
            // cores, and a server on loopback once took more than the 10 s a 5 s budget allows.
            backend: BackendOptions(apiURL: server, budget: .responding(within: 30)), plugins: plugins)
    }

    /// Signs up, claims the device's data, creates a type and logs an event.
    static func signUpAndLog(_ env: AppEnvironment) async throws {
        let session = try await env.auth.signUp(
            email: "p-\(UUID().uuidString.prefix(8))@example.com", password: "password-1")
        try await env.store.claim(for: session.user.id)
        let type = EventType(id: env.ids.next(), name: "Coffee")
        try await env.store.createEventType(type)
        try await env.store.createEvent(Event(id: env.ids.next(), eventTypeId: type.id, timestamp: Date()))
    }

    @Test func theStandardProgramHasEveryFeatureAndItsCommands() {
        #expect(AppPlugins.standard.map(\.name) == ["logging", "geofence", "auth", "sync", "onboarding", "insights"])
        let names = AppPlugins.commands(for: AppPlugins.standard).map { $0._commandName }
        for name in ["geofence", "location", "onboarding", "sync", "login", "logs", "launch", "plugins"] {
            #expect(names.contains(name))
        }
        #expect(Set(names).count == names.count, "a command name is owned twice")
    }

    @Test func withoutGeofenceTheProgramBuildsLaunchesSyncsAndHasNoGeofenceCommands() async throws {
        let names = AppPlugins.commands(for: Self.withoutGeofence).map { $0._commandName }
        #expect(!names.contains("geofence") && !names.contains("location"))
        #expect(names.contains("sync") && names.contains("onboarding"))
        #expect(throws: (any Error).self) { try WithoutGeofence.parseAsRoot(["geofence", "list"]) }
        #expect(throws: (any Error).self) { try WithoutGeofence.parseAsRoot(["location", "show"]) }
        _ = try WithoutGeofence.parseAsRoot(["sync"])
        #expect(!WithoutGeofence.helpMessage().contains("geofence"))

        let dir = TemporaryDirectory("trendy-it", create: false)
        try await RunningTestServer.with(.testing()) { server in
            try await Self.withEnvironment(Self.withoutGeofence, dir, server.baseURL) { env in
                #expect(env.geofence == nil && env.location == nil)
                #expect(env.modules.map(\.name) == ["logging", "auth", "sync", "onboarding"])
                try await Self.signUpAndLog(env)
                // The launch runs every module's hooks (the sync pass among them) without geofencing.
                let report = await AppLaunch(wait: true, plain: true).run(
                    env, decision: AppLaunch.decide(paths: env.paths, start: .now, plugins: Self.withoutGeofence),
                    start: .now)
                #expect(report.crossings.isEmpty)
                #expect(report.pending == 0, "the launch's pass pushed the type and the event")
                #expect(try await env.sync.history().first?.pushed == 2, "the type and the event reached the server")
            }
        }
        // Only the features in the list migrated the database: no geofence tables.
        let tables = try sqliteTables(dir.url.appendingPathComponent("trendy.sqlite"))
        #expect(tables.contains("local_events"))
        #expect(!tables.contains("geofence_crossings") && !tables.contains("geofence_visit_states"))
    }

    @Test func withoutOnboardingSignedInPeopleGoStraightToTheMainScreen() async throws {
        let names = AppPlugins.commands(for: Self.withoutOnboarding).map { $0._commandName }
        #expect(!names.contains("onboarding"))
        #expect(throws: (any Error).self) { try WithoutOnboarding.parseAsRoot(["onboarding", "status"]) }

        let dir = TemporaryDirectory("trendy-it", create: false)
        let paths = AppPaths(dataDirectory: dir.url)
        // Signed out on a fresh install: the sign-in screen, not the welcome flow.
        #expect(AppLaunch.decide(paths: paths, start: .now, plugins: Self.withoutOnboarding).route == .login)
        #expect(AppLaunch.decide(paths: paths, start: .now).route == .onboarding(.welcome))
        try await RunningTestServer.with(.testing()) { server in
            try await Self.withEnvironment(Self.withoutOnboarding, dir, server.baseURL) { env in
                #expect(env.onboarding == nil)
                #expect(env.modules.map(\.name) == ["logging", "geofence", "auth", "sync"])
                try await Self.signUpAndLog(env)
                let report = await AppLaunch(wait: true, plain: true).run(
                    env, decision: AppLaunch.decide(paths: env.paths, start: .now, plugins: Self.withoutOnboarding),
                    start: .now)
                #expect(report.route == "authenticated")
                #expect(report.finalRoute == "authenticated")
                #expect(report.pending == 0)
            }
        }
        #expect(try sqliteTables(dir.url.appendingPathComponent("trendy.sqlite")).contains("geofence_crossings"))
    }

    /// Runs a parsed command with `plugins` as the program's list; its exit code (0 when it returned).
    static func exitCode(_ command: some AsyncParsableCommand, plugins: [any TrendyPlugin]) async -> Int32 {
        do {
            try await AppPlugins.$active.withValue(plugins) {
                var command = command
                try await command.run()
            }
            return 0
        } catch let exit as ExitCode {
            return exit.rawValue
        } catch {
            return -1
        }
    }

    @Test func commandsThatNeedAMissingFeatureSayItInsteadOfLosingWork() async throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        let id = UUIDv7Generator().next()
        // A crossing no one would handle is refused, not stored and forgotten.
        let wake = try LaunchCommand.parse(["--data-dir", dir.path, "--region-event", "enter:\(id)", "--no-wait"])
        #expect(await Self.exitCode(wake, plugins: Self.withoutGeofence) == 78)
        #expect(!FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("region-inbox").path))
        // The tour walks through onboarding and geofencing on the embedded backend.
        #expect(await Self.exitCode(try TourCommand.parse([]), plugins: Self.withoutOnboarding) == 78)
        #expect(await Self.exitCode(try TourCommand.parse([]), plugins: AppPlugins.standard) == 78)
    }

    @Test func theAppCannotBeBuiltWithoutItsPlatform() throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        #expect(throws: AppComposition.MissingPlugin.self) {
            try Self.environment(
                [LoggingPlugin(), AuthPlugin(), GeofencePlugin()], dir, URL(string: "http://127.0.0.1:9")!)
        }
        #expect(!FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("trendy.sqlite").path))
        // The features without the dev backend plugin: no server unless one is named.
        #expect(throws: NoServerConfigured.self) {
            try AppComposition.live(
                paths: AppPaths(dataDirectory: dir.url),
                logging: .init(configuration: .init(), consoleFormat: .human, consoleLevel: .critical),
                backend: .embedded, plugins: AppPlugins.standard)
        }
    }

    @Test func pluginsListsEveryFeatureWithItsCommandsAndSettings() async throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        let r = try await TrendyProcess.run(["plugins", "--json", "--data-dir", dir.path])
        #expect(r.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        let plugins = object?["plugins"] as? [[String: Any]] ?? []
        #expect(
            plugins.map { $0["name"] as? String } == [
                "logging", "geofence", "auth", "sync", "onboarding", "insights", "dev-backend",
            ])
        #expect(plugins.last?["commands"] as? [String] == ["serve"])
        let geofence = plugins.first { $0["name"] as? String == "geofence" }
        #expect(geofence?["commands"] as? [String] == ["geofence", "location"])
        #expect(
            (geofence?["settings"] as? [[String: Any]])?.contains { $0["name"] as? String == "location.json" } == true)
        #expect(!FileManager.default.fileExists(atPath: dir.path), "listing plugins touches no data directory")
    }
}

/// The table names in the SQLite database at `url`.
func sqliteTables(_ url: URL) throws -> [String] {
    let queue = try DatabaseQueue(path: url.path)
    defer { try? queue.close() }
    return try queue.read { db in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") }
}
