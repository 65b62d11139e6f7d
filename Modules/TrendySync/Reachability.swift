import TrendyAPI

/// Whether the server answers right now.
public enum Reachability: Sendable, Equatable {
    /// The health check answered.
    case reachable
    /// No answer: refused, unroutable, or silent for the whole budget.
    case offline(TransportFailure)
    /// The server answered, with an error (a 5xx while it starts or fails).
    case failing(TrendyAPIError)

    /// The sentence a person reads (nil when reachable).
    public var explanation: String? {
        switch self {
        case .reachable: return nil
        case .offline(let failure): return failure.description
        case .failing(let error):
            switch error {
            case .decoding:
                return "The server answered, but not as a Trendy API server (its health answer is unreadable)"
            case .notFound(let p), .badRequest(let p), .unauthorized(let p), .conflict(let p), .payloadTooLarge(let p),
                .validation(_, let p), .rateLimited(_, let p):
                return "The server answered the health check with HTTP \(p.status): is this the Trendy API's address?"
            case .server(let status, _):
                return "The server answered the health check with HTTP \(status) (it is failing or starting)"
            case .transport(let failure):
                return failure.description
            }
        }
    }
}

/// The reachability port: the one question a sync pass (and the launch banner) asks before it
/// touches the network. An answer always comes within the probe's budget: a refused or
/// unroutable connection at once, a server that accepts and never answers after the budget.
public protocol ReachabilityProbe: Sendable {
    /// The longest ``check()`` takes.
    var budget: Duration { get }
    /// Asks the server.
    func check() async -> Reachability
}

/// The probe over the API's health check (`GET /api/v1/health`), bounded by `budget` twice:
/// the request's own deadline, and a timer that answers `notResponding` even if the transport
/// overruns it or ignores cancellation (the pass never waits longer than its budget).
public struct HealthCheckProbe: ReachabilityProbe {
    let api: any ServerHealthCheck
    /// The longest a check takes.
    public let budget: Duration
    /// Grace after `budget` before the timer answers for a transport that overran it.
    let grace: Duration
    /// `host:port`, named when the timer answers (the transport's own failures name it anyway).
    let server: String

    /// Creates a probe.
    public init(api: any ServerHealthCheck, budget: Duration = NetworkBudget.standard.respond, server: String = "") {
        self.api = api
        self.budget = budget
        self.grace = .milliseconds(250)
        self.server = server
    }

    public func check() async -> Reachability {
        let api = self.api
        let budget = self.budget
        let server = self.server
        let call: @Sendable () async -> Reachability = {
            do throws(TrendyAPIError) {
                _ = try await api.health(within: budget)
                return .reachable
            } catch {
                if case .transport(let failure) = error { return .offline(failure) }
                return .failing(error)
            }
        }
        return await withDeadline(
            budget + grace, orElse: { .offline(.notResponding(server: server, seconds: budget.asSeconds)) }, call)
    }
}
