import Foundation
import Testing
import TrendyModels
import TrendySync
import TrendySyncLive
import TrendySyncTesting

@testable import TrendyApp

/// Onboarding counts only the signed-in account's types: the last account's, still on the device
/// until the sign-in claims the store, made a new account skip "Create a type" (an outside attack
/// met it after switching account; a race with the claim through the binary, so checked here).
@Suite struct OnboardingOwnerTests {
    @Test func onboardingCountsOnlyTheSignedInAccountsTypes() async throws {
        let store = try MemoryLocalStore.make()
        #expect(await !OnboardingPlugin.hasOwnEventTypes(store, user: "alice"))
        try await store.createEventType(EventType(id: UUIDv7Generator().next(), name: "Coffee"))
        #expect(await OnboardingPlugin.hasOwnEventTypes(store, user: "alice"), "unclaimed data counts")
        try await store.claim(for: "alice")
        #expect(await OnboardingPlugin.hasOwnEventTypes(store, user: "alice"))
        #expect(await !OnboardingPlugin.hasOwnEventTypes(store, user: "bob"), "another account's types do not")
    }
}
