import Foundation
import Synchronization
import TrendyModels

/// Holds the fault switches and decides, per request, which fault (if any) to inject.
public final class FaultInjector: Sendable {
    /// What to do to one request.
    enum Action: Equatable {
        case none
        case delay(Double)
        case fail
        case tooManyRequests(retryAfter: Int)
        case drop
        case cutAfterWork
    }

    let state: Mutex<FaultConfiguration>
    let random: @Sendable () -> Double
    /// A seeded source (SplitMix64) that replaces `random` while set, so a run can be replayed.
    let seeded = Mutex<UInt64?>(nil)

    init(_ configuration: FaultConfiguration, random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        state = Mutex(configuration)
        self.random = random
        if let seed = configuration.seed { seeded.withLock { $0 = seed } }
    }

    /// The switches in force.
    public var configuration: FaultConfiguration { state.withLock { $0 } }

    /// Replaces the switches; a configuration with a `seed` restarts the seeded generator there.
    public func update(_ configuration: FaultConfiguration) {
        state.withLock { $0 = configuration }
        if let seed = configuration.seed { self.seed(seed) }
    }

    /// Draws the faults' random numbers from a generator seeded with `seed` (nil: the system's
    /// again), so a simulation that seeds its own steps replays its faults too.
    public func seed(_ seed: UInt64?) { seeded.withLock { $0 = seed } }

    /// The next number in [0, 1): from the seeded generator when one is set.
    func next() -> Double {
        let drawn = seeded.withLock { state -> UInt64? in
            guard let s = state else { return nil }
            var generator = SplitMix64(seed: s)
            defer { state = generator.state }
            return generator.next()
        }
        guard let drawn else { return random() }
        return Double(drawn >> 11) / Double(1 << 53)
    }

    /// Decides the faults for one request: a delay first (if any), then at most one failure.
    func actions() -> [Action] {
        let (c, forced) = state.withLock { s -> (FaultConfiguration, Bool) in
            if s.forced429Count > 0 {
                s.forced429Count -= 1
                return (s, true)
            }
            return (s, false)
        }
        var out: [Action] = []
        let latency = c.latencyMilliseconds + (c.jitterMilliseconds > 0 ? next() * c.jitterMilliseconds : 0)
        if latency > 0 { out.append(.delay(latency / 1000)) }
        if forced {
            out.append(.tooManyRequests(retryAfter: c.retryAfterSeconds))
        } else if c.dropRate > 0, next() < c.dropRate {
            out.append(.drop)
        } else if c.errorRate > 0, next() < c.errorRate {
            out.append(.fail)
        } else if c.cutRate > 0, next() < c.cutRate {
            out.append(.cutAfterWork)
        }
        return out
    }
}
