import Foundation
import GRDB
import Testing
import TrendySyncLive

/// D57: a database found in another file than the one it was made in (copied, restored) takes a
/// new device id, so two installs never share one — the server leaves a device's own changes out
/// of its pulls.
@Suite struct DeviceIdentityTests {
    func open(_ url: URL) throws -> DatabaseQueue {
        let queue = try DatabaseQueue(path: url.path)
        var migrator = DatabaseMigrator()
        SyncSchema.register(in: &migrator)
        try migrator.migrate(queue)
        return queue
    }

    func deviceId(_ queue: DatabaseQueue) throws -> String? {
        try queue.read { db in try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'device_id'") }
    }

    @Test func aCopiedDatabaseIsAnotherDeviceAndTheOriginalStaysItself() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let original = dir.appendingPathComponent("trendy.sqlite")
        var queue: DatabaseQueue? = try open(original)
        // The first open records the file and takes a new id (a copy made before may share the old).
        let made = try deviceId(queue!)
        #expect(try DeviceIdentity.renewIfCopied(queue!, path: original.path) == true)
        let id = try deviceId(queue!)
        #expect(id != made)
        #expect(try DeviceIdentity.renewIfCopied(queue!, path: original.path) == false)
        try queue!.close()
        queue = nil
        let copy = dir.appendingPathComponent("copy.sqlite")
        try FileManager.default.copyItem(at: original, to: copy)
        let copied = try open(copy)
        #expect(try DeviceIdentity.renewIfCopied(copied, path: copy.path) == true)
        let copiedId = try deviceId(copied)
        #expect(copiedId != id)
        #expect(copiedId?.count == 32)
        #expect(try DeviceIdentity.renewIfCopied(copied, path: copy.path) == false)
        #expect(try deviceId(copied) == copiedId)
        let reopened = try open(original)
        #expect(try DeviceIdentity.renewIfCopied(reopened, path: original.path) == false)
        #expect(try deviceId(reopened) == id)
    }
}
