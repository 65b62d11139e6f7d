import Foundation

/// Trips after consecutive 429s: while open, nothing is sent; after the wait one probe goes out
/// (half-open); success closes it, another 429 reopens it with a doubled wait (capped).
/// `Retry-After` is honoured: the wait is never shorter than the server asked.
public struct CircuitBreaker: Sendable, Hashable {
    /// The breaker's state.
    public enum State: Sendable, Hashable {
        /// Requests flow; `consecutive429` so far.
        case closed(consecutive429: Int)
        /// No requests until `until`.
        case open(until: Date, level: Int)
        /// One probe may go out.
        case halfOpen(level: Int)
    }

    /// The state now.
    public private(set) var state: State = .closed(consecutive429: 0)
    /// 429s in a row that open the breaker.
    public var threshold = 3
    /// The first open wait.
    public var baseWait: TimeInterval = 2
    /// The longest open wait.
    public var maxWait: TimeInterval = 300

    /// A closed breaker.
    public init(threshold: Int = 3, baseWait: TimeInterval = 2, maxWait: TimeInterval = 300) {
        self.threshold = threshold
        self.baseWait = baseWait
        self.maxWait = maxWait
    }

    /// Whether a request may be sent at `now` (moves open → half-open when the wait is over).
    public mutating func allowsRequest(now: Date) -> Bool {
        switch state {
        case .closed, .halfOpen: return true
        case .open(let until, let level):
            guard now >= until else { return false }
            state = .halfOpen(level: level)
            return true
        }
    }

    /// When requests may resume, if the breaker is open.
    public var openUntil: Date? {
        if case .open(let until, _) = state { return until }
        return nil
    }

    /// A request succeeded (or failed for another reason than 429).
    public mutating func recordSuccess() { state = .closed(consecutive429: 0) }

    /// A 429 arrived; returns the time requests may resume, or nil when the breaker stays closed
    /// (the caller still waits `retryAfter` before its next request).
    @discardableResult
    public mutating func record429(retryAfter: TimeInterval?, now: Date) -> Date? {
        switch state {
        case .closed(let n):
            if n + 1 >= threshold { return open(level: 0, retryAfter: retryAfter, now: now) }
            state = .closed(consecutive429: n + 1)
            return nil
        case .halfOpen(let level), .open(_, let level):
            return open(level: level + 1, retryAfter: retryAfter, now: now)
        }
    }

    private mutating func open(level: Int, retryAfter: TimeInterval?, now: Date) -> Date {
        let backoff = min(maxWait, baseWait * pow(2, Double(level)))
        let wait = min(maxWait, max(backoff, retryAfter ?? 0))
        let until = now.addingTimeInterval(wait)
        state = .open(until: until, level: level)
        return until
    }
}

/// Exponential backoff with a cap for transient failures of one outbox entry.
public enum RetryPolicy {
    /// Attempts after which an entry is marked failed.
    public static let maxAttempts = 5
    /// How long a change waits when the server says its request still runs (never an attempt).
    public static let stillRunningDelay: TimeInterval = 5

    /// Seconds to wait before attempt `attempts + 1`.
    public static func delay(afterAttempts attempts: Int, base: TimeInterval = 1, cap: TimeInterval = 60)
        -> TimeInterval
    {
        min(cap, base * pow(2, Double(max(0, attempts - 1))))
    }
}
