/// Byte-level scanners behind ``Redactor/scrub(_:)``. Each returns whether it changed anything.
enum TextScrubber {
    static let marker = Array(Redactor.redactedMarker.utf8)

    static func isAlnum(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
    }
    static func isBase64URL(_ b: UInt8) -> Bool { isAlnum(b) || b == 0x2D || b == 0x5F }
    static func isKeyByte(_ b: UInt8) -> Bool { isAlnum(b) || b == 0x5F || b == 0x2D }
    static func isLocalPart(_ b: UInt8) -> Bool {
        isAlnum(b) || b == 0x2E || b == 0x5F || b == 0x25 || b == 0x2B || b == 0x2D
    }
    static func isDomain(_ b: UInt8) -> Bool { isAlnum(b) || b == 0x2E || b == 0x2D }
    static func lower(_ b: UInt8) -> UInt8 { (b >= 0x41 && b <= 0x5A) ? b + 32 : b }

    /// `eyJ…​.…​.…` → `[REDACTED]`.
    static func redactJWTs(_ bytes: inout [UInt8]) -> Bool {
        var changed = false
        var i = 0
        while i + 3 <= bytes.count {
            if bytes[i] == 0x65, bytes[i + 1] == 0x79, bytes[i + 2] == 0x4A,
                i == 0 || !isBase64URL(bytes[i - 1])
            {
                var j = i
                var dots = 0
                while j < bytes.count, isBase64URL(bytes[j]) || bytes[j] == 0x2E {
                    if bytes[j] == 0x2E { dots += 1 }
                    j += 1
                }
                if dots >= 2 {
                    bytes.replaceSubrange(i..<j, with: marker)
                    i += marker.count
                    changed = true
                    continue
                }
                i = j
            } else {
                i += 1
            }
        }
        return changed
    }

    /// `Bearer <credential>` / `Basic <credential>` → `Bearer [REDACTED]`.
    static func redactBearer(_ bytes: inout [UInt8]) -> Bool {
        var changed = false
        for scheme in [Array("bearer ".utf8), Array("basic ".utf8)] {
            var i = 0
            while i + scheme.count < bytes.count {
                var match = true
                for k in 0..<scheme.count where lower(bytes[i + k]) != scheme[k] {
                    match = false
                    break
                }
                if !match || (i > 0 && isAlnum(bytes[i - 1])) {
                    i += 1
                    continue
                }
                let start = i + scheme.count
                var end = start
                while end < bytes.count, bytes[end] != 0x20, bytes[end] != 0x22, bytes[end] != 0x2C,
                    bytes[end] != 0x0A, bytes[end] != 0x27
                {
                    end += 1
                }
                if end > start, Array(bytes[start..<end]) != marker {
                    bytes.replaceSubrange(start..<end, with: marker)
                    changed = true
                }
                i = start + marker.count
            }
        }
        return changed
    }

    /// `password=hunter2`, `"refresh_token":"abc"`, `apikey: xyz` → the value is redacted.
    static func redactKeyValues(_ bytes: inout [UInt8], isSensitive: (String) -> Bool) -> Bool {
        var changed = false
        var i = 0
        while i < bytes.count {
            guard isKeyByte(bytes[i]), i == 0 || !isKeyByte(bytes[i - 1]) else {
                i += 1
                continue
            }
            var keyEnd = i
            while keyEnd < bytes.count, isKeyByte(bytes[keyEnd]) { keyEnd += 1 }
            // Optional closing quote of a JSON key, then `=` or `:`, then optional space/quote.
            var j = keyEnd
            if j < bytes.count, bytes[j] == 0x22 || bytes[j] == 0x27 { j += 1 }
            guard j < bytes.count, bytes[j] == 0x3D || bytes[j] == 0x3A else {
                i = keyEnd
                continue
            }
            let key = String(decoding: bytes[i..<keyEnd], as: UTF8.self)
            guard isSensitive(key) else {
                i = keyEnd
                continue
            }
            j += 1
            while j < bytes.count, bytes[j] == 0x20 { j += 1 }
            var quote: UInt8?
            if j < bytes.count, bytes[j] == 0x22 || bytes[j] == 0x27 {
                quote = bytes[j]
                j += 1
            }
            var end = j
            if let q = quote {
                while end < bytes.count, bytes[end] != q {
                    end += bytes[end] == 0x5C ? 2 : 1
                }
                end = min(end, bytes.count)
            } else {
                while end < bytes.count, bytes[end] != 0x26, bytes[end] != 0x20, bytes[end] != 0x2C,
                    bytes[end] != 0x0A, bytes[end] != 0x7D, bytes[end] != 0x3B
                {
                    end += 1
                }
                // `authorization: Bearer x` keeps scanning past the scheme word.
                let word = String(decoding: bytes[j..<end], as: UTF8.self).lowercased()
                if end < bytes.count, bytes[end] == 0x20, ["bearer", "basic", "token"].contains(word) {
                    end += 1
                    while end < bytes.count, bytes[end] != 0x20, bytes[end] != 0x2C, bytes[end] != 0x0A,
                        bytes[end] != 0x26
                    {
                        end += 1
                    }
                }
            }
            if end > j, Array(bytes[j..<end]) != marker {
                bytes.replaceSubrange(j..<end, with: marker)
                changed = true
                i = j + marker.count
            } else {
                i = max(end, keyEnd)
            }
        }
        return changed
    }

    /// `jane.doe@example.com` → `j***@example.com`.
    static func maskEmails(_ bytes: inout [UInt8]) -> Bool {
        var changed = false
        var i = 0
        while i < bytes.count {
            guard bytes[i] == 0x40 else {
                i += 1
                continue
            }
            var start = i
            while start > 0, isLocalPart(bytes[start - 1]) { start -= 1 }
            var end = i + 1
            var sawDot = false
            while end < bytes.count, isDomain(bytes[end]) {
                if bytes[end] == 0x2E { sawDot = true }
                end += 1
            }
            // Trailing dots belong to the sentence, not the domain.
            while end > i + 1, bytes[end - 1] == 0x2E { end -= 1 }
            let local = i - start
            if local >= 1, sawDot, end > i + 1 {
                let alreadyMasked = local == 4 && bytes[(start + 1)..<i].elementsEqual("***".utf8)
                if !alreadyMasked {
                    bytes.replaceSubrange((start + 1)..<i, with: Array("***".utf8))
                    changed = true
                    i = start + 5
                    continue
                }
            }
            i += 1
        }
        return changed
    }
}
