import Foundation
import Testing
import TrendyModels
import TrendyTestSupport

@testable import TrendyApp

/// Issue 19: output a screen reader can read, and no colour or cursor control where the
/// terminal or the person says no.
@Suite(.timeLimit(.minutes(5)))
struct AccessibleOutputTests {
    static let decorations: [Character] = ["┌", "│", "└", "─", "█", "░", "▇", "⟳", "⚠", "→", "·", "\u{1B}"]

    @Test func theStyleFollowsTheFlagTheEnvironmentAndTheTerminal() {
        let terminal = TerminalStyle.resolve(plain: false, environment: [:], isTerminal: true)
        #expect(terminal == TerminalStyle(plain: false, colour: true, cursorControl: true))
        #expect(TerminalStyle.resolve(plain: false, environment: [:], isTerminal: false).colour == false)
        let noColour = TerminalStyle.resolve(plain: false, environment: ["NO_COLOR": "1"], isTerminal: true)
        #expect(noColour == TerminalStyle(plain: false, colour: false, cursorControl: true))
        // An empty NO_COLOR does not count (no-color.org).
        #expect(TerminalStyle.resolve(plain: false, environment: ["NO_COLOR": ""], isTerminal: true).colour)
        let dumb = TerminalStyle.resolve(plain: false, environment: ["TERM": "dumb"], isTerminal: true)
        #expect(dumb == TerminalStyle(plain: false, colour: false, cursorControl: false))
        for style in [
            TerminalStyle.resolve(plain: true, environment: [:], isTerminal: true),
            TerminalStyle.resolve(plain: false, environment: ["TRENDY_PLAIN": "1"], isTerminal: true),
        ] {
            #expect(style == TerminalStyle(plain: true, colour: false, cursorControl: false))
        }
        #expect(!TerminalStyle.resolve(plain: false, environment: ["TRENDY_PLAIN": "0"], isTerminal: true).plain)
    }

    @Test func plainScreensSayTheSameWithoutDecoration() {
        let facts = OnboardingFacts(email: nil, typeNames: ["Coffee"], eventCount: 0, permissions: [:])
        let rich = ScreenRenderer.render(.onboarding(.logFirstEvent, facts))
        let plain = ScreenRenderer.render(.onboarding(.logFirstEvent, facts), plain: true)
        #expect(rich.contains("█"))
        #expect(!plain.contains { Self.decorations.contains($0) }, "\(plain)")
        #expect(plain.contains("Step 4 of 6, 60% done."))
        #expect(plain.contains("Next: trendy onboarding next --log \"Coffee\""))
        let main = ScreenRenderer.render(
            .main(
                .analytics, MainFacts(typeNames: [:], recent: [], today: 0, perType: [("Tea", 3)]), banner: "Offline"),
            plain: true)
        #expect(main.contains("Trendy, Analytics tab (also: Dashboard, Events, Calendar, Types, Places, Account)"))
        #expect(main.contains("Sync: Offline"))
        #expect(main.contains("  Tea: 3"))
        #expect(!main.contains { Self.decorations.contains($0) }, "\(main)")
        // The month grid is a list of the days with events, or says there are none.
        let month = Date(timeIntervalSince1970: 1_793_491_200)  // 2026-11-01T00:00:00Z
        func calendar(_ days: [Int: Int]) -> String {
            ScreenRenderer.render(
                .main(
                    .calendar, MainFacts(typeNames: [:], recent: [], today: 0, days: days, month: month), banner: "Up"),
                plain: true, timeZone: TimeZone(identifier: "UTC")!)
        }
        #expect(calendar([3: 2, 24: 1]).contains("November 2026\n  Day 3: 2 event(s)\n  Day 24: 1 event(s)"))
        #expect(calendar([:]).contains("  No events this month."))
        #expect(!calendar([3: 2]).contains { Self.decorations.contains($0) })
    }

    @Test func theRealBinaryPrintsPlainFramesAndScreens() async throws {
        let dir = TemporaryDirectory("trendy-it", create: false)
        let launch = try await TrendyProcess.run(["launch", "--plain", "--data-dir", dir.path])
        #expect(launch.status == 0, "\(launch.stderr)")
        #expect(launch.stdout.contains("Frame 1 at"))
        #expect(launch.stdout.contains("Trendy, Welcome"))
        #expect(!launch.stdout.contains { Self.decorations.contains($0) }, "\(launch.stdout)")
        let status = try await TrendyProcess.run(
            ["onboarding", "status", "--data-dir", dir.path], environment: ["TRENDY_PLAIN": "1"])
        #expect(status.status == 0)
        #expect(status.stdout.contains("Step 1 of 6, 0% done."))
        #expect(!(status.stdout + status.stderr).contains { Self.decorations.contains($0) })
        // Every command's human lines, not only screens: status, errors, summaries.
        for args in [["status"], ["types", "add", "Tea"], ["types", "add", "Tea"], ["log", "Nope"]] {
            let r = try await TrendyProcess.run(args + ["--plain", "--data-dir", dir.path])
            #expect(
                !(r.stdout + r.stderr).contains { Self.decorations.contains($0) }, "\(args): \(r.stdout)\(r.stderr)")
        }
        // Without a terminal there is never an escape sequence, whatever happens.
        let failing = try await TrendyProcess.run(
            ["sync", "--data-dir", dir.path, "--api-url", "http://127.0.0.1:9"], environment: ["NO_COLOR": "1"])
        #expect(!(failing.stdout + failing.stderr).contains("\u{1B}"))
    }
}
