import Foundation
import TrendyModels

/// What the sync engine is doing.
public enum SyncPhase: Sendable, Hashable {
    /// Nothing to do, or waiting for the next trigger.
    case idle
    /// Checking connectivity.
    case checking
    /// Pushing local changes: `done` of `total` (total fixed when the drain starts).
    case pushing(done: Int, total: Int)
    /// Pulling server changes; `applied` so far.
    case pulling(applied: Int)
    /// Waiting out a rate limit until this time.
    case rateLimited(until: Date)
    /// Every pending change waits out a retry delay after a failure (a 5xx or a dropped
    /// connection) until this time; nothing was sent.
    case waitingToRetry(until: Date)
    /// The server cannot be reached; nothing was attempted.
    case offline
    /// A temporary failure (a 5xx, a dropped connection, a server that is up but not serving)
    /// cut the last pass short; nothing was lost and it is retried on its own. Why, in words.
    case interrupted(String)
    /// The last pass failed.
    case error(String)

    /// A short label: `idle`, `pushing`, ...
    public var name: String {
        switch self {
        case .idle: "idle"
        case .checking: "checking"
        case .pushing: "pushing"
        case .pulling: "pulling"
        case .rateLimited: "rate_limited"
        case .waitingToRetry: "waiting_to_retry"
        case .offline: "offline"
        case .interrupted: "interrupted"
        case .error: "error"
        }
    }
}

/// Everything a screen shows about sync.
public struct SyncStatus: Sendable, Hashable {
    /// The current phase.
    public var phase: SyncPhase
    /// Local changes not yet on the server.
    public var pendingCount: Int
    /// Local changes the server refused or that ran out of retries.
    public var failedCount: Int
    /// When a pass last completed without error.
    public var lastSuccessfulSync: Date?
    /// The last error, for people.
    public var lastError: String?
    /// Passes that failed in a row.
    public var consecutiveFailures: Int
    /// Open conflicts: concurrent changes that lost, kept for the person to restore or dismiss.
    public var conflictCount: Int = 0

    /// Creates a status.
    public init(
        phase: SyncPhase = .idle, pendingCount: Int = 0, failedCount: Int = 0, lastSuccessfulSync: Date? = nil,
        lastError: String? = nil, consecutiveFailures: Int = 0
    ) {
        self.phase = phase
        self.pendingCount = pendingCount
        self.failedCount = failedCount
        self.lastSuccessfulSync = lastSuccessfulSync
        self.lastError = lastError
        self.consecutiveFailures = consecutiveFailures
    }

    /// One line for a banner: `Syncing 1,200 of 5,000`, `Offline — 3 pending`, ...
    public var bannerText: String {
        let text = phaseText
        guard conflictCount > 0 else { return text }
        return text + " · \(Self.format(conflictCount)) conflict\(conflictCount == 1 ? "" : "s")"
    }

    private var phaseText: String {
        let pending = pendingCount > 0 ? " — \(Self.format(pendingCount)) pending" : ""
        switch phase {
        case .pushing(let done, let total): return "Syncing \(Self.format(done)) of \(Self.format(total))"
        case .pulling(let n): return n > 0 ? "Receiving \(Self.format(n)) changes" : "Receiving changes"
        case .checking: return "Connecting…"
        case .offline: return "Offline\(pending)"
        // Not "Sync failed": nothing is lost and it retries (a 503 used to read as a failure).
        case .interrupted(let why): return "Server trouble (\(why)); retrying soon\(pending)"
        case .rateLimited(let until):
            return "Server busy; retrying at \(Self.time(until))\(pending)"
        case .waitingToRetry(let until):
            return "Retrying at \(Self.time(until)) after a server error\(pending)"
        case .error(let message): return "Sync failed: \(message)\(pending) — run `trendy sync` to retry"
        case .idle:
            if failedCount > 0 { return "\(Self.format(failedCount)) change(s) could not sync\(pending)" }
            if pendingCount > 0 { return "\(Self.format(pendingCount)) pending" }
            if let last = lastSuccessfulSync { return "Up to date · last synced \(Self.time(last, seconds: false))" }
            return "Not synced yet"
        }
    }

    static func format(_ n: Int) -> String {
        n.formatted(.number.grouping(.automatic).locale(Locale(identifier: "en_US")))
    }

    /// A time as the banner shows it: local and unambiguous — `14:05:30` today, `22 Nov 14:05:30`
    /// on another day (it was `2026-11-22T08:30:00Z`, in UTC). `seconds`: for a retry a few
    /// seconds away.
    public static func time(_ date: Date, seconds: Bool = true, now: Date = Date(), timeZone: TimeZone = .current)
        -> String
    {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        var style = Date.FormatStyle(timeZone: timeZone).locale(Locale(identifier: "en_GB")).hour(
            .twoDigits(amPM: .omitted)
        ).minute(.twoDigits)
        if seconds { style = style.second(.twoDigits) }
        if !calendar.isDate(date, inSameDayAs: now) { style = style.day().month(.abbreviated) }
        return date.formatted(style)
    }
}

/// How a sync pass ended. The raw values are the wire and storage form (`trendy sync --json`,
/// the local history).
public enum SyncOutcome: String, Sendable, Hashable, CaseIterable, StoredEnum {
    /// Everything pushed and pulled.
    case ok
    /// The server could not be reached; nothing was lost, the pass will be retried.
    case offline
    /// The server answered but is not a working Trendy API (or failed its health check).
    case unavailable
    /// A transient failure (network, 5xx, timeout, unreadable answer) cut the pass short, or every
    /// pending change is still waiting out its delay: what was done is kept and the rest is retried
    /// (``SyncPhase/waitingToRetry(until:)`` says when a change is tried again).
    case waiting
    /// The server asked to slow down.
    case rateLimited = "rate_limited"
    /// A failure that needs attention.
    case error
    /// The signed-in account changed during the pass; its results were dropped.
    case superseded
    /// No one is signed in.
    case signedOut = "signed_out"
    /// Another pass (in this or another process) holds the pass lock.
    case busy

    /// A stored outcome a later version wrote reads as ``error``.
    public static let unknownValue = SyncOutcome.error
}

/// One finished sync pass, for the short history.
public struct SyncRun: Sendable, Hashable, Codable {
    /// When it started.
    public var startedAt: Date
    /// How long it took, in seconds.
    public var duration: Double
    /// Mutations pushed.
    public var pushed: Int
    /// Changes pulled.
    public var pulled: Int
    /// How it ended.
    public var outcome: SyncOutcome
    /// The error, if any.
    public var error: String?

    /// Creates a run.
    public init(startedAt: Date, duration: Double, pushed: Int, pulled: Int, outcome: SyncOutcome, error: String?) {
        self.startedAt = startedAt
        self.duration = duration
        self.pushed = pushed
        self.pulled = pulled
        self.outcome = outcome
        self.error = error
    }

    enum CodingKeys: String, CodingKey {
        case startedAt = "started_at"
        case duration = "duration_s"
        case pushed, pulled, outcome, error
    }
}

/// What `trendy status` (and a status screen) shows: the engine's counts, refreshed, with the
/// last pass's outcome folded in from the history — a new process knows the last pass only from
/// there, so a last pass that failed shows its error, and one that found the server away shows
/// offline — and the changes the server refused.
public struct SyncStatusSummary: Sendable {
    /// The status to show.
    public var status: SyncStatus
    /// Changes the server refused, with why.
    public var failed: [FailedChange]
    /// A full download cut short that the next sync goes on with: the events it has stored (D69).
    public var downloadCutShort: Int?

    /// Reads the summary from `engine` and `store`.
    public static func load(engine: any SyncEngine, store: any LocalStore) async throws -> SyncStatusSummary {
        await engine.refreshCounts()
        var status = engine.status
        if let last = try await engine.history().first, last.outcome != .ok {
            status.lastError = last.error
            if last.outcome == .offline { status.phase = .offline }
        }
        return SyncStatusSummary(
            status: status, failed: try await store.failedChanges(),
            downloadCutShort: try await store.downloadCutShort())
    }
}
