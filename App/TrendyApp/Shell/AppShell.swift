import Foundation
import Logging
import TrendyAPI
import TrendyAuth
import TrendyLogging
import TrendyModels
import TrendyOnboarding
import TrendyRouting
import TrendySync

/// The headless app's screen: renders the current route as text, re-renders when the route or
/// the sync banner changes, and records every frame (identical consecutive frames are not
/// repeated). Reads only the local store and caches — never the network.
actor AppShell {
    let env: AppEnvironment
    let start: ContinuousClock.Instant
    let tab: MainTab
    let onFrame: @Sendable (Frame) -> Void
    /// Frames as plain text (screen readers).
    let plain: Bool
    private(set) var frames: [Frame] = []
    private(set) var route: AppRoute?
    var banner: String?
    /// Renders started so far; a render that finishes after a newer one started is dropped.
    var renders = 0

    init(
        env: AppEnvironment, start: ContinuousClock.Instant, tab: MainTab, plain: Bool = false,
        onFrame: @escaping @Sendable (Frame) -> Void
    ) {
        self.plain = plain
        self.env = env
        self.start = start
        self.tab = tab
        self.onFrame = onFrame
    }

    /// Shows `route`.
    @discardableResult
    func show(_ route: AppRoute) async -> Frame? {
        self.route = route
        return await render()
    }

    /// The sync status changed: re-render when the banner text did and a main tab is showing —
    /// at once for a new phase, at most every `progressInterval` for progress within a phase.
    func syncChanged(_ status: SyncStatus) async {
        guard status.bannerText != banner else { return }
        banner = status.bannerText
        guard route == .authenticated else { return }
        let now = ContinuousClock.now
        if status.phase.name == lastPhase, let last = lastBannerFrame, now - last < Self.progressInterval { return }
        lastPhase = status.phase.name
        lastBannerFrame = now
        await render()
    }

    /// How often progress within one sync phase re-renders the banner.
    static let progressInterval = Duration.milliseconds(250)
    var lastPhase: String?
    var lastBannerFrame: ContinuousClock.Instant?

    /// Renders the current route; records and reports a frame unless it repeats the last one.
    @discardableResult
    func render() async -> Frame? {
        guard let route else { return nil }
        renders += 1
        let generation = renders
        let content: ScreenContent
        do {
            content = try await self.content(for: route)
        } catch {
            // A read that failed (or was cancelled at shutdown) must not render wrong data.
            env.logger(.app).debug("Frame skipped", metadata: ["error": .string(String(describing: error))])
            return nil
        }
        // The actor is re-entered while the reads are awaited: if a newer render started meanwhile
        // (new route or banner), this frame is stale and must not be drawn after it.
        guard generation == renders else { return nil }
        let text = ScreenRenderer.render(content, plain: plain)
        if let last = frames.last, last.text == text, last.route == route.description { return nil }
        let frame = Frame(
            index: frames.count + 1, route: route.description, screen: content.id, banner: content.banner,
            elapsedMs: LaunchClock.milliseconds(since: start), text: text)
        frames.append(frame)
        onFrame(frame)
        return frame
    }

    func content(for route: AppRoute) async throws -> ScreenContent {
        switch route {
        case .loading: return .loading
        case .login: return .login(email: nil)
        case .error(let message): return .error(message)
        case .onboarding(let step): return .onboarding(step, try await Self.onboardingFacts(env))
        case .authenticated:
            if banner == nil { banner = env.sync.status.bannerText }
            return .main(tab, try await mainFacts(), banner: banner ?? "")
        }
    }

    /// What the onboarding screens mention, from the local store and the onboarding cache.
    static func onboardingFacts(_ env: AppEnvironment) async throws -> OnboardingFacts {
        let types = try await env.store.eventTypes()
        // Counted in the time index: the "Done" screen said "1000 event(s)" for 4,983.
        let eventCount = try await env.store.eventCount(from: .distantPast, to: .distantFuture)
        var permissions: [PermissionKind: PermissionOutcome] = [:]
        if let user = env.auth.currentUserId, let status = env.onboarding?.cachedStatus(for: user) {
            permissions = [
                .notifications: status.notificationsStatus, .location: status.locationStatus,
                .health: status.healthStatus,
            ]
        }
        return OnboardingFacts(
            email: env.auth.currentSession?.user.email, typeNames: types.map(\.value.name), eventCount: eventCount,
            permissions: permissions)
    }

    func mainFacts() async throws -> MainFacts {
        let types = try await env.store.eventTypes()
        let names = Dictionary(types.map { ($0.value.id, $0.value.name) }, uniquingKeysWith: { a, _ in a })
        let now = env.now()
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        let midnight = calendar.startOfDay(for: now)
        let recentLimit = tab == .events ? 20 : 5
        // The events tab lists every event, future ones first; the dashboard's "Recent" what happened.
        let recent =
            tab == .events
            ? try await env.store.events(limit: recentLimit, since: nil).map(\.value)
            : try await ScreenCounts.recent(env.store, now: env.now(), limit: recentLimit)
        let today = try await ScreenCounts.today(env.store, now: now, calendar: calendar)
        var facts = MainFacts(typeNames: names, recent: recent, today: today)
        switch tab {
        case .dashboard, .events, .types, .places, .account: break
        case .calendar:
            let month = calendar.dateInterval(of: .month, for: now)?.start ?? midnight
            facts.month = month
            facts.days = try await ScreenCounts.days(env.store, month: month, calendar: calendar)
        case .analytics:
            var counts: [String: Int] = [:]
            let since = now.addingTimeInterval(-30 * 86_400)
            let tomorrow = calendar.date(byAdding: .day, value: 1, to: midnight) ?? now
            for (typeId, count) in try await env.store.eventCountsByType(from: since, to: tomorrow) {
                counts[names[typeId] ?? "?", default: 0] += count
            }
            facts.perType = counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        }
        return facts
    }
}
