import Foundation
import Synchronization

/// Token buckets per key (user id or address) that refill continuously, so a client that keeps
/// sending recovers as soon as it slows down (unlike the reference limiter, which never reset).
final class RateLimiter: Sendable {
    struct Bucket {
        var tokens: Double
        var updated: Double
    }

    /// The verdict for one request.
    struct Decision: Equatable {
        var allowed: Bool
        var remaining: Int
        /// Seconds until a token is available (when refused) or the bucket is full (when allowed).
        var retryAfter: Double
        var limit: Int
    }

    let limit: RateLimit
    let buckets = Mutex<[String: Bucket]>([:])
    let now: @Sendable () -> Double
    let rejected: @Sendable () -> Void

    init(
        _ limit: RateLimit, now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 },
        rejected: @escaping @Sendable () -> Void = {}
    ) {
        self.limit = limit
        self.now = now
        self.rejected = rejected
    }

    func check(_ key: String) -> Decision {
        let decision = take(key)
        if !decision.allowed { rejected() }
        return decision
    }

    private func take(_ key: String) -> Decision {
        let l = limit
        let t = now()
        return buckets.withLock { all in
            if all.count > 10_000 {
                // Forget buckets that have refilled completely; they carry no state.
                all = all.filter { t - $0.value.updated < l.capacity / max(l.refillPerSecond, 0.001) }
            }
            var b = all[key] ?? Bucket(tokens: l.capacity, updated: t)
            b.tokens = min(l.capacity, b.tokens + (t - b.updated) * l.refillPerSecond)
            b.updated = t
            let decision: Decision
            if b.tokens >= 1 {
                b.tokens -= 1
                decision = Decision(
                    allowed: true, remaining: Int(b.tokens),
                    retryAfter: (l.capacity - b.tokens) / max(l.refillPerSecond, 0.001), limit: Int(l.capacity))
            } else {
                decision = Decision(
                    allowed: false, remaining: 0, retryAfter: (1 - b.tokens) / max(l.refillPerSecond, 0.001),
                    limit: Int(l.capacity))
            }
            all[key] = b
            return decision
        }
    }
}
