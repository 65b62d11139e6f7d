import Logging
import Testing

@testable import TrendyLogging

struct RedactorTests {
    let redactor = Redactor()

    @Test(arguments: [
        "access_token", "refresh_token", "password", "authorization", "apikey", "Authorization", "API-Key",
        "new_password", "provider_refresh_token", "client_secret", "jwt_secret",
    ])
    func sensitiveKeysAreRedacted(key: String) {
        let out = redactor.redact([key: .string("s3cr3t-value")])
        #expect(out[key] == .string(Redactor.redactedMarker))
    }

    @Test func ordinaryKeysAreKept() {
        let out = redactor.redact(["count": .int(3), "phase": .string("pushing")])
        #expect(out["phase"] == .string("pushing"))
        #expect(out["count"]?.description == "3")
    }

    @Test func extraSensitiveKeysAreRedacted() {
        let r = Redactor(extraSensitiveKeys: ["pin_code"])
        #expect(r.redact(["PIN-code": .string("1234")])["PIN-code"] == .string(Redactor.redactedMarker))
    }

    @Test func sensitiveValuesAreRedactedUnderAnyKey() {
        let out = redactor.redact(["note": .sensitive("hunter2")])
        #expect(out["note"] == .string(Redactor.redactedMarker))
        #expect(SensitiveValue("hunter2").description == Redactor.redactedMarker)
    }

    @Test func nestedValuesAreRedacted() {
        let out = redactor.redact([
            "request": .dictionary(["password": .string("pw"), "user": .string("jane@example.com")]),
            "list": .array([.string("Bearer abc.def")]),
        ])
        #expect(
            out["request"] == .dictionary(["password": .string("[REDACTED]"), "user": .string("j***@example.com")]))
        #expect(out["list"] == .array([.string("Bearer [REDACTED]")]))
    }

    @Test func jwtsInTextAreRedacted() {
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJl"
        #expect(redactor.scrub("token was \(jwt) ok") == "token was [REDACTED] ok")
    }

    @Test func bearerCredentialsAreRedacted() {
        #expect(redactor.scrub("Authorization: Bearer abc123") == "Authorization: [REDACTED]")
        #expect(redactor.scrub("sent bearer xyz to server") == "sent bearer [REDACTED] to server")
    }

    @Test func keyValuePairsInTextAreRedacted() {
        #expect(
            redactor.scrub("POST /token?grant_type=password&password=hunter2&x=1")
                == "POST /token?grant_type=password&password=[REDACTED]&x=1")
        #expect(
            redactor.scrub(#"{"refresh_token":"r-123","user":"u"}"#) == #"{"refresh_token":"[REDACTED]","user":"u"}"#)
        #expect(redactor.scrub("apikey: abc def") == "apikey: [REDACTED] def")
    }

    @Test func emailsAreMasked() {
        #expect(redactor.scrub("signed in as jane.doe+x@example.co.uk.") == "signed in as j***@example.co.uk.")
        #expect(Redactor.maskEmail("a@b.io") == "a***@b.io")
        #expect(redactor.scrub("at @home, user@localhost") == "at @home, user@localhost")
    }

    @Test func scrubbingIsIdempotent() {
        let once = redactor.scrub("jane@example.com password=x Bearer y")
        #expect(redactor.scrub(once) == once)
    }

    @Test func plainTextIsUnchanged() {
        let text = "Synced 50 events in 12ms: ok"
        #expect(redactor.scrub(text) == text)
    }
}
