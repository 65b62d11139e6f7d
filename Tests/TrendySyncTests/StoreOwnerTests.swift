import Foundation
import Testing
import TrendyAPI
import TrendyModels
import TrendySync
import TrendySyncTesting

@testable import TrendySyncLive

/// Local data belongs to one account: another account's sign-in takes its conflicts along with
/// its events (outside attack: a new account was shown the last one's conflict, with its note),
/// and a resolution not yet sent holds the data back like any unsent change.
@Suite struct StoreOwnerTests {
    @Test func anotherAccountsClaimClearsTheConflictsAndWaitsForUnsentResolutions() async throws {
        let store = try MemoryLocalStore.make()
        #expect(try await store.owner() == nil)
        try await store.claim(for: "alice")
        #expect(try await store.owner() == "alice")
        let at = Date()
        try await store.keep([
            SyncConflict(
                id: "c1", kind: .field, entityType: .event, entityId: UUIDv7Generator().next().description,
                field: "notes", keptValue: "\"mine\"", lostValue: "\"private\"", keptBy: "x", keptAt: at, lostBy: "y",
                lostAt: at, detectedAt: at)
        ])
        try await store.dismissConflict(id: "c1")
        await #expect(throws: SQLiteLocalStore.OwnedByAnotherAccount.self, "a dismissal not yet sent is a change") {
            try await store.claim(for: "bob")
        }
        try await store.resolutionSent("c1")
        #expect(try await store.claim(for: "bob"), "cleared")
        #expect(try await store.owner() == "bob")
        #expect(try await store.conflicts(includeClosed: true).isEmpty, "alice's conflicts went with her data")
    }

    /// The install's device id is the install's, not the account's (outside review, issue 35): a
    /// switch used to delete it, and every later change of the install came from device `unknown`.
    @Test func anotherAccountsClaimKeepsTheDeviceId() async throws {
        let store = try MemoryLocalStore.make()
        try await store.claim(for: "alice")
        let device = try await store.deviceId()
        #expect(device != "unknown")
        #expect(try await store.claim(for: "bob"), "cleared")
        #expect(try await store.deviceId() == device)
    }

    /// Outsider's B2: the same email signing in as a new account is the same person on a server
    /// that lost their account. Their data stays, unsent changes and all, and the cursor goes, so
    /// the next sync downloads the new account and sends everything here to it. Another email is
    /// another person, as before.
    @Test func theSameEmailUnderANewAccountKeepsTheDataAndForgetsTheCursor() async throws {
        let store = try MemoryLocalStore.make()
        #expect(try await store.claim(for: "alice-1", email: "Alice@example.com") == .unchanged)
        #expect(try await store.ownerEmail() == "Alice@example.com")
        let type = EventType(id: UUIDv7Generator().next(), name: "Run")
        try await store.createEventType(type)
        try await store.setCursor(42, at: "2026-05-01T07:00:00.000Z", force: true)
        #expect(try await store.claim(for: "alice-1", email: "Alice@example.com") == .unchanged)
        #expect(try await store.cursor() == 42)

        #expect(try await store.claim(for: "alice-2", email: "alice@example.com") == .carriedOver(previous: "alice-1"))
        #expect(try await store.owner() == "alice-2")
        #expect(try await store.eventTypes().map(\.value.id) == [type.id], "kept")
        #expect(try await store.outboxCounts().pending == 1, "its unsent create still goes")
        #expect(try await store.cursor() == nil, "the next sync downloads the new account first")
        #expect(try await store.cursorAt() == nil)

        await #expect(throws: SQLiteLocalStore.OwnedByAnotherAccount.self, "another person, a change waiting") {
            try await store.claim(for: "bob", email: "bob@example.com")
        }
        // An owner whose email was never recorded (signed in before it was) is another person too.
        let older = try MemoryLocalStore.make()
        try await older.claim(for: "alice-1")
        #expect(try await older.claim(for: "alice-2", email: "alice@example.com") == .cleared)
    }
}
