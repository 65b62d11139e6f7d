import TrendyApp

/// The `trendy` executable: all of it lives in TrendyApp, the composition root.
@main
enum TrendyMain {
    static func main() async {
        await TrendyCommand.main(nil)
    }
}
