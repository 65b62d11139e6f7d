import Foundation
import Testing
import TrendyAuth

/// What every ``SessionStore`` must do, as a test any implementation runs: the in-memory double
/// and the file store here, a Keychain store in an Apple app. See docs/porting.md.
///
/// ```swift
/// @Test func keychainStoreKeepsTheContract() throws {
///     try SessionStoreContract.verify(fresh: { KeychainSessionStore(service: "test-\(UUID())") })
/// }
/// ```
public enum SessionStoreContract {
    /// Runs the contract. `fresh` makes an empty store over storage of its own; `reopen`, when the
    /// store persists, makes a second store over the same storage (a new process).
    public static func verify(
        fresh: () throws -> any SessionStore, reopen: ((any SessionStore) throws -> any SessionStore)? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let user = AuthUser(id: "contract-user", email: "contract@example.com")
        let first = AuthSession(
            accessToken: "access-1", refreshToken: "refresh-1",
            expiresAt: Date(timeIntervalSince1970: 1_900_000_000), user: user)
        var second = first
        second.accessToken = "access-2"
        second.refreshToken = "refresh-2"

        let store = try fresh()
        #expect(store.load() == nil, "a new store holds no session", sourceLocation: sourceLocation)
        try store.clear()
        #expect(store.load() == nil, "clearing an empty store is fine", sourceLocation: sourceLocation)
        try store.save(first)
        #expect(store.load() == first, "a saved session loads back whole", sourceLocation: sourceLocation)
        try store.save(second)
        #expect(store.load() == second, "the last save wins", sourceLocation: sourceLocation)
        if let reopen {
            #expect(try reopen(store).load() == second, "another process sees it", sourceLocation: sourceLocation)
        }
        try store.clear()
        #expect(store.load() == nil, "a cleared store holds no session", sourceLocation: sourceLocation)
        if let reopen {
            #expect(try reopen(store).load() == nil, "and stays cleared", sourceLocation: sourceLocation)
        }
    }
}
