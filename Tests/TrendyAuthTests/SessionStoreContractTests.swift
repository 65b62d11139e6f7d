import Foundation
import Testing
import TrendyAuth
import TrendyAuthLive
import TrendyAuthTesting
import TrendyLogging
import TrendyTestSupport

/// Both session stores keep the contract every store must keep (docs/porting.md).
@Suite struct SessionStoreContractTests {
    @Test func theInMemoryStoreKeepsTheContract() throws {
        try SessionStoreContract.verify(fresh: { InMemorySessionStore() })
    }

    @Test func theFileStoreKeepsTheContract() throws {
        let directory = TemporaryDirectory("session", create: false)
        let file = directory.url.appendingPathComponent("session.json")
        let logger = LogSystem.disabled().logger(.auth)
        try SessionStoreContract.verify(
            fresh: { FileSessionStore(file: file, logger: logger) },
            reopen: { _ in FileSessionStore(file: file, logger: logger) })
    }
}
