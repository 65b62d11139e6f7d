import Foundation
import Logging
import TrendyGeofence
import TrendyLogging
import TrendyModels
import TrendyRouting
import TrendySync

/// A cold launch, in the order the app does it: the route decided synchronously from the session
/// file and the onboarding cache (no database, no network) → the environment → the first frame
/// from the local store → background work (session verification, module start-up hooks such as
/// the sync pass) with a new frame whenever the route or the sync banner changes.
struct AppLaunch {
    /// What a launch did, for `trendy launch --json` and the benchmarks.
    struct Report: Encodable {
        var route: String
        var finalRoute: String
        var commandStartedMs: Double
        var routeDecidedMs: Double
        var firstFrameMs: Double
        var frames: [Frame]
        var waited: Bool
        var pending: Int
        var banner: String
        /// Region crossings handled during the launch (captured by `--region-event` or earlier).
        var crossings: [HandledCrossing]

        enum CodingKeys: String, CodingKey {
            case route, frames, waited, pending, banner, crossings
            case finalRoute = "final_route"
            case commandStartedMs = "command_started_ms"
            case routeDecidedMs = "route_decided_ms"
            case firstFrameMs = "first_frame_ms"
        }
    }

    var tab: MainTab = .dashboard
    var wait = true
    /// Frames as plain text (screen readers).
    var plain = false
    var onFrame: @Sendable (Frame) -> Void = { _ in }

    /// The first step of a launch: the route, from the session file and the onboarding cache
    /// only, and when it was decided.
    static func decide(
        paths: AppPaths, start: ContinuousClock.Instant, plugins: [any TrendyPlugin] = AppPlugins.active
    ) -> Decision {
        let commandStartedMs = LaunchClock.milliseconds(since: start)
        let snapshot = AppComposition.launchSnapshot(paths: paths, logs: .disabled(), plugins: plugins)
        let route = InitialRoute.decide(snapshot)
        return Decision(
            snapshot: snapshot, route: route, commandStartedMs: commandStartedMs,
            elapsedMs: LaunchClock.milliseconds(since: start))
    }

    /// A decision made before the arguments were parsed, for the data directory it read.
    struct EarlyDecision: Sendable {
        var paths: AppPaths
        var decision: Decision
    }

    /// The route decided before anything else was built.
    struct Decision: Sendable {
        var snapshot: LaunchSnapshot
        var route: AppRoute
        /// When the command began (argument parsing done), since `main` started.
        var commandStartedMs: Double
        /// When the route was decided, since `main` started.
        var elapsedMs: Double
    }

    /// The rest of the launch, with the environment built after the decision.
    func run(_ env: AppEnvironment, decision: Decision, start: ContinuousClock.Instant) async -> Report {
        let snapshot = decision.snapshot
        let routeDecidedMs = decision.elapsedMs
        let log = env.logger(.app)
        let shell = AppShell(env: env, start: start, tab: tab, plain: plain, onFrame: onFrame)
        let routes = env.routing.routes()
        let route = env.routing.launch(with: snapshot)
        log.info(
            "Launched", metadata: ["route": .string(route.description), "route_decided_ms": .double(routeDecidedMs)])
        await env.sync.refreshCounts()
        await shell.show(route)
        let firstFrameMs = await shell.frames.first?.elapsedMs ?? LaunchClock.milliseconds(since: start)

        let routeFrames = Task {
            var first = true
            for await next in routes {
                if first {
                    first = false
                    if next == route { continue }
                }
                await shell.show(next)
            }
        }
        let statuses = env.sync.statusUpdates()
        let bannerFrames = Task { for await status in statuses { await shell.syncChanged(status) } }

        if wait {
            for module in env.modules { await module.didLaunch() }
            await env.routing.settle()
            await env.sync.refreshCounts()
            await shell.syncChanged(env.sync.status)
        }
        env.routing.stop()
        await routeFrames.value
        bannerFrames.cancel()
        await shell.render()
        let frames = await shell.frames
        let status = env.sync.status
        return Report(
            route: decision.route.description, finalRoute: env.routing.route.description,
            commandStartedMs: decision.commandStartedMs,
            routeDecidedMs: routeDecidedMs, firstFrameMs: firstFrameMs, frames: frames, waited: wait,
            pending: status.pendingCount,
            banner: status.bannerText, crossings: await env.geofence?.handledThisRun() ?? [])
    }
}
