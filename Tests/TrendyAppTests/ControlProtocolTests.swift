import Foundation
import Testing

@testable import TrendyApp

/// The control socket's one codec: what `trendy open|location` sends is what the running app
/// reads, and its reply's kind decides the client's exit status — no prefix spelled twice.
@Suite struct ControlProtocolTests {
    @Test(arguments: [
        ControlRequest.open(DeepLink("trendy://log/Coffee")!), .open(DeepLink("trendy://events")!),
        .location(point: ["52.52", "13.405"], at: nil), .location(point: ["-33.86,151.2"], at: "2026-11-26T08:00:00Z"),
        .replay(path: "/tmp/a track with spaces.gpx", speed: 60), .replay(path: "/tmp/t.gpx", speed: nil),
    ])
    func everyRequestReadsBackAsSent(request: ControlRequest) throws {
        #expect(try ControlRequest(line: request.line) == request)
    }

    @Test(arguments: ["", "   ", "frobnicate x", "open not-a-link", "replay max", "location"])
    func aLineThatIsNoRequestIsRefusedWithItsReason(line: String) {
        #expect(throws: ControlRequest.Unreadable.self) { try ControlRequest(line: line) }
    }

    @Test func everyReplyReadsBackAndOnlyARefusalFails() {
        for reply in [ControlReply.done("1 fix(es): 1 crossing(s)"), .waiting("opens later"), .refused("no")] {
            #expect(ControlReply(line: reply.line) == reply)
        }
        #expect(ControlReply(line: "error: an older app's answer") == nil)
        #expect(ControlReply.refused("why").description == "error: why")
        #expect(ControlReply.done("opened x").description == "opened x")
    }

    /// A request is taken only by its deadline, and only with one (issue 32, item 7).
    @Test func aRequestIsTakenOnlyByItsDeadline() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let line = ControlDeadline.stamp("open trendy://calendar", by: now.addingTimeInterval(3))
        #expect(try ControlDeadline.take(line, now: now).get() == "open trendy://calendar")
        #expect(try ControlDeadline.take(line, now: now.addingTimeInterval(3)).get() == "open trendy://calendar")
        guard case .failure(let late) = ControlDeadline.take(line, now: now.addingTimeInterval(3.01)) else {
            Issue.record("a late request was taken")
            return
        }
        #expect(late.reason.contains("gave up"))
        for bare in ["open trendy://calendar", "by soon open x", "by 12", ""] {
            guard case .failure = ControlDeadline.take(bare, now: now) else {
                Issue.record("taken without a deadline: \(bare)")
                continue
            }
        }
    }
}
