import Foundation
import Logging
import Synchronization
import TrendyTestSupport

@testable import TrendyLogging

/// Collects what a sink sends to its fallback.
final class CapturedBytes: Sendable {
    let storage = Mutex<[UInt8]>([])
    var text: String { String(decoding: storage.withLock { $0 }, as: UTF8.self) }
    var closure: @Sendable ([UInt8]) -> Void { { [self] bytes in storage.withLock { $0 += bytes } } }
}

/// The secrets every redaction test feeds through every output.
enum Secrets {
    static let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJlLXNlY3JldA"
    static let refresh = "rt-9f8e7d6c5b4a"
    static let password = "correct-horse-battery"
    static let apiKey = "anon-key-0123456789"
    static let email = "jane.doe@example.com"
    static let all = [jwt, refresh, password, apiKey, email, "sensitive-note-42"]

    static func logEverything(_ logger: Logging.Logger) {
        logger.info(
            "signing in \(email) with Bearer \(jwt)",
            metadata: [
                "access_token": .string(jwt), "refresh_token": .string(refresh), "password": .string(password),
                "apikey": .string(apiKey), "authorization": .string("Bearer \(jwt)"), "email": .string(email),
                "note": .sensitive("sensitive-note-42"), "url": .string("/token?refresh_token=\(refresh)"),
            ])
    }
}
