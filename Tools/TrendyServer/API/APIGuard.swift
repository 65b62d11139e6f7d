import Foundation
import HTTPTypes
import Hummingbird
import JWTKit
import TrendyAPI

/// Authenticates API requests (signature, expiry, live session) and applies the per-user rate
/// limit.
struct APIGuard: Sendable {
    let store: any AccountStore
    let tokens: TokenIssuer
    let limiter: RateLimiter
    let now: @Sendable () -> Date

    static let rateLimitLimit = HTTPField.Name("RateLimit-Limit")!
    static let rateLimitRemaining = HTTPField.Name("RateLimit-Remaining")!
    static let rateLimitReset = HTTPField.Name("RateLimit-Reset")!

    /// The caller's user id.
    func userId(_ request: Request) async throws -> String {
        guard let token = BearerToken.from(request) else { throw ProblemError.unauthorized }
        let claims: AccessClaims
        do {
            claims = try await tokens.verify(token, now: now())
        } catch .expired {
            var e = ProblemError.unauthorized
            e.problem.detail = "The access token has expired; refresh it."
            throw e
        } catch {
            throw ProblemError.unauthorized
        }
        guard try await store.isSessionActive(claims.sessionId, userId: claims.sub.value) else {
            var e = ProblemError.unauthorized
            e.problem.detail = "The session has ended; sign in again."
            throw e
        }
        let decision = limiter.check("user:\(claims.sub.value)")
        guard decision.allowed else {
            let after = max(1, Int(decision.retryAfter.rounded(.up)))
            throw ProblemError(
                429, ProblemCode.rateLimited, "Too many requests",
                detail: "Rate limit of \(decision.limit) requests reached; retry after \(after) s.",
                headers: [
                    .retryAfter: String(after), Self.rateLimitLimit: String(decision.limit),
                    Self.rateLimitRemaining: "0", Self.rateLimitReset: String(after),
                ])
        }
        return claims.sub.value
    }
}
