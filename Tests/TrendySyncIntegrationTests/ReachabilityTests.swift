import AsyncHTTPClient
import Foundation
import Testing
import TrendyAPI
import TrendyAPILive
import TrendyAPITesting
import TrendyHTTP
import TrendyLogging
import TrendySync

/// The reachability port over the real HTTP client: a refused or unroutable server is known at
/// once, a silent one after the budget, and each says so in words.
@Suite(.timeLimit(.minutes(5)))
struct ReachabilityTests {
    struct NoTokens: AccessTokenProvider {
        func accessToken() async throws -> String? { nil }
        func accessTokenRejected(_ token: String) async {}
    }

    /// Runs `body` with a probe for `url` whose client has `budget`.
    func withProbe(
        _ url: URL, budget: NetworkBudget, _ body: (HealthCheckProbe) async throws -> Void
    ) async throws {
        let http = HTTPTransport.makeClient(budget: budget)
        let api = LiveTrendyAPIClient(
            configuration: .init(baseURL: url, budget: budget), http: http, tokens: NoTokens(),
            logger: LogSystem.disabled().logger(.api))
        do {
            try await body(
                HealthCheckProbe(api: api, budget: budget.respond, server: HTTPTransport.serverName(url.absoluteString))
            )
        } catch {
            try await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }

    /// A port nothing listens on (bound once, then closed).
    func closedPort() throws -> Int {
        let listener = try SilentServer()
        return listener.port
    }

    @Test func aRefusedConnectionIsOfflineAtOnceNotAfterTheConnectTimeout() async throws {
        let port = try closedPort()
        // A long budget: the answer must not come from waiting it out (a wait would say "did not
        // answer", and take the whole minute).
        try await withProbe(URL(string: "http://127.0.0.1:\(port)")!, budget: NetworkBudget(respond: .seconds(60))) {
            probe in
            let started = ContinuousClock.now
            let answer = await probe.check()
            #expect(answer == .offline(.refused(server: "127.0.0.1:\(port)")))
            // Far below the 60 s a wait would take, with room for a machine busy with other work (a
            // CI run beside an outside attack starved it for 17 s).
            #expect(ContinuousClock.now - started < .seconds(45))
            #expect(answer.explanation == "The server at 127.0.0.1:\(port) refused the connection")
        }
    }

    @Test func anUnroutableAddressIsOfflineAtOnce() async throws {
        // TCP to the limited broadcast address has no route (ENETUNREACH) on Linux.
        try await withProbe(URL(string: "http://255.255.255.255:9")!, budget: NetworkBudget(respond: .seconds(60))) {
            probe in
            let started = ContinuousClock.now
            let answer = await probe.check()
            guard case .offline(let failure) = answer else {
                Issue.record("expected offline, got \(answer)")
                return
            }
            // Known at once: refused or unroutable, never "did not answer" (waited) or "dropped".
            switch failure {
            case .refused, .unreachable: break
            default: Issue.record("expected refused or unreachable, got \(failure)")
            }
            #expect(ContinuousClock.now - started < .seconds(45))
            #expect(failure.description.contains("255.255.255.255:9"))
        }
    }

    @Test func aServerThatAcceptsAndNeverAnswersIsGivenOnlyTheBudget() async throws {
        let silent = try SilentServer()
        // The client's own limits are ten minutes: only the probe's budget can end the wait early.
        let budget = NetworkBudget(respond: .milliseconds(400), idle: .seconds(600), request: .seconds(600))
        try await withProbe(silent.url, budget: budget) { probe in
            let started = ContinuousClock.now
            let answer = await probe.check()
            let waited = ContinuousClock.now - started
            #expect(answer == .offline(.notResponding(server: "127.0.0.1:\(silent.port)", seconds: 0.4)))
            #expect(answer.explanation == "The server at 127.0.0.1:\(silent.port) did not answer within 0.4 s")
            #expect(waited >= .milliseconds(350))
            // Far below the client's ten minutes, with room for a machine whose cooperative threads
            // are busy with other work: on a 2-core CI machine the suite's own tests once held both
            // for 20 s, and a 400 ms timer could not fire until they let go.
            #expect(waited < .seconds(120))
        }
    }

    @Test func theProbeAnswersWithinItsBudgetEvenWhenTheTransportNeverReturns() async throws {
        let silent = try SilentServer()
        let http = HTTPTransport.makeClient(budget: .standard)
        let api = InterceptingAPIClient(
            LiveTrendyAPIClient(
                configuration: .init(baseURL: silent.url), http: http, tokens: NoTokens(),
                logger: LogSystem.disabled().logger(.api)))
        // The health call is held before it is sent and ignores cancellation.
        api.hold("health")
        let probe = HealthCheckProbe(api: api, budget: .milliseconds(300))
        let started = ContinuousClock.now
        let answer = await probe.check()
        // The held call never returns: any answer at all is the budget's (the wait is bounded loosely,
        // as above: a timer fires only when a cooperative thread is free to run it).
        #expect(ContinuousClock.now - started < .seconds(120))
        #expect(answer == .offline(.notResponding(server: "", seconds: 0.3)))
        api.releaseHeld()
        try await http.shutdown()
    }

    @Test func budgetsAreOrderedAndParsed() {
        let b = NetworkBudget.responding(within: 0.25)
        #expect(b.respond == .milliseconds(250))
        #expect(b.idle == .seconds(10))
        #expect(NetworkBudget.responding(within: 45).idle == .seconds(45))
        #expect(NetworkBudget.responding(within: 45).request == .seconds(45))
        #expect(TransportFailure.formatSeconds(2) == "2 s")
        #expect(TransportFailure.formatSeconds(0.5) == "0.5 s")
        #expect(HTTPTransport.serverName("http://[::1]:8080/api") == "[::1]:8080")
        #expect(HTTPTransport.serverName("https://example.com/x") == "example.com:443")
    }
}
