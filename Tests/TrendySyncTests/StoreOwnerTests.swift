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
}
