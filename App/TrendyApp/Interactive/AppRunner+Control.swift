import Foundation
import Logging
import TrendyAuth
import TrendyGeofence
import TrendyGeofenceLive
import TrendyLogging
import TrendyModels
import TrendyOnboarding
import TrendyRouting
import TrendySync

extension AppRunner {
    /// Answers one request handed over on the control socket. A link opens now, or once the
    /// person is signed in and onboarded; moves run one at a time, in the order they came, each
    /// reporting its own crossings.
    func handle(
        _ request: ControlRequest, answer: @escaping @Sendable (String) -> Void, ui: inout AppUI, route: AppRoute,
        pendingLinks: inout [DeepLink], moves: inout Task<Void, Never>?, sink: AsyncStream<Input>.Continuation
    ) async {
        switch request {
        case .open(let link):
            log.info("Deep link received", metadata: ["link": .string(link.description)])
            if route == .authenticated {
                let failure = await open(link, ui: &ui)
                answer((failure.map { ControlReply.refused($0) } ?? .done("opened \(link)")).line)
            } else {
                pendingLinks.append(link)
                answer(ControlReply.waiting("\(link) opens once you are signed in and onboarded").line)
            }
        case .location, .replay:
            let env = env
            let previous = moves
            moves = Task {
                await previous?.value
                let reply = await Self.move(env, request)
                answer(reply.line)
                sink.yield(.message(reply.description))
            }
        }
    }

    /// Opens `link`: a tab, an event on its page, or a new event of a type; why not, if it could not.
    func open(_ link: DeepLink, ui: inout AppUI) async -> String? {
        env.routing.send(.deepLink(link.description))
        ui.mode = .browse
        switch link {
        case .tab(let tab):
            ui.tab = tab
            ui.selection = 0
            return nil
        case .event(let id):
            let newest = (try? await env.store.events(limit: 1_000_000, since: nil).map(\.value.id)) ?? []
            guard let index = newest.firstIndex(of: id) else {
                ui.message = "No event \(id) on this device."
                return ui.message
            }
            ui.tab = .events
            ui.filter = nil
            ui.page = index / AppUI.pageSize
            ui.selection = index % AppUI.pageSize
            return nil
        case .log(let name):
            guard let type = try? await env.store.eventType(named: name)?.value else {
                ui.message = "No event type named \(name)."
                return ui.message
            }
            _ = await perform(.log(typeId: type.id), ui: &ui, route: .authenticated, sink: nil)
        }
        return nil
    }

    /// Moves the simulated device for a `trendy location set|replay` another process handed over;
    /// one line of what happened.
    static func move(_ env: AppEnvironment, _ request: ControlRequest) async -> ControlReply {
        do {
            let fixes: [LocationFix]
            var speed: Double?
            switch request {
            case .location(let words, let at):
                fixes = [LocationFix(try parseCoordinate(words), time: try parseTime(at, now: env.now()))]
            case .replay(let path, let factor):
                guard let data = FileManager.default.contents(atPath: path) else {
                    return .refused("cannot read \(path)")
                }
                fixes = try GPXTrack.parse([UInt8](data))
                speed = factor
            case .open: return .refused("not a move")
            }
            let summary = try await moveDevice(env, fixes: fixes, speed: speed)
            await env.sync.localWriteHappened()
            return .done(summary.line)
        } catch let error as CLIError {
            return .refused(error.message)
        } catch {
            return .refused("\(error)")
        }
    }
}
