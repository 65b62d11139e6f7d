import Foundation
import Synchronization

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

    init(_ configuration: FaultConfiguration, random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        state = Mutex(configuration)
        self.random = random
    }

    /// The switches in force.
    public var configuration: FaultConfiguration { state.withLock { $0 } }

    /// Replaces the switches.
    public func update(_ configuration: FaultConfiguration) { state.withLock { $0 = configuration } }

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
        let latency = c.latencyMilliseconds + (c.jitterMilliseconds > 0 ? random() * c.jitterMilliseconds : 0)
        if latency > 0 { out.append(.delay(latency / 1000)) }
        if forced {
            out.append(.tooManyRequests(retryAfter: c.retryAfterSeconds))
        } else if c.dropRate > 0, random() < c.dropRate {
            out.append(.drop)
        } else if c.errorRate > 0, random() < c.errorRate {
            out.append(.fail)
        } else if c.cutRate > 0, random() < c.cutRate {
            out.append(.cutAfterWork)
        }
        return out
    }
}
