import ArgumentParser

/// The `trendy` program: a headless Trendy client.
public struct TrendyCommand: AsyncParsableCommand {
    /// The command tree.
    public static let configuration = CommandConfiguration(
        commandName: "trendy",
        abstract: "Trendy: track life events, offline first.",
        discussion: "Exit codes: 0 ok, 1 failure, 64 usage, 65 bad data, 66 no input, 69 server unavailable, "
            + "70 internal, 73 cannot create output, 74 I/O, 75 try later, 77 not signed in, 78 configuration.",
        version: TrendyVersion.current,
        subcommands: [
            VersionCommand.self, SignupCommand.self, LoginCommand.self, LogoutCommand.self, WhoamiCommand.self,
            AccountCommand.self,
            TypesCommand.self, LogCommand.self, EventsCommand.self, ImportCommand.self, SyncCommand.self,
            ConflictsCommand.self,
            StatusCommand.self, GeofenceCommand.self, LocationCommand.self, LaunchCommand.self, RepairCommand.self,
            OnboardingCommand.self,
            TourCommand.self, LogsCommand.self,
            ServeCommand.self,
        ]
    )

    /// Creates the command.
    public init() {}
}

/// The program's version.
public enum TrendyVersion {
    /// Semantic version of this build.
    public static let current = "0.1.0"
}
