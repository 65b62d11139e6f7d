import ArgumentParser
import TrendyApp
import TrendyDevBackend

/// The `trendy` executable: the composition root's plugin list and the command tree built from
/// it. Everything else lives in TrendyApp and the plugins.
@main
enum TrendyMain {
    /// Every feature, and the dev backend (`trendy serve`, the embedded backend when no server
    /// URL is given).
    static let plugins: [any TrendyPlugin] = AppPlugins.standard + [DevBackendPlugin()]

    /// The `trendy` command tree.
    struct Trendy: AsyncParsableCommand {
        static let configuration = TrendyCommand.commandTree(plugins: TrendyMain.plugins)
    }

    static func main() async {
        // The launch measures from here.
        await LaunchClock.$mainStarted.withValue(ContinuousClock.now) {
            await TrendyCommand.start(root: Trendy.self, plugins: plugins)
        }
    }
}
