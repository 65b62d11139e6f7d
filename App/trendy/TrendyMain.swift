import TrendyApp

/// The `trendy` executable: all of it lives in TrendyApp, the composition root.
@main
enum TrendyMain {
    static func main() async {
        // The launch measures from here.
        await LaunchClock.$mainStarted.withValue(ContinuousClock.now) { await TrendyCommand.start() }
    }
}
