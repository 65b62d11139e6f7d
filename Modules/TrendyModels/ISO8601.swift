import Foundation

/// Fast ISO-8601 date-times for the wire format. Formatting and parsing dates dominated
/// encode/decode time with Foundation's format styles; these handle the common shapes directly
/// and fall back to Foundation for anything unusual.
public enum ISO8601 {
    /// `2026-11-22T10:00:00.123Z` (UTC, milliseconds).
    public static func format(_ date: Date) -> String {
        let totalMs = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let ms = Int(((totalMs % 1000) + 1000) % 1000)
        var seconds = (totalMs - Int64(ms)) / 1000
        let days = Int((seconds >= 0 ? seconds : seconds - 86_399) / 86_400)
        seconds -= Int64(days) * 86_400
        let (y, m, d) = civil(fromDays: days)
        let h = Int(seconds / 3600)
        let mi = Int(seconds % 3600 / 60)
        let s = Int(seconds % 60)
        var out = [UInt8](repeating: 0, count: 24)
        func put(_ value: Int, _ at: Int, _ width: Int) {
            var v = value
            for i in stride(from: at + width - 1, through: at, by: -1) {
                out[i] = UInt8(48 + v % 10)
                v /= 10
            }
        }
        put(y, 0, 4)
        out[4] = 45
        put(m, 5, 2)
        out[7] = 45
        put(d, 8, 2)
        out[10] = 84
        put(h, 11, 2)
        out[13] = 58
        put(mi, 14, 2)
        out[16] = 58
        put(s, 17, 2)
        out[19] = 46
        put(ms, 20, 3)
        out[23] = 90
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM|±HHMM)`; other ISO-8601 shapes go to
    /// Foundation. Nil when the text is not a date-time, or names a day, hour, minute, second or
    /// offset that does not exist (`2026-02-30`, `24:00`, `10:60`, `+25:00`): nothing rolls over.
    ///
    /// The instant must also lie in years 0001–9999 in UTC, to the millisecond: an offset can
    /// carry a valid local time past either end (`9999-12-31T23:59:59-23:59`), and such a time
    /// would be written as year `0000` (or `10000`), which nothing reads back — one such event
    /// stopped every event command of an install, and every download of its account.
    public static func parse(_ text: String) -> Date? {
        var copy = text
        switch copy.withUTF8({ parseFast($0) }) {
        case .date(let d): return d  // checked writable by parseFast
        case .invalid: return nil
        case .otherShape: break
        }
        // Foundation's parser rolls impossible dates over (Feb 30 → Mar 2): check the calendar
        // date in the text first, in either ISO form (`2026-02-30`, `20260230`).
        guard copy.withUTF8({ calendarDateIsValid($0) }),
            let date = (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
                ?? (try? Date.ISO8601FormatStyle().parse(text)),
            isWritable(date)
        else { return nil }
        return date
    }

    /// The first and last millisecond ``format(_:)`` can write (0001-01-01T00:00:00.000Z and
    /// 9999-12-31T23:59:59.999Z).
    static let writableMilliseconds: ClosedRange<Int64> =
        Int64(daysFromCivil(1, 1, 1)) * 86_400_000...(Int64(daysFromCivil(9999, 12, 31)) + 1) * 86_400_000 - 1

    /// Whether `date`, to the millisecond, lies in years 0001–9999 (UTC): what the wire format can
    /// carry and every reader reads back.
    public static func isWritable(_ date: Date) -> Bool {
        let t = date.timeIntervalSince1970 * 1000
        guard t.isFinite else { return false }
        return writableMilliseconds.contains(Int64(t.rounded()))
    }

    /// Whether the text starts with `YYYY-MM-DD` or `YYYYMMDD` (then the end or `T` and a two-digit
    /// hour) naming a real day. Every other shape is refused before Foundation sees it.
    static func calendarDateIsValid(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        func digits(_ at: Int, _ n: Int) -> Int? {
            guard at + n <= b.count else { return nil }
            var v = 0
            for i in at..<(at + n) {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                v = v * 10 + Int(b[i] - 48)
            }
            return v
        }
        func isTimeMark(_ at: Int) -> Bool { at == b.count || b[at] == 84 || b[at] == 116 }
        // Exactly four-digit years and two-digit months and days: Foundation reads `12345-06-07`
        // as 2345 and `2026-1-1` as January 1st.
        if b.count >= 10, b[4] == 45, b[7] == 45, let y = digits(0, 4), let m = digits(5, 2), let d = digits(8, 2),
            isTimeMark(10)
        {
            // A time needs two-digit hours (Foundation reads `T1:00`).
            if b.count > 10, digits(11, 2) == nil { return false }
            return isValidDay(y, m, d)
        }
        if let y = digits(0, 4), let m = digits(4, 2), let d = digits(6, 2), isTimeMark(8) {
            if b.count > 8, digits(9, 2) == nil { return false }
            return isValidDay(y, m, d)
        }
        return false
    }

    /// Whether month `m` of year `y` (proleptic Gregorian) has a day `d`.
    public static func isValidDay(_ y: Int, _ m: Int, _ d: Int) -> Bool {
        guard y >= 1, (1...12).contains(m), d >= 1 else { return false }
        return d <= daysInMonth(y, m)
    }

    /// Days in month `m` of year `y` (28–31).
    package static func daysInMonth(_ y: Int, _ m: Int) -> Int {
        switch m {
        case 2: return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    enum FastResult {
        case date(Date)
        case invalid
        case otherShape
    }

    static func parseFast(_ b: UnsafeBufferPointer<UInt8>) -> FastResult {
        guard b.count >= 20, b[4] == 45, b[7] == 45, b[10] == 84 || b[10] == 116, b[13] == 58, b[16] == 58 else {
            return .otherShape
        }
        guard let date = parseShaped(b), isWritable(date) else { return .invalid }
        return .date(date)
    }

    static func parseShaped(_ b: UnsafeBufferPointer<UInt8>) -> Date? {
        func digits(_ at: Int, _ n: Int) -> Int? {
            var v = 0
            for i in at..<(at + n) {
                let c = b[i]
                guard c >= 48, c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            return v
        }
        guard let y = digits(0, 4), let mo = digits(5, 2), let d = digits(8, 2), let h = digits(11, 2),
            let mi = digits(14, 2), let s = digits(17, 2),
            isValidDay(y, mo, d), h < 24, mi < 60, s < 60
        else { return nil }
        var i = 19
        var fraction = 0.0
        if i < b.count, b[i] == 46 {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                fraction += Double(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        guard i < b.count else { return nil }
        var offset = 0
        switch b[i] {
        case 90, 122:
            i += 1
        case 43, 45:
            let sign = b[i] == 45 ? -1 : 1
            i += 1
            guard i + 2 <= b.count, let oh = digits(i, 2) else { return nil }
            i += 2
            if i < b.count, b[i] == 58 { i += 1 }
            guard i + 2 <= b.count, let om = digits(i, 2), oh < 24, om < 60 else { return nil }
            i += 2
            offset = sign * (oh * 3600 + om * 60)
        default:
            return nil
        }
        guard i == b.count else { return nil }
        let days = daysFromCivil(y, mo, d)
        let seconds = Double(days) * 86_400 + Double(h * 3600 + mi * 60 + s - offset) + fraction
        return Date(timeIntervalSince1970: seconds)
    }

    /// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm).
    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    package static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (m + 9) % 12
        let doy = (153 * mp + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The proleptic Gregorian date `z0` days after 1970-01-01 (`civil_from_days`).
    package static func civil(fromDays z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
