import Foundation
import JWTKit

/// The claims of an access token, as GoTrue issues them.
struct AccessClaims: JWTPayload, Equatable {
    var sub: SubjectClaim
    var aud: AudienceClaim
    var exp: ExpirationClaim
    var iat: IssuedAtClaim
    var iss: IssuerClaim
    var email: String
    var role: String
    var sessionId: String
    var aal: String
    var isAnonymous: Bool
    /// Not before: never set by this server, refused while in the future when a token has it.
    var nbf: NotBeforeClaim? = nil

    enum CodingKeys: String, CodingKey {
        case sub, aud, exp, iat, iss, email, role, aal, nbf
        case sessionId = "session_id"
        case isAnonymous = "is_anonymous"
    }

    /// Time claims are checked by ``TokenIssuer`` against its injected clock, not here.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// Signs and verifies HS256 access tokens.
final class TokenIssuer: Sendable {
    /// Why a token was refused.
    enum Failure: Error, Equatable {
        /// Not a JWT, wrong algorithm or wrong signature.
        case invalid
        /// Well-formed and signed, but past `exp`.
        case expired
    }

    let keys: JWTKeyCollection
    let issuer: String

    init(secret: String, issuer: String) async {
        keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        self.issuer = issuer
    }

    func sign(userId: String, email: String, sessionId: String, now: Date, lifetime: TimeInterval) async throws
        -> (token: String, expiresAt: Date)
    {
        let expires = Date(timeIntervalSince1970: (now.timeIntervalSince1970 + lifetime).rounded(.down))
        let claims = AccessClaims(
            sub: .init(value: userId), aud: .init(value: ["authenticated"]), exp: .init(value: expires),
            iat: .init(value: Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))),
            iss: .init(value: issuer), email: email, role: "authenticated", sessionId: sessionId, aal: "aal1",
            isAnonymous: false)
        return (try await keys.sign(claims), expires)
    }

    /// Whether the token's header is the one this server signs: `alg` HS256, `typ` JWT when
    /// present, no `crit`. The signature check alone would take an HS256 signature under a header
    /// that says `none` or `HS512`.
    static func hasOwnHeader(_ token: String) -> Bool {
        guard let first = token.split(separator: ".", omittingEmptySubsequences: false).first else { return false }
        var text = first.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text),
            let header = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            header["alg"] as? String == "HS256", header["crit"] == nil
        else { return false }
        if let typ = header["typ"] { return (typ as? String)?.uppercased() == "JWT" }
        return true
    }

    func verify(_ token: String, now: Date) async throws(Failure) -> AccessClaims {
        guard Self.hasOwnHeader(token) else { throw .invalid }
        let claims: AccessClaims
        do {
            claims = try await keys.verify(token, as: AccessClaims.self)
        } catch {
            throw .invalid
        }
        guard claims.exp.value > now else { throw .expired }
        // What GoTrue's user routes require of a user's token: not before its time, for this
        // issuer, the `authenticated` audience and role (a service or anon token is not a user).
        if let nbf = claims.nbf, nbf.value > now { throw .invalid }
        guard claims.iss.value == issuer, claims.aud.value.contains("authenticated"), claims.role == "authenticated"
        else { throw .invalid }
        return claims
    }
}
