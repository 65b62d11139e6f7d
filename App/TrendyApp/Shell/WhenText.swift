import Foundation
import TrendyModels

/// Times and days as a person types them in the app — `now`, `-2h`, `30m ago`, `yesterday 18:00`,
/// `09:15`, `2026-11-20`, `2026-11-20 09:00`, or ISO-8601 — read in the device's zone. Pure.
enum WhenText {
    /// The time `text` names, or nil when it names none.
    static func time(_ text: String, now: Date, calendar: Calendar) -> Date? {
        let words = text.lowercased().split(whereSeparator: \.isWhitespace).map(String.init)
        guard !words.isEmpty, words != ["now"] else { return now }
        if words.count == 1, let iso = TrendyJSON.parseDate(words[0]) { return iso }
        if let ago = relative(words) { return now.addingTimeInterval(-ago) }
        guard let day = day(words[0], now: now, calendar: calendar) else {
            // A time alone is today's.
            guard words.count == 1, let (h, m) = clock(words[0]) else { return nil }
            return calendar.date(bySettingHour: h, minute: m, second: 0, of: now)
        }
        switch words.count {
        case 1: return day
        case 2:
            guard let (h, m) = clock(words[1]) else { return nil }
            return calendar.date(bySettingHour: h, minute: m, second: 0, of: day)
        default: return nil
        }
    }

    /// The start of the day `text` names (`2026-11-20`, `today`, `yesterday`, `-7d`), or nil.
    static func day(_ text: String, now: Date, calendar: Calendar) -> Date? {
        let text = text.lowercased().trimmingCharacters(in: .whitespaces)
        switch text {
        case "today", "": return calendar.startOfDay(for: now)
        case "yesterday": return calendar.date(byAdding: .day, value: -1, to: calendar.startOfDay(for: now))
        default: break
        }
        if let ago = relative([text]) { return calendar.startOfDay(for: now.addingTimeInterval(-ago)) }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
        guard parts.count == 3, let y = parts[0], let m = parts[1], let d = parts[2], (1...9999).contains(y),
            let date = calendar.date(from: DateComponents(year: y, month: m, day: d)),
            calendar.dateComponents([.year, .month, .day], from: date) == DateComponents(year: y, month: m, day: d)
        else { return nil }
        return date
    }

    /// `-2h`, `2h ago`, `30m`, `-1d`, `1w ago`: how long ago, in seconds.
    static func relative(_ words: [String]) -> TimeInterval? {
        var text = words.joined(separator: " ")
        let ago = text.hasSuffix(" ago") || text.hasPrefix("-")
        guard ago else { return nil }
        if text.hasSuffix(" ago") { text.removeLast(4) }
        if text.hasPrefix("-") { text.removeFirst() }
        text = text.replacingOccurrences(of: " ", with: "")
        let units: [(String, TimeInterval)] = [
            ("min", 60), ("m", 60), ("h", 3_600), ("d", 86_400), ("w", 604_800),
        ]
        for (unit, seconds) in units where text.hasSuffix(unit) {
            guard let n = Int(text.dropLast(unit.count)), n >= 0, n <= 100_000 else { return nil }
            return TimeInterval(n) * seconds
        }
        return nil
    }

    /// `9:05`, `09:05`, `18:00`: hours and minutes.
    static func clock(_ text: String) -> (Int, Int)? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].count == 2, let h = Int(parts[0]), let m = Int(parts[1]), (0...23).contains(h),
            (0...59).contains(m)
        else { return nil }
        return (h, m)
    }

    /// `date` as it would be typed: `2026-11-20 09:05` in the calendar's zone.
    static func typed(_ date: Date, calendar: Calendar) -> String {
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        return String(
            format: "%04d-%02d-%02d %02d:%02d", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0)
    }
}
