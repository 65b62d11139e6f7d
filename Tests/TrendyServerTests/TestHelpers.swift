import AsyncHTTPClient
import Foundation
import TrendyAPI
import TrendyAPILive
import TrendyLogging
import TrendyModels
import TrendyServer
import TrendyServerTestSupport

/// Makes a token signed by a different server (different secret).
enum ServerHarnessForeignToken {
    static func token() async throws -> String {
        var token = ""
        try await ServerHarness.with(.testing { $0.jwtSecret = "another-secret-entirely-0123456789abcdef" }) { h in
            token = try await h.signUp().accessToken
        }
        return token
    }
}

enum LiveTrendyAPIClientFactory {
    static func make(http: HTTPClient, url: URL) -> LiveTrendyAPIClient {
        LiveTrendyAPIClient(
            configuration: .init(baseURL: url, budget: .forTests(request: .seconds(5))), http: http,
            tokens: StaticTokenProvider("t"),
            logger: LogSystem.disabled().logger(.api))
    }
}
