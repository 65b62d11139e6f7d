import Foundation

/// How output may look on this terminal (D40):
///
/// - `plain` (`--plain`, or `TRENDY_PLAIN=1`): screens as sentences a screen reader reads well —
///   no box drawing, no bar charts, words instead of symbols — and no colour or cursor control;
/// - `colour`: ANSI colour in console log lines, only on a terminal, never with `NO_COLOR` set
///   (https://no-color.org) or `TERM=dumb`; a log line always says its level in words too;
/// - `cursorControl`: live progress lines rewritten in place (`\r`, erase line), only on a
///   terminal that is not `TERM=dumb`; otherwise each update is its own line.
struct TerminalStyle: Sendable, Equatable {
    var plain: Bool
    var colour: Bool
    var cursorControl: Bool

    /// Rich output (tests and renderers default to it).
    static let rich = TerminalStyle(plain: false, colour: false, cursorControl: false)

    /// Decides from the flag, the environment and whether the stream is a terminal.
    static func resolve(plain flag: Bool, environment: [String: String], isTerminal: Bool) -> TerminalStyle {
        let plainVariable = environment["TRENDY_PLAIN"].map { !$0.isEmpty && $0 != "0" } ?? false
        let plain = flag || plainVariable
        let dumb = environment["TERM"] == "dumb"
        let noColour = environment["NO_COLOR"].map { !$0.isEmpty } ?? false
        return TerminalStyle(
            plain: plain, colour: isTerminal && !dumb && !noColour && !plain,
            cursorControl: isTerminal && !dumb && !plain)
    }
}
