import Foundation
import Logging
import TrendyAPI
import TrendyFiles
import TrendyLogging
import TrendyModels
import TrendySync

/// The ``SyncEngine``: drains the outbox (event creates in batches, everything else one by one
/// with its idempotency key), then pulls the change feed. One pass at a time; a write during a
/// pass schedules a follow-up. All database and network work happens off the main actor.
public actor OutboxSyncEngine: SyncEngine {
    /// Tuning.
    public struct Configuration: Sendable {
        /// Event creates, or event edits and deletes, per batch request: the server's most. Batches
        /// of 50 spent twice the client's CPU and half again the server's on a device's upload of
        /// 140,000 events, and met the server's request rate limit after 30,000 (docs/decisions.md
        /// D66).
        public var batchSize = APIPaths.maxBatchSize
        /// Most bytes of payload in one batch request (its first entry goes whatever its size).
        public var batchBytes = Self.defaultBatchBytes
        /// ``batchBytes`` by default: 256 KiB, a sixteenth of the dev server's body limit and
        /// 500 ordinary events; a batch once sent goes again as it went, so a body must also get
        /// through a slow link within a request's 30 s (16 s at 128 kbit/s; 1 MiB would not).
        public static let defaultBatchBytes = 1 << 18
        /// Changes per feed page (and events per bootstrap page, at most the server's
        /// ``APIPaths/maxEventsLimit``). Also bounds how long one page's write transaction holds
        /// the writer (a local write waits at most that long during a download).
        public var pageSize = APIPaths.maxChangesLimit
        /// Held for each run of passes, so two processes of one install (a background launch and a
        /// foreground command) never sync the same database at once: a bootstrap in one would
        /// drop rows the other just pushed, and each would reset the other's in-flight entries.
        public var passLock: ProcessLock?
        /// How long a pass waits for ``passLock`` before giving up with outcome `busy`.
        public var passLockTimeout: Duration = .seconds(300)
        /// Pulls leave out the changes this install made and holds already (echo suppression,
        /// D57); false pulls them back, as before.
        public var omitsOwnChanges = true
        /// Creates the defaults.
        public init() {}
    }

    let store: SQLiteLocalStore
    let api: any SyncRemote
    let reachability: any ReachabilityProbe
    let identity: @Sendable () -> String?
    let now: @Sendable () -> Date
    let logger: Logger
    let configuration: Configuration
    nonisolated let broadcaster = StatusBroadcaster()
    var breaker = CircuitBreaker()
    var running: Task<SyncRun, Never>?
    var followUp = false
    /// The newest mark the answers of the running push named (``takeWriteMark()``).
    var pushMark: LatestCursor?
    var recoveredInFlight = false
    /// During a download: whether it is a bulk load (event indexes down, D30) and how it began;
    /// nil outside downloads.
    var bulkLoad: SQLiteLocalStore.BulkLoadStart?
    /// What the running pass has delivered and applied so far, counted as each unit is settled
    /// and each page stored: a pass a failure stops still says what it did (an outsider saw
    /// "pushed 0" after 851 of 3,000 events had reached the server).
    var tally = (pushed: 0, pulled: 0)
    /// This install's device id, sent with every change's base (read at the first push).
    var deviceId = "unknown"
    /// New ids, for a create the server had deleted before this device sent it (it goes again).
    let ids: UUIDv7Generator

    /// Creates an engine. `identity` returns the signed-in user id; a pass stops applying
    /// results the moment it changes. `reachability` is asked first in every pass (default: the
    /// API's health check within the standard 2 s budget).
    public init(
        store: SQLiteLocalStore, api: any SyncRemote, reachability: (any ReachabilityProbe)? = nil,
        identity: @escaping @Sendable () -> String?,
        configuration: Configuration = Configuration(), now: @escaping @Sendable () -> Date = Date.init,
        ids: UUIDv7Generator = UUIDv7Generator(), logger: Logger
    ) {
        self.ids = ids
        self.store = store
        self.api = api
        self.reachability = reachability ?? HealthCheckProbe(api: api)
        self.identity = identity
        self.configuration = configuration
        self.now = now
        self.logger = logger
    }

    /// The status right now (a lock read).
    public nonisolated var status: SyncStatus { broadcaster.current }

    /// Status changes, starting with the current status.
    public nonisolated func statusUpdates() -> AsyncStream<SyncStatus> { broadcaster.stream() }

    /// Loads counts and the last sync time into the status (cheap; for launch).
    // Nonisolated: it reads the store and sets the lock-guarded status only, so the app's loop,
    // which asks every half second, never queues behind a pass's turn on this actor.
    nonisolated public func refreshCounts() async {
        let counts = try? await store.outboxCounts()
        let last = try? await store.lastSuccessfulSync()
        let conflicts = try? await store.openConflictCount()
        broadcaster.update { s in
            s.conflictCount = conflicts ?? s.conflictCount
            s.pendingCount = counts?.pending ?? s.pendingCount
            s.failedCount = counts?.failed ?? s.failedCount
            s.lastSuccessfulSync = last ?? s.lastSuccessfulSync
        }
    }

    /// Runs a pass, or joins the running one (which then runs a follow-up).
    public func sync(full: Bool) async -> SyncRun {
        if let running {
            followUp = true
            return await running.value
        }
        let task = Task { await self.passes(full: full, skipPull: false) }
        running = task
        let run = await task.value
        running = nil
        return run
    }

    func passes(full: Bool, skipPull: Bool) async -> SyncRun {
        guard let lock = configuration.passLock else { return await unlockedPasses(full: full, skipPull: skipPull) }
        do {
            return try await lock.withLock(timeout: configuration.passLockTimeout) {
                await self.unlockedPasses(full: full, skipPull: skipPull)
            }
        } catch {
            logger.warning("Sync pass skipped", metadata: ["error": .string(String(describing: error))])
            followUp = false
            let run = SyncRun(
                startedAt: now(), duration: 0, pushed: 0, pulled: 0, outcome: .busy,
                error: String(describing: error))
            broadcaster.update { $0.phase = .error(String(describing: error)) }
            return run
        }
    }

    func unlockedPasses(full: Bool, skipPull: Bool) async -> SyncRun {
        var run = await pass(full: full, skipPull: skipPull)
        while followUp, run.outcome == .ok {
            followUp = false
            // The run is every pass of it: a recovery's follow-up reported "pushed 0, pulled 0"
            // for a run that had sent and pulled back a whole account (an outsider's attack).
            let earlier = run
            run = await pass(full: false, skipPull: false)
            run.startedAt = earlier.startedAt
            run.duration += earlier.duration
            run.pushed += earlier.pushed
            run.pulled += earlier.pulled
        }
        followUp = false
        return run
    }

    /// A write during a pass schedules a follow-up pass.
    public func localWriteHappened() { if running != nil { followUp = true } }

    /// The last passes, newest first.
    public func history() async throws -> [SyncRun] { try await store.history() }

    /// Never joins a running pass (that one pulls): waits for it, then runs its own.
    public func skipToLatest() async -> SyncRun {
        while let running { _ = await running.value }
        let task = Task { await self.passes(full: false, skipPull: true) }
        running = task
        let run = await task.value
        running = nil
        return run
    }

    /// Pushes, then remembers the server's newest change as the push's answers named it (read
    /// with `latest-cursor` from a server that does not say): if the pull after the push fails and
    /// the server is then restored from a backup taken before the push, the cursor's change is
    /// still there but what was pushed is not, and only this mark tells (outsider's R1, D60).
    @discardableResult
    func pushAndMark(user: String) async throws -> Int {
        let pushed: Int
        pushMark = nil
        do {
            pushed = try await push(user: user)
        } catch {
            // What reached the server before the push stopped is marked all the same.
            _ = takeWriteMark()
            if let newest = pushMark { try? await store.markPushed(through: newest) }
            throw error
        }
        _ = takeWriteMark()
        if let taken = pushMark {
            try await store.markPushed(through: taken)
        } else if pushed > 0,
            // A server that does not name its cursor in write answers: read once. If that fails
            // the pull after it fails too, and the pass says what it pushed all the same.
            let latest = try? await call({ () throws(TrendyAPIError) in try await api.latestCursor() })
        {
            try await store.markPushed(through: latest)
        }
        return pushed
    }

    /// Takes the newest mark the client kept since the last take (nil when none) and keeps the
    /// newest of this push in ``pushMark``: the push takes it after each unit, so each unit's
    /// entries are booked with their own answer's time (D61).
    func takeWriteMark() -> LatestCursor? {
        guard let taken = api.takeWriteMark() else { return nil }
        if pushMark.map({ taken.cursor > $0.cursor }) ?? true { pushMark = taken }
        return taken
    }

    /// Checks, before this pass pushes anything, that the server still has the change the last
    /// push's answers named when no pull has read past it since (a pull failed after it). This
    /// pass's push would replace the mark with one from a restored server, and the loss would go
    /// unseen (an outsider found that a new change queued before the next sync did exactly that).
    /// With no such mark, the cursor's own change is checked the same way when there is something
    /// to push (D61): a change pushed to a server that lost changes makes its entity newer there
    /// than what this device knows it lost, and the recovery's download could no longer tell.
    /// A loss is recorded, so everything is downloaded — before this pass pushes — and what the
    /// server lacks or has older goes to it again.
    ///
    /// `full`: a full download was asked for; it checks the cursor too, with nothing to send (the
    /// advice for a server that lost data is `--full`, and a plain one took the restored server's
    /// older copies and set a baseline that hid the loss for good — an outsider's F2).
    ///
    /// Returns the cursor it found the server still has, when it checked the cursor itself (nil
    /// otherwise): a ``skipToLatestCursor(checked:)`` later in the pass need not ask again.
    @discardableResult
    func checkLastPush(full: Bool = false) async throws -> Int64? {
        let cursor = try await store.cursor() ?? 0
        let check: (cursor: Int64, at: String?, warning: Logger.Message)
        if let mark = try await store.pushedThrough(), mark.cursor > cursor {
            check = (mark.cursor, mark.at, Self.lostPushWarning)
        } else if cursor > 0, let at = try await store.cursorAt(),
            try await (full ? true : store.hasReadyWork(now: now()))
        {
            check = (cursor, at, Self.lostChangesWarning)
        } else {
            return nil
        }
        do throws(TrendyAPIError) {
            try await api.checkCursor(check.cursor, at: check.at)
        } catch .conflict(let problem) where problem.code == ProblemCode.cursorAhead {
            logger.warning(check.warning, metadata: ["cursor": .int(Int(check.cursor))])
            try await store.lostWhatItPushed()
            return nil
        } catch {
            throw stop(for: error)
        }
        return check.cursor == cursor ? cursor : nil
    }

    /// What a pass says when the server lost what this device pushed (D60).
    static let lostPushWarning: Logger.Message =
        "The server no longer has what this device pushed last (it lost changes); downloading everything again"

    /// Moves the cursor to the server's latest (the pull of a ``skipToLatest()`` pass); false,
    /// moving nothing, when the server no longer has the change the cursor names, or lost what
    /// this device pushed (restored from a backup, D59, D60): that pass downloads everything
    /// instead.
    ///
    /// `checked`: the cursor this pass's ``checkLastPush(full:)`` found the server has; not asked
    /// again while the cursor is still that one.
    func skipToLatestCursor(checked: Int64? = nil) async throws -> Bool {
        // The server lost what this device pushed (``checkLastPush()``): skipping would hide it
        // for good.
        if try await store.mustDownloadEverything() { return false }
        // A transient failure here is one like any other (outside tester: `--skip-to-latest`
        // exited 1 on a 503, a dropped connection or a 429).
        if let cursor = try await store.cursor(), cursor > 0, cursor != checked {
            let at = try await store.cursorAt()
            do throws(TrendyAPIError) {
                try await api.checkCursor(cursor, at: at)
            } catch .conflict(let problem) where problem.code == ProblemCode.cursorAhead {
                logger.warning(Self.lostChangesWarning, metadata: ["cursor": .int(Int(cursor))])
                // Recorded as a loss, so the download re-sends what the server has older (D61).
                try await store.lostWhatItPushed()
                return false
            } catch {
                throw stop(for: error)
            }
        }
        let latest = try await call { () throws(TrendyAPIError) in try await api.latestCursor() }
        try await store.setCursor(latest.cursor, at: latest.at)
        logger.notice("Skipped to the latest cursor", metadata: ["cursor": .int(Int(latest.cursor))])
        return true
    }

    // MARK: One pass

    struct Stop: Error {
        var outcome: SyncOutcome
        var message: String?
        var phase: SyncPhase

        /// A failure that needs attention: outcome `error`, the banner says `message`.
        static func failed(_ message: String) -> Stop {
            Stop(outcome: .error, message: message, phase: .error(message))
        }
        /// A transient failure (network, 5xx, timeout, unreadable answer) cut the pass short: what
        /// was done is kept and the rest is retried — outcome `waiting`, whatever the pass was
        /// doing (`trendy sync` exits 75). `retryAt`: when the change that failed is tried again.
        static func transient(_ message: String, retryAt: Date?) -> Stop {
            Stop(
                outcome: .waiting, message: message,
                phase: retryAt.map { .waitingToRetry(until: $0) } ?? .interrupted(message))
        }
        /// The server asks to wait until `until`.
        static func rateLimited(until: Date) -> Stop {
            Stop(outcome: .rateLimited, message: "rate limited", phase: .rateLimited(until: until))
        }
        /// The signed-in account changed during the pass.
        static let superseded = Stop(outcome: .superseded, message: "the signed-in user changed", phase: .idle)
    }

    /// A 429 with `retryAfter`: the breaker records it and the pass stops until it allows again.
    func rateLimitedStop(retryAfter: Double?) -> Stop {
        let at = now()
        return .rateLimited(
            until: breaker.record429(retryAfter: retryAfter, now: at) ?? at.addingTimeInterval(retryAfter ?? 1))
    }

    func pass(full: Bool, skipPull: Bool = false) async -> SyncRun {
        let startedAt = now()
        let clock = ContinuousClock()
        let t0 = clock.now
        tally = (0, 0)
        var outcome = SyncOutcome.ok
        var message: String?
        do {
            guard let user = identity() else {
                throw Stop(outcome: .signedOut, message: "not signed in", phase: .error("not signed in"))
            }
            if !recoveredInFlight {
                try await store.resetInFlight()
                recoveredInFlight = true
            }
            try checkBreaker()
            broadcaster.update { $0.phase = .checking }
            let answer = await reachability.check()
            switch answer {
            case .reachable: break
            case .offline(let failure):
                throw Stop(outcome: .offline, message: failure.description, phase: .offline)
            case .failing:
                // Something answered, but not a working Trendy API: unavailable, like offline.
                let text = answer.explanation ?? "server error"
                throw Stop(outcome: .unavailable, message: text, phase: .interrupted(text))
            }
            let checked = try await checkLastPush(full: full)
            let recovered = try await store.mustDownloadEverything()
            // A device that has never pulled downloads the account before it pushes: pushed
            // first, everything it held came back in that download (an import of 140,000 events
            // before the first sync pulled all of them back, D65). Its push is then read from the
            // feed after the download's cursor, which leaves this device's changes out (D57).
            let neverPulled = try await store.cursor() == nil
            let firstDownload = !recovered && !full && !skipPull && neverPulled
            if recovered {
                // The server lost changes: everything comes down first, so that what it has older
                // than this device knows is found before this pass's push makes it newer (D61).
                try await pull(user: user, full: true)
            } else if firstDownload {
                do {
                    try await pull(user: user, full: false)
                } catch let stop as Stop where stop.outcome == .waiting || stop.outcome == .error {
                    // A download that fails does not keep what this device holds from the server
                    // (a review found a flaky link could, pass after pass): it is pushed, and the
                    // pull after the push tries the download again. With nothing to push, the pass
                    // ends here.
                    guard try await store.hasReadyWork(now: now()) else { throw stop }
                    logger.notice(
                        "The first download failed; pushing before it", metadata: ["error": .string(stop.message ?? "")]
                    )
                }
            }
            // A push before the first download has finished (it failed, or `--full` pushes first):
            // what it delivers is not in the part already downloaded, and the end's check may not
            // look at events (D69), so the download after it starts over.
            if neverPulled, try await store.cursor() == nil, try await store.hasReadyWork(now: now()) {
                try await store.forgetDownloadProgress()
            }
            try await pushAndMark(user: user)
            try await sendResolutions()
            try await refetch(user: user)
            if skipPull {
                if try await !skipToLatestCursor(checked: checked) {
                    // The server lost changes this device has: skipping would hide that for good.
                    try await pull(user: user, full: true)
                }
            } else {
                try await pull(user: user, full: full && !recovered)
                // The pull can make waiting changes sendable (a refused place whose deleted type
                // it cleared): they go in this pass, not the next one.
                if try await store.hasReadyWork(now: now()) {
                    try await pushAndMark(user: user)
                    try await refetch(user: user)
                    try await pull(user: user, full: false)
                }
            }
            breaker.recordSuccess()
        } catch let stop as Stop {
            outcome = stop.outcome
            message = stop.message
            broadcaster.update { $0.phase = stop.phase }
        } catch {
            outcome = .error
            message = String(describing: error)
            broadcaster.update { $0.phase = .error(String(describing: error)) }
        }
        let (pushed, pulled) = tally
        let run = SyncRun(
            startedAt: startedAt, duration: (clock.now - t0).asSeconds, pushed: pushed, pulled: pulled,
            outcome: outcome, error: message)
        await record(run)
        logger.info(
            "Sync pass finished",
            metadata: [
                "outcome": .string(outcome.rawValue), "pushed": .int(pushed), "pulled": .int(pulled),
                "elapsed": .duration(clock.now - t0),
            ])
        return run
    }

    /// Keeps the pass in the history and brings the status up to date with it.
    func record(_ run: SyncRun) async {
        let (outcome, message) = (run.outcome, run.error)
        try? await store.appendHistory(run)
        let counts = try? await store.outboxCounts()
        let conflicts = try? await store.openConflictCount()
        broadcaster.update { s in
            s.conflictCount = conflicts ?? s.conflictCount
            if outcome == .ok {
                s.phase = .idle
                s.lastSuccessfulSync = run.startedAt.addingTimeInterval(run.duration)
                s.lastError = nil
                s.consecutiveFailures = 0
            } else if outcome != .superseded {
                s.lastError = message
                s.consecutiveFailures += 1
            }
            s.pendingCount = counts?.pending ?? s.pendingCount
            s.failedCount = counts?.failed ?? s.failedCount
        }
    }

    /// Reads back the events the push found the server kept (a type's cascade that did not take
    /// them): a 404 means the server has none.
    func refetch(user: String) async throws {
        for id in try await store.eventsToRefetch() {
            guard let uuid = UUIDv7(id) else {
                try await store.refetched(id, nil)
                continue
            }
            let found: Timestamped<Event>?
            do {
                found = try await api.event(id: uuid)
            } catch .notFound {
                found = nil
            } catch {
                throw stop(for: error)
            }
            try ensureSameUser(user)
            try await store.refetched(id, found)
        }
    }

    func checkBreaker() throws {
        guard breaker.allowsRequest(now: now()) else {
            throw Stop.rateLimited(until: breaker.openUntil ?? now())
        }
    }

    func ensureSameUser(_ user: String) throws {
        guard identity() == user else {
            throw Stop.superseded
        }
    }
}
