import Foundation

/// Everything the dev server can be told, by flags, environment or code.
public struct ServerConfiguration: Sendable {
    /// Address to bind (loopback by default).
    public var host: String = "127.0.0.1"
    /// Port; 0 picks a free one.
    public var port: Int = 8_080
    /// SQLite file; nil keeps everything in memory (tests). Unused when `databaseURL` is set.
    public var databasePath: String?
    /// A PostgreSQL database (`postgres://user@host:5432/db`): the production store, which several
    /// instances can share. Nil uses SQLite (`databasePath`).
    public var databaseURL: String?
    /// Most connections this instance opens to PostgreSQL.
    public var databasePoolSize = 10
    /// HMAC secret for access tokens (at least 32 bytes); nil means generated (and stored next
    /// to the database when there is one).
    public var jwtSecret: String?
    /// Access token lifetime.
    public var accessTokenLifetime: Duration = .seconds(3_600)
    /// How long a rotated refresh token may be presented again and still get the current session.
    public var refreshReuseInterval: Duration = .seconds(10)
    /// bcrypt cost (4 for tests, 10 by default).
    public var bcryptCost: UInt8 = 10
    /// Shortest password accepted at signup.
    public var minimumPasswordLength = 6
    /// Largest request body accepted.
    public var maxBodySize = 4 * 1024 * 1024
    /// Per-user API rate limit.
    public var apiRateLimit = RateLimit(capacity: 600, refillPerSecond: 100)
    /// Per-address auth rate limit.
    public var authRateLimit = RateLimit(capacity: 120, refillPerSecond: 4)
    /// Faults to inject from the start.
    public var faults = FaultConfiguration()
    /// Bearer token for `/admin/v1` (fault switches); nil disables the admin API.
    public var adminToken: String?
    /// How long a request waits for another request holding its `Idempotency-Key` (on this or
    /// another instance) before answering 409. Shorter than a client's request budget (the
    /// engine's is 10 s): at 30 s the client gave up first and never heard the 409, so a key a
    /// killed server still held looked like a dead network, attempt after attempt.
    public var idempotencyPatience: Duration = .seconds(5)
    /// Bearer token a Prometheus scraper must send to `GET /metrics`; nil leaves it open.
    public var metricsToken: String?
    /// The issuer claim of access tokens.
    public var issuer = "trendy-dev-server/auth/v1"
    /// Where the server "sends" mail (one file per message); nil sends none.
    public var mailDirectory: String?
    /// GoTrue's `SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION`: a password change in a
    /// session older than 24 hours needs a code from `GET /reauthenticate` (needs a mail directory).
    public var passwordChangeRequiresReauthentication = false
    /// How long a reauthentication code is valid.
    public var reauthenticationCodeLifetime: Duration = .seconds(3_600)
    /// Serves below the interactive path of the process it runs in (the embedded backend of an
    /// app): its tasks at `.utility` priority and its SQLite at utility QoS (D62). A server of its
    /// own keeps the defaults.
    public var belowInteractive = false

    /// The defaults.
    public init() {}

    /// A configuration for tests: in memory, ephemeral port, cheap hashing, short reuse window.
    public static func testing() -> ServerConfiguration {
        var c = ServerConfiguration()
        c.port = 0
        c.databasePath = nil
        c.bcryptCost = 4
        c.jwtSecret = "test-secret-0123456789-abcdefghijklmnop"
        c.authRateLimit = RateLimit(capacity: 10_000, refillPerSecond: 1_000)
        c.apiRateLimit = RateLimit(capacity: 100_000, refillPerSecond: 10_000)
        // Tests of concurrent first requests (two instances, one key) expect the second to wait
        // for the first's answer; on a busy machine the first can take longer than 5 s.
        c.idempotencyPatience = .seconds(30)
        return c
    }
}

/// A token bucket: `capacity` requests at once, refilled at `refillPerSecond`.
public struct RateLimit: Sendable, Equatable, Codable {
    /// Burst size.
    public var capacity: Double
    /// Sustained requests per second.
    public var refillPerSecond: Double
    /// Creates a limit.
    public init(capacity: Double, refillPerSecond: Double) {
        self.capacity = capacity
        self.refillPerSecond = refillPerSecond
    }
}

/// Failures the server injects, so clients are tested against real HTTP failures.
public struct FaultConfiguration: Sendable, Equatable, Codable {
    /// Fraction (0–1) of requests answered with a 5xx problem.
    public var errorRate: Double = 0
    /// Added latency per request, in milliseconds.
    public var latencyMilliseconds: Double = 0
    /// Random extra latency, 0 … this many milliseconds.
    public var jitterMilliseconds: Double = 0
    /// The next N requests get 429.
    public var forced429Count: Int = 0
    /// `Retry-After` seconds on forced 429s.
    public var retryAfterSeconds: Int = 1
    /// Fraction (0–1) of requests whose connection is closed without an answer.
    public var dropRate: Double = 0
    /// Fraction (0–1) of requests that are carried out (a write is committed) and whose
    /// connection is then closed before the answer is sent: the client cannot know it worked.
    public var cutRate: Double = 0
    /// Overrides the access token lifetime for tokens issued from now on.
    public var accessTokenLifetimeSeconds: Int?
    /// Draws the faults from a generator seeded with this (SplitMix64), so a faulted run replays
    /// exactly when its requests arrive in the same order; nil draws from the system's generator.
    public var seed: UInt64?

    /// No faults.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case errorRate = "error_rate"
        case latencyMilliseconds = "latency_ms"
        case jitterMilliseconds = "jitter_ms"
        case forced429Count = "forced_429_count"
        case retryAfterSeconds = "retry_after_seconds"
        case dropRate = "drop_rate"
        case cutRate = "cut_rate"
        case accessTokenLifetimeSeconds = "access_token_lifetime_seconds"
        case seed
    }

    /// Decodes leniently: absent fields are off.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        errorRate = try c.decodeIfPresent(Double.self, forKey: .errorRate) ?? 0
        latencyMilliseconds = try c.decodeIfPresent(Double.self, forKey: .latencyMilliseconds) ?? 0
        jitterMilliseconds = try c.decodeIfPresent(Double.self, forKey: .jitterMilliseconds) ?? 0
        forced429Count = try c.decodeIfPresent(Int.self, forKey: .forced429Count) ?? 0
        retryAfterSeconds = try c.decodeIfPresent(Int.self, forKey: .retryAfterSeconds) ?? 1
        dropRate = try c.decodeIfPresent(Double.self, forKey: .dropRate) ?? 0
        cutRate = try c.decodeIfPresent(Double.self, forKey: .cutRate) ?? 0
        accessTokenLifetimeSeconds = try c.decodeIfPresent(Int.self, forKey: .accessTokenLifetimeSeconds)
        seed = try c.decodeIfPresent(UInt64.self, forKey: .seed)
    }
}
