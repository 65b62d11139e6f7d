import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Synchronization
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyLogging
import TrendyModels
import TrendyServer
import TrendyServerTestSupport
import TrendyTestSupport

/// A real server on an ephemeral loopback port, an HTTP client, and helpers to sign up users.
struct ServerHarness: Sendable {
    let test: RunningTestServer
    let clock: ManualClock
    let logs: InMemoryLogSink
    let ids: UUIDv7Generator

    var server: TrendyServer { test.server }
    var running: RunningServer { test.running }
    var http: HTTPClient { test.http }
    var baseURL: URL { test.baseURL }

    static func with(
        _ configuration: ServerConfiguration = .testing(), realTime: Bool = false,
        _ body: (ServerHarness) async throws -> Void
    ) async throws {
        let clock = ManualClock()
        if realTime { clock.set(Date()) }
        let sink = InMemoryLogSink()
        let logs = LogSystem(configuration: .init(defaultLevel: .debug), sinks: [sink])
        let now: @Sendable () -> Date
        if realTime {
            now = { Date() }
        } else {
            now = { clock.now }
        }
        try await RunningTestServer.with(configuration, logs: logs, now: now) { test in
            try await body(ServerHarness(test: test, clock: clock, logs: sink, ids: UUIDv7Generator(now: now)))
        }
    }

    /// A raw HTTP exchange (for auth routes and malformed bodies).
    typealias Raw = RawResponse

    func raw(
        _ method: HTTPMethod, _ path: String, body: String? = nil, bodyData: Data? = nil,
        headers: [(String, String)] = []
    ) async throws -> Raw {
        try await test.raw(method, path, body: body, bodyData: bodyData, headers: headers)
    }

    /// Signs up a user and returns the session.
    func signUp(_ email: String = "user-\(UUID().uuidString.prefix(8))@example.com", password: String = "password-123")
        async throws -> GoTrueSession
    {
        try await test.signUp(email, password: password)
    }

    /// An API client using `token`.
    func client(_ token: String?) -> LiveTrendyAPIClient { test.client(token) }

    /// A signed-up user's client.
    func newUserClient() async throws -> (client: LiveTrendyAPIClient, session: GoTrueSession) {
        let session = try await signUp()
        return (client(session.accessToken), session)
    }

    /// An event type for the client's user.
    func makeType(_ client: LiveTrendyAPIClient, _ name: String = "Coffee") async throws -> EventType {
        try await client.createEventType(EventTypeCreate(id: ids.next(), name: name), idempotencyKey: nil).value
    }

    func event(_ type: EventType, at date: Date? = nil, source: SourceType = .manual, externalId: String? = nil)
        -> Event
    {
        Event(
            id: ids.next(), eventTypeId: type.id, timestamp: date ?? clock.now.addingTimeInterval(-60),
            sourceType: source, externalId: externalId)
    }
}

/// Runs `body` and returns the ``TrendyAPIError`` it threw, or records an issue.
func apiError(_ body: () async throws(TrendyAPIError) -> Void, sourceLocation: SourceLocation = #_sourceLocation)
    async -> TrendyAPIError?
{
    do {
        try await body()
        Issue.record("expected an API error", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}
