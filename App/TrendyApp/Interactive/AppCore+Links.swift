import Foundation
import TrendyModels
import TrendyRouting

/// The running app's control requests and deep links: a link opens now, or once the person is
/// signed in, onboarded and the first download is in; moves go one at a time.
extension AppCore {
    /// A line on the control socket. A link opens now, or once the person is signed in and
    /// onboarded; moves run one at a time, in the order they came.
    mutating func control(_ line: String, _ reply: Reply, at: Date? = nil) -> [Effect] {
        let request: ControlRequest
        do throws(ControlRequest.Unreadable) {
            request = try ControlRequest(line: line)
        } catch {
            return [.answer(.refused(error.reason), reply)]
        }
        switch request {
        case .open(let link):
            var effects: [Effect] = [.log("Deep link received", ["link": link.description])]
            if route == .authenticated { return effects + [.resolve(link, reply)] }
            pendingLinks.append(link)
            if let at { linkTimes[link.description, default: []].append(at) }
            effects.append(.answer(.waiting("\(link) opens once you are signed in and onboarded"), reply))
            return effects
        case .location, .replay:
            return [.move(request, reply)]
        }
    }

    mutating func openPendingLinks() -> [Effect] {
        guard route == .authenticated, !awaitingFirstPass, !pendingLinks.isEmpty else { return [] }
        defer { pendingLinks = [] }
        return pendingLinks.map { .resolve($0, nil) }
    }

    /// Opens a looked-up link: a tab, an event on its page, or a new event of a type.
    mutating func resolved(_ link: DeepLink, _ target: LinkTarget, _ reply: Reply?) -> [Effect] {
        ui.mode = .browse
        var effects: [Effect] = [.announce(link)]
        switch target {
        case .tab(let tab):
            ui.tab = tab
            ui.selection = 0
        case .event(let index):
            ui.tab = .events
            ui.filter = nil
            ui.page = index / AppUI.pageSize
            ui.selection = index % AppUI.pageSize
        case .log(let typeId):
            if let at = linkTimes[link.description]?.first {
                // Sent while signed out: logged at the time it was sent.
                linkTimes[link.description]?.removeFirst()
                effects.append(.perform(.logAt(typeId: typeId, when: ISO8601.format(at), note: nil, properties: [])))
            } else {
                effects.append(.perform(.log(typeId: typeId)))
            }
        case .missing(let why):
            ui.message = why
            if let reply { effects.append(.answer(.refused(why), reply)) }
            return effects
        }
        if let reply { effects.append(.answer(.done("opened \(link)"), reply)) }
        return effects
    }
}
