import Foundation
import Testing
import TrendyFiles

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
        async let a: Void = first.withLock {
            await log.add("a in")
            try await Task.sleep(for: .milliseconds(200))
            await log.add("a out")
        }
        try await Task.sleep(for: .milliseconds(50))
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

    @Test func anUnusableLockFileIsAClearError() async throws {
        let lock = ProcessLock(file: URL(fileURLWithPath: "/nonexistent-dir-\(UUID())/sync.lock"))
        await #expect(throws: ProcessLock.Failure.self) { try await lock.withLock {} }
    }
}
