import ArgumentParser
import Foundation

/// The `trendy` program: a headless Trendy client.
public struct TrendyCommand: AsyncParsableCommand {
    /// The command tree, with every standard plugin's commands.
    public static let configuration = commandTree(plugins: AppPlugins.standard)

    /// The command tree of a program built from `plugins`: the program's own commands, then each
    /// plugin's.
    public static func commandTree(plugins: [any TrendyPlugin]) -> CommandConfiguration {
        CommandConfiguration(
            commandName: "trendy",
            abstract: "Trendy: track life events, offline first.",
            discussion: "Exit codes: 0 ok, 1 failure, 64 usage, 65 bad data, 66 no input, 69 server unavailable, "
                + "70 internal, 73 cannot create output, 74 I/O, 75 try later, 77 not signed in, 78 configuration.",
            version: TrendyVersion.current,
            subcommands: AppPlugins.commands(for: plugins)
        )
    }

    /// Creates the command.
    public init() {}

    /// Runs `trendy` with `arguments` (the process's own by default).
    ///
    /// `trendy launch` decides its route before any argument parsing: the parser's first run
    /// costs milliseconds (the runtime's first conformance lookups), while the route needs only
    /// the data directory, read from the raw arguments with the option's own name. The launch is
    /// then parsed as its own command (not the whole tree) and uses that decision when its parsed
    /// data directory is the same one. A region-event wake-up is parsed the same way but stores
    /// its crossing before it decides anything.
    /// Anything the launch parser does not take (help, a usage error) goes through the whole
    /// tree, so every message and exit code is what it is without the shortcut.
    ///
    /// `root` is the program's command tree and `plugins` its feature list (the executable's
    /// composition root): every command this runs builds its environment from `plugins`.
    public static func start<Root: AsyncParsableCommand>(
        _ arguments: [String] = Array(CommandLine.arguments.dropFirst()), root: Root.Type = TrendyCommand.self,
        plugins: [any TrendyPlugin] = AppPlugins.standard
    ) async {
        await AppPlugins.$active.withValue(plugins) { await run(arguments, root: root) }
    }

    static func run<Root: AsyncParsableCommand>(_ arguments: [String], root: Root.Type) async {
        guard arguments.first == LaunchCommand.configuration.commandName else {
            await Root.main(arguments)
            return
        }
        let rest = Array(arguments.dropFirst())
        var early: AppLaunch.EarlyDecision?
        // A region-event wake-up stores its crossing before anything else, so it decides later.
        if !rest.contains(where: { $0.hasPrefix("--" + LaunchCommand.regionEventOption) }) {
            let paths = AppPaths.resolve(
                flag: GlobalOptions.dataDirectory(in: rest), environment: ProcessInfo.processInfo.environment)
            early = AppLaunch.EarlyDecision(
                paths: paths, decision: AppLaunch.decide(paths: paths, start: LaunchClock.mainStarted ?? .now))
        }
        guard let launch = try? LaunchCommand.parse(rest) else {
            await Root.main(arguments)
            return
        }
        await LaunchClock.$early.withValue(early) {
            do {
                try await launch.run()
            } catch {
                LaunchCommand.exit(withError: error)
            }
        }
    }
}

/// The program's version.
public enum TrendyVersion {
    /// Semantic version of this build.
    public static let current = "0.1.0"
}
