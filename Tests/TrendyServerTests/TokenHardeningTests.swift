import Crypto
import Foundation
import NIOHTTP1
import Testing
import TrendyAPI
import TrendyServer
import TrendyServerTestSupport
import TrendyTestSupport

/// Issue 20, tokens: what a hostile client can do with a token signed with the right secret but
/// the wrong claims (as a leaked secret or another service's token would allow) is refused, on
/// the API and on GoTrue's `/user`; a re-signed unmodified token still works (the forge is right).
@Suite(.timeLimit(.minutes(5)))
struct TokenHardeningTests {
    static let secret = ServerConfiguration.testing().jwtSecret!

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decodePart(_ part: Substring) throws -> [String: Any] {
        var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        let data = try #require(Data(base64Encoded: text))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// `token`'s claims changed by `change`, signed with `secret` under `alg`.
    static func forge(
        _ token: String, alg: String = "HS256", header headerJSON: String? = nil, secret: String = secret,
        _ change: (inout [String: Any]) -> Void
    ) throws -> String {
        var claims = try decodePart(token.split(separator: ".")[1])
        change(&claims)
        let header = base64URL(Data((headerJSON ?? #"{"alg":"\#(alg)","typ":"JWT"}"#).utf8))
        let payload = base64URL(try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]))
        let input = Data("\(header).\(payload)".utf8)
        let key = SymmetricKey(data: Data(secret.utf8))
        let signature: Data =
            alg == "HS512"
            ? Data(HMAC<SHA512>.authenticationCode(for: input, using: key))
            : Data(HMAC<SHA256>.authenticationCode(for: input, using: key))
        return "\(header).\(payload).\(base64URL(signature))"
    }

    @Test func tokensWithTheRightSignatureButWrongClaimsAreRefused() async throws {
        try await ServerHarness.with { h in
            let alice = try await h.signUp("alice@example.com")
            let bob = try await h.signUp("bob@example.com")
            let now = h.clock.now.timeIntervalSince1970
            func status(_ token: String) async throws -> (api: Int, user: Int) {
                let auth = [("Authorization", "Bearer \(token)")]
                return (
                    try await h.raw(.GET, "/api/v1/event-types", headers: auth).status,
                    try await h.raw(.GET, "/auth/v1/user", headers: auth).status
                )
            }
            // The control: the same claims re-signed are accepted.
            let same = try Self.forge(alice.accessToken) { _ in }
            #expect(try await status(same) == (200, 200))

            let cases: [(String, String)] = [
                ("nbf in the future", try Self.forge(alice.accessToken) { $0["nbf"] = Int(now) + 600 }),
                ("another user's session", try Self.forge(alice.accessToken) { $0["sub"] = bob.user.id }),
                ("the anon audience", try Self.forge(alice.accessToken) { $0["aud"] = ["anon"] }),
                ("the service role", try Self.forge(alice.accessToken) { $0["role"] = "service_role" }),
                ("another issuer", try Self.forge(alice.accessToken) { $0["iss"] = "https://elsewhere.example" }),
                ("HS512 with the same secret", try Self.forge(alice.accessToken, alg: "HS512") { _ in }),
                // Signed right (HS256, the secret) under a header that says otherwise: an outsider
                // found the header was never read.
                ("alg none, HS256-signed", try Self.forge(alice.accessToken, header: #"{"alg":"none"}"#) { _ in }),
                ("alg HS512, HS256-signed", try Self.forge(alice.accessToken, header: #"{"alg":"HS512"}"#) { _ in }),
                ("alg RS256, HS256-signed", try Self.forge(alice.accessToken, header: #"{"alg":"RS256"}"#) { _ in }),
                ("alg hs256", try Self.forge(alice.accessToken, header: #"{"alg":"hs256"}"#) { _ in }),
                ("no alg", try Self.forge(alice.accessToken, header: #"{"typ":"JWT"}"#) { _ in }),
                ("an empty header", try Self.forge(alice.accessToken, header: "{}") { _ in }),
                (
                    "an unknown critical extension",
                    try Self.forge(alice.accessToken, header: #"{"alg":"HS256","crit":["exp"]}"#) { _ in }
                ),
                ("another type", try Self.forge(alice.accessToken, header: #"{"alg":"HS256","typ":"JWE"}"#) { _ in }),
                (
                    "another secret",
                    try Self.forge(alice.accessToken, secret: "not-the-secret-0123456789-abcdefgh") { _ in }
                ),
            ]
            for (name, token) in cases {
                let (api, user) = try await status(token)
                #expect(api == 401, "\(name): API answered \(api)")
                #expect(user == 401 || user == 403, "\(name): /user answered \(user)")
            }
            // A past nbf is fine.
            let past = try Self.forge(alice.accessToken) { $0["nbf"] = Int(now) - 600 }
            #expect(try await status(past) == (200, 200))
        }
    }
}
