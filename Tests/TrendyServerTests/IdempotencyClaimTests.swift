import Foundation
import Logging
import Testing
import TrendyServer
import TrendyServerTestSupport

/// An idempotency claim belongs to the request that made it: a request that ran past the lease
/// and lost its claim to a retry can neither release the retry's claim nor overwrite its answer
/// (found by a reviewer: without the token, a late failure deleted the new holder's claim and a
/// third request ran the same operation again). On SQLite, and on PostgreSQL when there is one.
@Suite(.timeLimit(.minutes(5)))
struct IdempotencyClaimTests {
    static var stores: [String] { TestDatabase.url == nil ? ["sqlite"] : ["sqlite", "postgres"] }

    func store(_ kind: String) async throws -> any ServerStore {
        if kind == "sqlite" { return try SQLiteServerStore(path: nil) }
        let url = try #require(TestDatabase.freshURL())
        return try await PostgresServerStore(location: try PostgresLocation(url: url), logger: Logger(label: "test"))
    }

    @Test(arguments: stores)
    func onlyTheHolderReleasesOrAnswers(kind: String) async throws {
        let store = try await store(kind)
        let user = try await store.createUser(
            id: UUID().uuidString.lowercased(), email: "claims-\(UUID().uuidString.prefix(6))@example.com",
            passwordHash: "x", userMetadata: [:], now: Date())
        let start = Date()
        func claim(_ token: String, at seconds: TimeInterval) async throws -> IdempotencyClaim {
            try await store.claimIdempotencyKey(
                userId: user.id, method: "POST", path: "/api/v1/event-types", key: "k", bodyHash: "h", token: token,
                now: start.addingTimeInterval(seconds), maxAge: 86_400, lease: 60)
        }
        #expect(try await claim("A", at: 0) == .claimed)
        #expect(try await claim("B", at: 30) == .busy)
        // A runs past its lease; B takes the claim over.
        #expect(try await claim("B", at: 61) == .claimed)
        // A ends late: its failure releases nothing, its answer is not stored.
        try await store.releaseIdempotencyKey(
            userId: user.id, method: "POST", path: "/api/v1/event-types", key: "k", token: "A")
        #expect(try await claim("C", at: 62) == .busy)
        let late = StoredResponse(bodyHash: "h", status: 201, body: Data("from A".utf8))
        try await store.storeIdempotentResponse(
            userId: user.id, method: "POST", path: "/api/v1/event-types", key: "k", token: "A", response: late,
            now: start.addingTimeInterval(63))
        #expect(try await claim("C", at: 64) == .busy)
        // B answers; from then on the key replays B's answer.
        let answer = StoredResponse(bodyHash: "h", status: 201, body: Data("from B".utf8))
        try await store.storeIdempotentResponse(
            userId: user.id, method: "POST", path: "/api/v1/event-types", key: "k", token: "B", response: answer,
            now: start.addingTimeInterval(65))
        #expect(try await claim("D", at: 66) == .stored(answer))
        await store.close()
    }
}
