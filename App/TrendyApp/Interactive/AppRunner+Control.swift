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
    /// Where `link` leads: a tab, an event's position in the newest-first list, a type to log.
    func resolve(_ link: DeepLink) async -> AppCore.LinkTarget {
        switch link {
        case .tab(let tab):
            return .tab(tab)
        case .event(let id):
            guard let index = try? await env.store.eventPosition(id: id, typeId: nil) else {
                return .missing("No event \(id) on this device.")
            }
            return .event(index: index)
        case .log(let name):
            guard let type = try? await env.store.eventType(named: name)?.value else {
                return .missing("No event type named \(name).")
            }
            return .log(typeId: type.id)
        }
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
