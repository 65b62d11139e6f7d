import Foundation
import Logging
import TrendyAPI
import TrendyLogging
import TrendyModels
import TrendySync

extension OutboxSyncEngine {
    /// Runs one API call of the pass; its failure ends the pass as ``stop(for:)`` says.
    func call<T>(_ body: () async throws(TrendyAPIError) -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw stop(for: error)
        }
    }

    /// How an API failure outside the push ends the pass: rate limited, waiting (every transient
    /// failure, whatever the pass was doing: exit 75), or failed.
    func stop(for error: TrendyAPIError) -> Stop {
        switch Self.classify(error) {
        case .rateLimited(let after): return rateLimitedStop(retryAfter: after)
        case .transient(let message): return Stop.transient(message, retryAt: nil)
        default: return Stop.failed(error.description)
        }
    }

    /// Pulls the change feed (bootstrapping first when there is no cursor or `full` is asked);
    /// what it stored is counted in ``tally``.
    func pull(user: String, full: Bool) async throws {
        _ = try await withBulkLoad { try await self.pullPages(user: user, full: full) }
    }

    /// Runs a download that may turn into a bulk load (see ``SQLiteLocalStore/beginBulkLoad()``)
    /// and ends the bulk load whatever happens; a bulk load a crash interrupted ends here too.
    func withBulkLoad<T>(_ body: () async throws -> T) async throws -> T {
        if bulkLoad != nil { return try await body() }
        bulkLoad = try await store.bulkLoading() ? .continued : .notStarted
        defer { bulkLoad = nil }
        let result: T
        do {
            result = try await body()
        } catch {
            // The download's own error is the one to report; a failed build is only logged.
            do { try await endBulkLoad() } catch let build {
                logger.error("Could not build the event indexes", metadata: ["error": "\(build)"])
            }
            throw error
        }
        // If this fails the indexes stay down and the next pull builds them (reads stay correct).
        try await endBulkLoad()
        return result
    }

    /// Turns the download into a bulk load when more than a page is coming and the store has no
    /// events yet; `newestFirst`: the download arrives in the time index's order, which stays up.
    func bulkLoadIfWorthIt(more: Bool, newestFirst: Bool = false) async throws {
        guard more, bulkLoad == .notStarted else { return }
        bulkLoad = try await store.beginBulkLoad(keepingTimeIndex: newestFirst)
        if bulkLoad != .notStarted { logger.info("Bulk load: event indexes down for the download") }
    }

    private func endBulkLoad() async throws {
        guard let bulkLoad, bulkLoad != .notStarted else { return }
        let started = ContinuousClock.now
        try await store.endBulkLoad()
        logger.info(
            "Bulk load: event indexes built",
            metadata: ["ms": .int(Int((ContinuousClock.now - started) / .milliseconds(1)))])
    }

    private func pullPages(user: String, full: Bool) async throws -> Int {
        var applied = 0
        broadcaster.update { $0.phase = .pulling(applied: 0) }
        let downloadEverything = try await store.mustDownloadEverything()
        if full || downloadEverything {
            applied += try await bootstrap(user: user, recovering: downloadEverything)
        } else if try await store.cursor() == nil {
            applied += try await bootstrap(user: user)
        }
        // Pipelined: the next page is requested as soon as this one arrives (its cursor is known),
        // so the server's read and the local apply overlap instead of taking turns.
        var cursor = try await store.cursor() ?? 0
        let at = try await store.cursorAt()
        // A mark an earlier pass left (D60) was checked before this pass pushed
        // (``checkLastPush()``); the one this pass's push was just given is not checked again: a
        // restore in the moments between is left to the pages' own checks.
        var page: ChangesPage
        do {
            page = try await feedPage(since: cursor, at: at)
        } catch .conflict(let problem) where problem.code == ProblemCode.cursorAhead {
            // The server has no change this cursor names: it lost changes this device had
            // (restored from a backup). Everything again; what it lacks goes to it in this run.
            // Recorded as owed, so a download cut short goes on where it stopped (D69).
            logger.warning(Self.lostChangesWarning, metadata: ["cursor": .int(Int(cursor))])
            try await store.lostWhatItPushed()
            applied += try await bootstrap(user: user, recovering: true)
            cursor = try await store.cursor() ?? 0
            page = try await changesPage(since: cursor, at: try await store.cursorAt())
        } catch {
            throw stop(for: error)
        }
        while true {
            try ensureSameUser(user)
            guard page.nextCursor >= cursor else {
                logger.error("The server's cursor went backwards; ignoring the page")
                break
            }
            // A page can be all this device's own changes (left out): it moves the cursor only.
            let more = page.hasMore && page.nextCursor > cursor
            try await bulkLoadIfWorthIt(more: more)
            let nextCursor = page.nextCursor
            let nextAt = page.nextCursorAt
            let next: Task<ChangesPage, any Error>? =
                more ? Task { try await self.changesPage(since: nextCursor, at: nextAt) } : nil
            do {
                let stored = try await store.apply(page)
                applied += stored
                tally.pulled += stored
            } catch {
                next?.cancel()
                throw error
            }
            let progress = applied
            broadcaster.update { $0.phase = .pulling(applied: progress) }
            guard let next else { break }
            // The write lock free a moment: another process's write gets in between pages.
            try await Task.sleep(for: LocalDatabaseSettings.writeGap)
            cursor = nextCursor
            page = try await next.value
        }
        return applied
    }

    /// A page of the event listing, continuing after `after` (keyset paging: an event removed on
    /// the server meanwhile cannot shift the rest past us, and every page costs the server the same).
    func eventsPage(after: String?) async throws -> ListPage<Timestamped<Event>> {
        try await call { () throws(TrendyAPIError) in
            try await api.listEvents(limit: min(configuration.pageSize, APIPaths.maxEventsLimit), after: after)
        }
    }

    /// What a pass says when the server answers `cursor_ahead` (D59).
    static let lostChangesWarning: Logger.Message =
        "The server no longer has the change this device's cursor names (it lost changes); downloading everything again"

    /// A feed page; without this install's own changes it holds (D57) unless configured not to.
    func changesPage(since cursor: Int64, at: String?) async throws -> ChangesPage {
        try await call { () throws(TrendyAPIError) in try await feedPage(since: cursor, at: at) }
    }

    /// ``changesPage(since:at:)``'s request, its failure as the API's (the device id unread here
    /// pulls this install's changes back, harmlessly).
    private func feedPage(since cursor: Int64, at: String?) async throws(TrendyAPIError) -> ChangesPage {
        if configuration.omitsOwnChanges, deviceId == "unknown" {
            deviceId = (try? await store.deviceId()) ?? "unknown"
        }
        let omitting = configuration.omitsOwnChanges && deviceId != "unknown" ? deviceId : nil
        return try await api.changes(since: cursor, at: at, limit: configuration.pageSize, omitting: omitting)
    }

    /// Downloads everything, then sets the cursor to the latest taken before the download
    /// started (so nothing written meanwhile is missed).
    ///
    /// `recovering`: the server lost changes (D59, D60); what it has in an older version than this
    /// device knows goes to it again instead of being taken (D61).
    ///
    /// A download of the same kind this device began and did not finish goes on from the page
    /// after the last one it stored, to the cursor it began at (D69,
    /// ``SQLiteLocalStore/continuableDownload()``); otherwise it starts over.
    func bootstrap(user: String, recovering: Bool = false) async throws -> Int {
        try await withBulkLoad { try await self.bootstrapPages(user: user, recovering: recovering) }
    }

    private func bootstrapPages(user: String, recovering: Bool) async throws -> Int {
        var progress: DownloadProgress
        if let kept = try await store.continuableDownload(), kept.user == user, kept.recovering == recovering {
            progress = kept
            logger.notice(
                "Continuing a download cut short",
                metadata: [
                    "cursor": .int(Int(kept.cursor)), "listed": .string(kept.listed ? "all" : kept.after ?? "none"),
                ])
        } else {
            let latest = try await call { () throws(TrendyAPIError) in try await api.latestCursor() }
            progress = DownloadProgress(user: user, latest: latest, recovering: recovering)
            try await store.beginBootstrap(progress)
        }
        var count = 0
        // Conflicts recorded before the cursor this download ends at are never read from the feed.
        let conflicts = try await call { () throws(TrendyAPIError) in try await api.conflicts() }
        try ensureSameUser(user)
        try await store.keep(conflicts)
        let types = try await call { () throws(TrendyAPIError) in try await api.listEventTypes() }
        try ensureSameUser(user)
        try await store.bootstrap(types.map { ChangeData.eventType($0) }, recovering: recovering)
        count += types.count
        tally.pulled += types.count
        let fences = try await call { () throws(TrendyAPIError) in try await api.listGeofences(active: nil) }
        try ensureSameUser(user)
        try await store.bootstrap(fences.map { ChangeData.geofence($0) }, recovering: recovering)
        count += fences.count
        tally.pulled += fences.count
        let definitions = try await call { () throws(TrendyAPIError) in try await api.listPropertyDefinitions() }
        try ensureSameUser(user)
        try await store.bootstrap(definitions.map { ChangeData.propertyDefinition($0) }, recovering: recovering)
        count += definitions.count
        tally.pulled += definitions.count
        if !progress.listed { count += try await listEvents(user: user, &progress, after: count) }
        // Creates grouped here go again exactly as grouped (one key a batch), with no byte budget:
        // they keep to batches of 50. Events not remembered (a load begun on a store without
        // events) all came with this download, cut short or not: they are not checked (D69).
        let missing = try await store.finishBootstrap(
            cursor: progress.latest, everyEventArrived: progress.remember == false,
            resendBatch: min(configuration.batchSize, 50), recovering: recovering)
        logger.info(
            "Bootstrap finished", metadata: ["entities": .int(count), "cursor": .int(Int(progress.cursor))])
        if missing > 0 {
            // Sent again in a pass of their own, before this run ends.
            followUp = true
            logger.notice(
                "The server did not list entities this device holds as synced; they go to it again",
                metadata: ["count": .int(missing)])
        }
        return count
    }

    /// Downloads the event listing from where `progress` says, each page stored with the
    /// progress it makes; answers how many events it stored (`after`: what the download stored
    /// before them, for the progress shown).
    private func listEvents(user: String, _ progress: inout DownloadProgress, after base: Int) async throws -> Int {
        var count = 0
        // Pipelined like the feed: the next page is requested as soon as this one arrives.
        var page = try await eventsPage(after: progress.after)
        while true {
            try ensureSameUser(user)
            let more = page.hasMore && !page.items.isEmpty
            let after = more ? page.next : nil
            if more && after == nil {
                let message = "The server's event listing says more follows but not where (no next token)"
                throw Stop.failed(message)
            }
            try await bulkLoadIfWorthIt(more: after != nil, newestFirst: true)
            let next: Task<ListPage<Timestamped<Event>>, any Error>? =
                after.map { after in Task { try await self.eventsPage(after: after) } }
            // Whether events are remembered is decided at the first page, for the whole download.
            let remember = progress.remember ?? (bulkLoad != .startedOnEmptyStore)
            progress.remember = remember
            progress.after = after
            progress.listed = after == nil
            do {
                try await store.bootstrap(
                    page.items.map { ChangeData.event($0) }, wire: page.itemsJSON,
                    remember: remember, recovering: progress.recovering, progress: progress)
            } catch {
                next?.cancel()
                throw error
            }
            count += page.items.count
            tally.pulled += page.items.count
            let stored = base + count
            broadcaster.update { $0.phase = .pulling(applied: stored) }
            guard let next else { break }
            try await Task.sleep(for: LocalDatabaseSettings.writeGap)
            page = try await next.value
        }
        return count
    }

    /// Tells the server of the conflicts this device restored or dismissed, so every device
    /// closes them (a resolution is data: it used to stay on this device). One the server never
    /// kept (kept only here) is done too.
    func sendResolutions() async throws {
        for id in try await store.unsentResolutions() {
            do {
                try await api.resolveConflict(id: id)
            } catch .notFound {
            } catch {
                throw stop(for: error)
            }
            try await store.resolutionSent(id)
        }
    }
}
