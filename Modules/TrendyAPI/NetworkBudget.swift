/// How long the app waits on the network before it says so (D38).
///
/// - ``respond``: a connection must be made, and the health check answered, within this; a
///   refused or unroutable connection is known at once, a server that accepts and never answers
///   after this. Default 2 s.
/// - ``idle``: silence allowed in the middle of any other request (waiting for its answer, or
///   between two parts of a large one). Default 10 s.
/// - ``request``: the most one whole request may take (a large download page). Default 30 s.
public struct NetworkBudget: Sendable, Equatable {
    /// Time to connect and for the health check to answer.
    public var respond: Duration
    /// Silence allowed while a request waits for (more of) its answer.
    public var idle: Duration
    /// The deadline of one whole request.
    public var request: Duration

    /// Creates a budget.
    public init(respond: Duration = .seconds(2), idle: Duration = .seconds(10), request: Duration = .seconds(30)) {
        self.respond = respond
        self.idle = max(idle, respond)
        self.request = max(request, self.idle)
    }

    /// The defaults (2 s, 10 s, 30 s).
    public static let standard = NetworkBudget()

    /// A budget whose response time is `seconds` (the `--server-timeout` option): the idle and
    /// request limits stay at their defaults unless `seconds` exceeds them.
    public static func responding(within seconds: Double) -> NetworkBudget {
        NetworkBudget(respond: .milliseconds(Int64((seconds * 1000).rounded())))
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    public var asSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
