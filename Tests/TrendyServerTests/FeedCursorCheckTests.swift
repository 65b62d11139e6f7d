import Foundation
import NIOHTTP1
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyModels
import TrendyServerTestSupport
import TrendyTestSupport

/// D59: a feed page names the time of the change its `next_cursor` names (`next_cursor_at`), and
/// a device that sends it back (`since_at`) is told `409 cursor_ahead` when this server's change
/// at that cursor is missing or another one — a server restored from a backup whose new changes
/// took the lost ones' numbers. On both stores.
@Suite(.timeLimit(.minutes(5)))
struct FeedCursorCheckTests {
    /// `n` events logged one second apart (each change its own time).
    func log(_ h: ServerHarness, _ api: LiveTrendyAPIClient, _ type: EventType, _ n: Int) async throws {
        for _ in 0..<n {
            h.clock.advance(1)
            _ = try await api.createEvents([h.event(type)], idempotencyKey: nil)
        }
    }

    func cursorAhead(_ body: () async throws(TrendyAPIError) -> Void) async -> Bool {
        guard case .conflict(let problem) = await apiError(body) else { return false }
        return problem.code == ProblemCode.cursorAhead
    }

    @Test func pagesAndTheLatestCursorNameTheTimeOfTheirChange() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let type = try await h.makeType(api)
            try await log(h, api, type, 4)
            let first = try await api.changes(since: 0, at: nil, limit: 2, omitting: nil)
            #expect(first.nextCursor == 2 && first.hasMore)
            let changeTwo = try #require(first.changes.last)
            #expect(first.nextCursorAt == ISO8601.format(changeTwo.createdAt))
            // Sent back, it reads on; the last page names the newest change, as latest-cursor does.
            let rest = try await api.changes(since: 2, at: first.nextCursorAt, limit: 10, omitting: nil)
            #expect(rest.changes.map(\.cursor) == [3, 4, 5])
            let latest = try await api.latestCursor()
            #expect(latest.cursor == 5 && latest.at == rest.nextCursorAt && latest.at != nil)
            // An empty page names the cursor's own change, so a cursor kept from before learns it.
            let empty = try await api.changes(since: 5, at: nil, limit: 10, omitting: nil)
            #expect(empty.changes.isEmpty && empty.nextCursor == 5 && empty.nextCursorAt == latest.at)
            // Left out for the device that made it (D57), a change still names the page's end.
            h.clock.advance(1)
            try await ChangeBase.$current.withValue(ChangeBase(version: 0, deviceId: "A")) {
                _ = try await api.createEvents([h.event(type)], idempotencyKey: nil)
            }
            let own = try await api.changes(since: 5, at: latest.at, limit: 10, omitting: "A")
            let newest = try await api.latestCursor()
            #expect(own.changes.isEmpty && own.nextCursor == 6 && own.nextCursorAt == newest.at)
            #expect(newest.at != latest.at)
            // A new account's feed: nothing to name.
            let (other, _) = try await h.newUserClient()
            let none = try await other.latestCursor()
            #expect(none.cursor == 0 && none.at == nil)
            #expect(try await other.changes(since: 0, at: nil, limit: 10, omitting: nil).nextCursorAt == nil)
        }
    }

    @Test func aCursorWhoseChangeIsAnotherNowIsRefused() async throws {
        try await ServerHarness.with { h in
            let (api, _) = try await h.newUserClient()
            let type = try await h.makeType(api)
            try await log(h, api, type, 3)
            let page = try await api.changes(since: 0, at: nil, limit: 10, omitting: nil)
            let at = try #require(page.nextCursorAt)
            // What a device read from a server since restored: change 2 then was another, written
            // at another time. Refused whether the page would be empty or not.
            let lost = ISO8601.format(try #require(ISO8601.parse(at)).addingTimeInterval(-3_600))
            #expect(
                await cursorAhead { () throws(TrendyAPIError) in
                    _ = try await api.changes(since: 2, at: lost, limit: 10, omitting: nil)
                })
            #expect(
                await cursorAhead { () throws(TrendyAPIError) in
                    _ = try await api.changes(since: 4, at: lost, limit: 10, omitting: nil)
                })
            // A cursor this server never reached: refused with or without its time.
            #expect(
                await cursorAhead { () throws(TrendyAPIError) in
                    _ = try await api.changes(since: 9, at: at, limit: 10, omitting: nil)
                })
            #expect(
                await cursorAhead { () throws(TrendyAPIError) in
                    _ = try await api.changes(since: 9, at: nil, limit: 10, omitting: nil)
                })
            // The same time written another way (an offset, more digits) is the same instant.
            #expect(at.hasSuffix("Z"))
            let offset = at.dropLast() + "000+00:00"
            #expect(try await api.changes(since: 4, at: String(offset), limit: 10, omitting: nil).changes.isEmpty)
        }
    }

    @Test func aTimeThatIsNotOneIsAValidationError() async throws {
        try await ServerHarness.with { h in
            let (api, session) = try await h.newUserClient()
            let type = try await h.makeType(api)
            try await log(h, api, type, 1)
            for bad in ["yesterday", "2026-13-01T00:00:00Z", ""] {
                let query = bad.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                let response = try await h.raw(
                    .GET, "\(APIPaths.changes)?since=1&since_at=\(query)",
                    headers: [("Authorization", "Bearer \(session.accessToken)")])
                #expect(response.status == 422, "\(bad): \(response.status)")
                #expect(String(decoding: response.body, as: UTF8.self).contains(APIPaths.sinceAtQuery))
            }
        }
    }
}
