import Foundation
import Testing
import TrendyAPITesting
import TrendyFiles
import TrendyLogging
import TrendySync
import TrendySyncLive

/// The cross-process lock sync passes hold (flock: two opens of one file exclude each other even
/// within one process, which is what lets this test stand in for two processes).
actor Trace {
    var lines: [String] = []
    func add(_ line: String) { lines.append(line) }
}

@Suite struct PassLockTests {
    func lockFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("trendy-lock-\(UUID().uuidString)")
    }

    @Test func holdersTakeTurns() async throws {
        let file = lockFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let log = Trace()
        let first = ProcessLock(file: file)
        let second = ProcessLock(file: file)
        // b starts once a holds the lock (a signal, not a guess at how long a takes to get it);
        // a then keeps it a while, which b must wait out however long it is.
        let (entered, enteredSignal) = AsyncStream<Void>.makeStream()
        async let a: Void = first.withLock {
            await log.add("a in")
            enteredSignal.yield()
            try await Task.sleep(for: .milliseconds(200))
            await log.add("a out")
        }
        for await _ in entered { break }
        async let b: Void = second.withLock {
            await log.add("b in")
            await log.add("b out")
        }
        _ = try await (a, b)
        #expect(await log.lines == ["a in", "a out", "b in", "b out"])
    }

    @Test func aWaiterGivesUpAfterItsTimeoutAndTheLockIsFreeAfterwards() async throws {
        let file = lockFile()
        defer { try? FileManager.default.removeItem(at: file) }
        let holder = ProcessLock(file: file)
        let waiter = ProcessLock(file: file)
        try await holder.withLock {
            await #expect(throws: ProcessLock.Failure.busy) {
                try await waiter.withLock(timeout: .milliseconds(100)) {}
            }
        }
        #expect(try await waiter.withLock(timeout: .milliseconds(100)) { 42 } == 42)
    }

    @Test func anEngineWhoseInstallIsSyncingElsewhereSkipsWithBusyAndSendsNothing() async throws {
        try await SyncHarness.with { h in
            let file = lockFile()
            defer { try? FileManager.default.removeItem(at: file) }
            var configuration = OutboxSyncEngine.Configuration()
            configuration.passLock = ProcessLock(file: file)
            configuration.passLockTimeout = .milliseconds(150)
            let user = h.userId
            // The test budget for the health check: on a busy machine the default 2 s judged the
            // loopback server offline and the second pass was not `ok` (1 in 5 suite runs under load).
            let engine = OutboxSyncEngine(
                store: h.store, api: h.api, reachability: SyncHarness.testProbe(h.api), identity: { user },
                configuration: configuration,
                logger: LogSystem.disabled().logger(.sync))
            try await h.store.createEvent(h.event(try await h.type()))
            // Another process of the same install holds the lock for the whole attempt.
            let run = try await ProcessLock(file: file).withLock { await engine.sync(full: false) }
            #expect(run.outcome == .busy)
            #expect(run.error?.contains("another trendy process") == true)
            #expect(h.api.calls.isEmpty)
            #expect(try await h.store.outboxCounts().pending == 2)
            let second = await engine.sync(full: false)
            #expect(second.outcome == .ok, "\(second)")
            #expect(try await h.store.outboxCounts().pending == 0)
        }
    }

    @Test func anUnusableLockFileIsAClearError() async throws {
        let lock = ProcessLock(file: URL(fileURLWithPath: "/nonexistent-dir-\(UUID())/sync.lock"))
        await #expect(throws: ProcessLock.Failure.self) { try await lock.withLock {} }
    }
}

/// The install lock's modes (D39): shared holders coexist, an exclusive one waits them out and
/// gives up as busy, an unusable lock file says so.
@Suite struct InstallLockModeTests {
    @Test func sharedHoldersCoexistAndKeepAnExclusiveOneOut() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("install-\(UUID()).lock")
        defer { try? FileManager.default.removeItem(at: file) }
        let a = try ProcessLock(file: file).acquire(.shared, timeout: .seconds(1))
        let b = try ProcessLock(file: file).acquire(.shared, timeout: .seconds(1))
        #expect(throws: ProcessLock.Failure.busy) {
            try ProcessLock(file: file).acquire(.exclusive, timeout: .milliseconds(50))
        }
        a.release()
        b.release()
        let exclusive = try ProcessLock(file: file).acquire(.exclusive, timeout: .seconds(1))
        #expect(throws: ProcessLock.Failure.busy) {
            try ProcessLock(file: file).holding(.shared, timeout: .milliseconds(50)) {}
        }
        exclusive.release()
        try ProcessLock(file: file).holding(.shared, timeout: .seconds(1)) {}
    }

    @Test func anUnusableLockFileIsNotBusy() {
        let file = URL(fileURLWithPath: "/nonexistent-\(UUID())/install.lock")
        #expect {
            try ProcessLock(file: file).acquire(.shared, timeout: .milliseconds(50))
        } throws: { error in
            if case .unusable? = error as? ProcessLock.Failure { return true }
            return false
        }
    }
}
