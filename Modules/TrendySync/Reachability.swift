import Synchronization
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
    let api: any TrendyAPIClient
    /// The longest a check takes.
    public let budget: Duration
    /// Grace after `budget` before the timer answers for a transport that overran it.
    let grace: Duration
    /// `host:port`, named when the timer answers (the transport's own failures name it anyway).
    let server: String

    /// Creates a probe.
    public init(api: any TrendyAPIClient, budget: Duration = NetworkBudget.standard.respond, server: String = "") {
        self.api = api
        self.budget = budget
        self.grace = .milliseconds(250)
        self.server = server
    }

    /// Implements ``ReachabilityProbe/check()``.
    public func check() async -> Reachability {
        let api = self.api
        let budget = self.budget
        let server = self.server
        let limit = budget + grace
        let answer = FirstAnswer()
        return await withCheckedContinuation { continuation in
            answer.install(continuation)
            let request = Task {
                do throws(TrendyAPIError) {
                    _ = try await api.health(within: budget)
                    answer.give(.reachable)
                } catch {
                    if case .transport(let failure) = error {
                        answer.give(.offline(failure))
                    } else {
                        answer.give(.failing(error))
                    }
                }
            }
            let timer = Task {
                try? await Task.sleep(for: limit)
                guard !Task.isCancelled else { return }
                if answer.give(.offline(.notResponding(server: server, seconds: budget.asSeconds))) { request.cancel() }
            }
            answer.onAnswer { timer.cancel() }
        }
    }
}

/// Resumes a continuation with the first answer given; later answers are dropped.
final class FirstAnswer: Sendable {
    struct State {
        var continuation: CheckedContinuation<Reachability, Never>?
        var answered = false
        var after: (@Sendable () -> Void)?
    }
    let state = Mutex(State())

    func install(_ continuation: CheckedContinuation<Reachability, Never>) {
        state.withLock { $0.continuation = continuation }
    }

    /// Runs `body` once an answer is given (at once if it already was).
    func onAnswer(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { s -> Bool in
            if s.answered { return true }
            s.after = body
            return false
        }
        if now { body() }
    }

    /// Gives `answer`; true when it was the first.
    @discardableResult
    func give(_ answer: Reachability) -> Bool {
        let taken = state.withLock { s -> (CheckedContinuation<Reachability, Never>, (@Sendable () -> Void)?)? in
            guard !s.answered, let c = s.continuation else { return nil }
            s.answered = true
            s.continuation = nil
            defer { s.after = nil }
            return (c, s.after)
        }
        guard let (continuation, after) = taken else { return false }
        continuation.resume(returning: answer)
        after?()
        return true
    }
}
