import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyLogging
import TrendyModels

/// The live client reads big answers away from Swift's cooperative pool: what it reads there
/// must be what it would have read in place, and a broken big answer is still a clear error.
@Suite(.timeLimit(.minutes(5)))
struct LiveClientDecodingTests {
    /// Serves `/api/v1/changes` with `body`, calls `body` with a client for it.
    func withCannedFeed(
        _ answer: String, headers: [(String, String)] = [], _ body: (LiveTrendyAPIClient) async throws -> Void
    ) async throws {
        let router = Router()
        router.get("/api/v1/changes") { _, _ -> Response in
            var fields: HTTPFields = [.contentType: "application/json"]
            for (name, value) in headers { fields[.init(name)!] = value }
            return Response(status: .ok, headers: fields, body: .init(byteBuffer: ByteBuffer(string: answer)))
        }
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) },
            logger: quietLogger())
        let serving = Task { try await app.runService(gracefulShutdownSignals: []) }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let client = LiveTrendyAPIClient(
            configuration: .init(baseURL: URL(string: "http://127.0.0.1:\(port)")!), http: http,
            tokens: StaticTokenProvider("token"), logger: LogSystem.disabled().logger(.api))
        do {
            try await body(client)
        } catch {
            try await http.shutdown()
            serving.cancel()
            throw error
        }
        try await http.shutdown()
        serving.cancel()
    }

    /// A server's answer names its newest change in `Trendy-Cursor` / `Trendy-Cursor-At` (D60):
    /// the client keeps it until taken, and ignores one that is not a positive cursor and a date
    /// (an outsider's hostile server: a stored `at` that is not a date made every later pull fail
    /// `422` until `--full`).
    @Test func aMarkIsKeptOnlyWhenItIsACursorAndADate() async throws {
        let text = String(decoding: try TrendyJSON.encoder().encode(page(1)), as: UTF8.self)
        let at = "2026-11-27T10:00:00.000Z"
        let cases: [(String, String, LatestCursor?)] = [
            ("42", at, LatestCursor(cursor: 42, at: at)),
            ("42", "yesterday", nil), ("42", "", nil), ("42", "\(at)&since=0", nil),
            ("0", at, nil), ("-3", at, nil), ("x", at, nil), ("99999999999999999999", at, nil),
        ]
        for (cursor, time, expected) in cases {
            let headers = [(APIPaths.writeCursorHeader, cursor), (APIPaths.writeCursorAtHeader, time)]
            try await withCannedFeed(text, headers: headers) { client in
                _ = try await client.changes(since: 0, limit: 10)
                #expect(client.takeWriteMark() == expected, "\(cursor) \(time)")
                #expect(client.takeWriteMark() == nil, "taken once")
            }
        }
    }

    /// Cancelling the stub server at the end logs errors at `error` level; they mean nothing here.
    func quietLogger() -> Logger {
        var logger = Logger(label: "stub-server")
        logger.logLevel = .critical
        return logger
    }

    func page(_ count: Int) -> ChangesPage {
        let ids = UUIDv7Generator()
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        let type = ids.next()
        return ChangesPage(
            changes: (0..<count).map { i in
                let event = Event(id: ids.next(), eventTypeId: type, timestamp: t0, notes: "note \(i)")
                return Change(
                    cursor: Int64(i + 1), entityType: .event, entityId: event.id.description, operation: .create,
                    data: .event(Timestamped(event, createdAt: t0, updatedAt: t0)), createdAt: t0)
            }, nextCursor: Int64(count), hasMore: false)
    }

    @Test func aBigPageReadsTheSameAsInPlace() async throws {
        let expected = page(400)
        let text = String(decoding: try TrendyJSON.encoder().encode(expected), as: UTF8.self)
        #expect(text.utf8.count > 64 * 1024)  // well past the hand-over size
        try await withCannedFeed(text) { client async throws in
            let read = try await client.changes(since: 0, limit: 500)
            #expect(read == expected)
        }
    }

    @Test func aBrokenBigPageIsADecodingError() async throws {
        var text = String(decoding: try TrendyJSON.encoder().encode(page(400)), as: UTF8.self)
        text.removeLast(10)
        try await withCannedFeed(text) { client in
            do {
                _ = try await client.changes(since: 0, limit: 500)
                Issue.record("a truncated page was read")
            } catch let error as TrendyAPIError {
                guard case .decoding(let message) = error else {
                    Issue.record("expected a decoding error, got \(error)")
                    return
                }
                #expect(message.contains("ChangesPage"))
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
    }
}
