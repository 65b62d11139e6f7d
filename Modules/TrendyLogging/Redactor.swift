import Logging
import Synchronization

/// Removes secrets and masks personal data before anything is rendered.
///
/// Applied by ``TrendyLogHandler`` to every record, so it holds for every sink, and again by
/// ``LogExporter`` to every exported line. Rules:
/// - values under sensitive keys (`access_token`, `refresh_token`, `password`, `authorization`,
///   `apikey`, anything ending in `_token`, `_secret` or `password`, plus extra keys) become
///   `[REDACTED]`; so does every ``SensitiveValue``;
/// - inside any text, JWTs, `Bearer …` credentials and `key=value` / `"key":"value"` pairs
///   with a sensitive key are redacted, and email addresses are masked (`j***@example.com`).
public struct Redactor: Sendable {
    /// What a redacted value is replaced with.
    public static let redactedMarker = "[REDACTED]"

    static let defaultSensitiveKeys: Set<String> = [
        "access_token", "refresh_token", "password", "authorization", "apikey", "api_key",
        "token", "secret", "id_token", "provider_token", "provider_refresh_token", "cookie",
        "set_cookie", "client_secret", "jwt", "jwt_secret", "signing_secret", "passphrase",
    ]
    static let textKeyStems = [
        "token", "password", "secret", "apikey", "api_key", "authorization", "jwt", "passphrase",
    ]

    let sensitiveKeys: Set<String>
    /// Decisions per key seen; logs use a small, fixed set of keys, so this stays small.
    let decisions = KeyDecisionCache()

    /// Creates a redactor; `extraSensitiveKeys` are added to the built-in list.
    public init(extraSensitiveKeys: Set<String> = []) {
        sensitiveKeys = Self.defaultSensitiveKeys.union(extraSensitiveKeys.map(Self.normalize))
    }

    static func normalize(_ key: String) -> String {
        String(key.lowercased().map { $0 == "-" || $0 == " " ? "_" : $0 })
    }

    /// Whether values stored under `key` must never be shown.
    public func isSensitive(key: String) -> Bool {
        if let known = decisions.lookup(key) { return known }
        let decision = decide(key)
        decisions.store(key, decision)
        return decision
    }

    func decide(_ key: String) -> Bool {
        let k = Self.normalize(key)
        if sensitiveKeys.contains(k) { return true }
        return k.hasSuffix("_token") || k.hasSuffix("password") || k.hasSuffix("_secret")
            || k.hasSuffix("apikey") || k.hasSuffix("api_key")
    }

    /// Returns metadata with every secret redacted and every email masked.
    public func redact(_ metadata: Logger.Metadata) -> Logger.Metadata {
        var out = Logger.Metadata(minimumCapacity: metadata.count)
        for (key, value) in metadata {
            out[key] = isSensitive(key: key) ? .string(Self.redactedMarker) : redact(value)
        }
        return out
    }

    /// Returns one value with secrets redacted and emails masked.
    public func redact(_ value: Logger.MetadataValue) -> Logger.MetadataValue {
        switch value {
        case .string(let s):
            return .string(scrub(s))
        case .stringConvertible(let c):
            if let scalar = c as? LogScalar {
                switch scalar {
                case .int, .double, .bool, .milliseconds: return value
                case .sensitive: return .string(Self.redactedMarker)
                case .error(let type, let message):
                    let scrubbed = scrub(message)
                    return scrubbed == message
                        ? value : .stringConvertible(LogScalar.error(type: type, message: scrubbed))
                }
            }
            if c is SensitiveValue { return .string(Self.redactedMarker) }
            if c is Int || c is Double || c is Bool { return value }
            let text = c.description
            let scrubbed = scrub(text)
            return scrubbed == text ? value : .string(scrubbed)
        case .dictionary(let d):
            return .dictionary(redact(d))
        case .array(let a):
            return .array(a.map(redact))
        @unknown default:
            return .string(scrub(value.description))
        }
    }

    /// Returns `text` with JWTs, bearer credentials and sensitive `key=value` pairs redacted
    /// and email addresses masked. Text without any trigger is returned unchanged and cheaply.
    public func scrub(_ text: String) -> String {
        guard Self.mayNeedScrubbing(text) else { return text }
        var bytes = Array(text.utf8)
        var changed = false
        if bytes.contains(UInt8(ascii: "=")) || bytes.contains(UInt8(ascii: ":")) {
            changed = TextScrubber.redactKeyValues(&bytes, isSensitive: isSensitive) || changed
        }
        changed = TextScrubber.redactBearer(&bytes) || changed
        changed = TextScrubber.redactJWTs(&bytes) || changed
        if bytes.contains(UInt8(ascii: "@")) {
            changed = TextScrubber.maskEmails(&bytes) || changed
        }
        return changed ? String(decoding: bytes, as: UTF8.self) : text
    }

    /// A single allocation-free pass: could any rule apply to `text`?
    static func mayNeedScrubbing(_ text: String) -> Bool {
        var previous: UInt8 = 0
        for b in text.utf8 {
            switch b {
            case UInt8(ascii: "@"), UInt8(ascii: "="), UInt8(ascii: ":"): return true
            case UInt8(ascii: "y") where previous == UInt8(ascii: "e"): return true  // eyJ… (a JWT)
            case UInt8(ascii: " ")
            where previous == UInt8(ascii: "r") || previous == UInt8(ascii: "R")
                || previous == UInt8(ascii: "c") || previous == UInt8(ascii: "C"):
                return true  // "bearer " / "basic "
            default: break
            }
            previous = b
        }
        return false
    }

    /// Masks one email address: `jane@example.com` → `j***@example.com`.
    public static func maskEmail(_ email: String) -> String {
        var bytes = Array(email.utf8)
        return TextScrubber.maskEmails(&bytes) ? String(decoding: bytes, as: UTF8.self) : email
    }
}

/// A bounded, thread-safe memo of key → sensitive decisions.
final class KeyDecisionCache: Sendable {
    let storage = Mutex<[String: Bool]>([:])

    func lookup(_ key: String) -> Bool? { storage.withLock { $0[key] } }

    func store(_ key: String, _ decision: Bool) {
        storage.withLock { cache in
            if cache.count >= 4_096 { cache.removeAll(keepingCapacity: true) }
            cache[key] = decision
        }
    }
}
