import Foundation

/// What another `trendy` process asks the running app over its control socket: one request per
/// connection, one line each way. Both ends use this one codec, so a verb or an answer's kind is
/// never spelled twice (the client used to decide its exit status from `answer.hasPrefix("error")`).
enum ControlRequest: Equatable, Sendable {
    /// `trendy open <link>`.
    case open(DeepLink)
    /// `trendy location set <lat> <lon> [--at <time>]`: the point's words as given (`52.52 13.405`
    /// or `52.52,13.405`) and the time (nil: now).
    case location(point: [String], at: String?)
    /// `trendy location replay <file.gpx>`: the track's absolute path and the speed (nil: max).
    case replay(path: String, speed: Double?)

    /// The request as sent.
    var line: String {
        switch self {
        case .open(let link): "open \(link)"
        case .location(let point, let at): (["location", at ?? "now"] + point).joined(separator: " ")
        case .replay(let path, let speed): "replay \(speed.map { String($0) } ?? "max") \(path)"
        }
    }

    /// Why a line is not a request.
    struct Unreadable: Error, Equatable {
        let reason: String
    }

    /// A line as received.
    init(line: String) throws(Unreadable) {
        let words = line.trimmingCharacters(in: .whitespaces).split(separator: " ", omittingEmptySubsequences: true)
            .map(String.init)
        guard let verb = words.first else { throw Unreadable(reason: "an empty request") }
        let rest = Array(words.dropFirst())
        switch verb {
        case "open":
            guard let link = DeepLink(rest.joined(separator: " ")) else {
                throw Unreadable(reason: "not a Trendy link: \(rest.joined(separator: " "))")
            }
            self = .open(link)
        case "location":
            guard let at = rest.first else { throw Unreadable(reason: "location needs a time and a point") }
            self = .location(point: Array(rest.dropFirst()), at: at == "now" ? nil : at)
        case "replay":
            // The speed first: a path may hold spaces.
            guard let speed = rest.first, rest.count >= 2 else {
                throw Unreadable(reason: "replay needs a speed and a track")
            }
            let path = line.trimmingCharacters(in: .whitespaces).dropFirst("replay \(speed) ".count)
            self = .replay(path: String(path), speed: speed == "max" ? nil : Double(speed))
        default:
            throw Unreadable(reason: "unknown request \(verb)")
        }
    }
}

/// The running app's answer to a ``ControlRequest``.
enum ControlReply: Equatable, Sendable, CustomStringConvertible {
    /// Done; what happened, in words.
    case done(String)
    /// Taken, to be done later (a link while signed out); when, in words.
    case waiting(String)
    /// Not done; why.
    case refused(String)
    /// Not taken: the app did not answer in time (this side's verdict, never sent).
    case unanswered(String)

    /// The reply as sent: its kind, a space, its text on one line.
    var line: String {
        switch self {
        case .done(let text): "done " + text
        case .waiting(let text): "waiting " + text
        case .refused(let text), .unanswered(let text): "refused " + text
        }
    }

    /// A reply as received (nil: not one this program sends).
    init?(line: String) {
        let (kind, text) =
            line.firstIndex(of: " ").map { (line[..<$0], String(line[line.index(after: $0)...])) }
            ?? (Substring(line), "")
        switch kind {
        case "done": self = .done(text)
        case "waiting": self = .waiting(text)
        case "refused": self = .refused(text)
        default: return nil
        }
    }

    /// What a person reads.
    var description: String {
        switch self {
        case .done(let text): text
        case .waiting(let text): "waiting: " + text
        case .refused(let text), .unanswered(let text): "error: " + text
        }
    }
}

/// The deadline a request carries (see ``ControlServer``): the app takes a request only if it
/// reads it by then, so what a sender gave up on is never done.
enum ControlDeadline {
    /// What the app answers at once for a request it took.
    static let taken = "taken"
    /// How long a sender waits for the app to take a request.
    static let wait: TimeInterval = 3
    /// How much longer it listens for `taken` than the app may take to send it (the app checks
    /// the deadline, then answers at once).
    static let margin: TimeInterval = 2

    /// `line` as sent with its deadline.
    static func stamp(_ line: String, by deadline: Date) -> String {
        "by \(Int64((deadline.timeIntervalSince1970 * 1000).rounded(.up))) \(line)"
    }

    /// The request in `line` if it was read by its deadline.
    static func take(_ line: String, now: Date) -> Result<String, ControlRequest.Unreadable> {
        let words = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard words.count == 3, words[0] == "by", let ms = Int64(words[1]) else {
            return .failure(.init(reason: "a request needs its deadline (by <ms> <request>)"))
        }
        guard now.timeIntervalSince1970 * 1000 <= Double(ms) else {
            return .failure(.init(reason: "the request came after its sender gave up; nothing was done"))
        }
        return .success(String(words[2]))
    }
}
