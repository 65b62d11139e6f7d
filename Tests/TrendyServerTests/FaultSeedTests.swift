import ArgumentParser
import Foundation
import Testing

@testable import TrendyServer

/// A faulted run replays: the faults are drawn from a seeded generator when a seed is given —
/// by `trendy serve --fault-seed`, the configuration, or the admin switch (issue 30).
struct FaultSeedTests {
    static func faulty(seed: UInt64?) -> FaultConfiguration {
        var c = FaultConfiguration()
        c.errorRate = 0.3
        c.dropRate = 0.1
        c.cutRate = 0.2
        c.jitterMilliseconds = 5
        c.seed = seed
        return c
    }

    static func draws(_ injector: FaultInjector, _ n: Int = 200) -> [[FaultInjector.Action]] {
        (0..<n).map { _ in injector.actions() }
    }

    @Test func theSameSeedDrawsTheSameFaults() {
        let first = Self.draws(FaultInjector(Self.faulty(seed: 42)))
        #expect(first == Self.draws(FaultInjector(Self.faulty(seed: 42))))
        #expect(first != Self.draws(FaultInjector(Self.faulty(seed: 43))))
        #expect(first.contains { $0.contains(.fail) })
        #expect(first.contains { $0.contains(.drop) })
    }

    @Test func updatingWithASeedRestartsTheGenerator() {
        let injector = FaultInjector(FaultConfiguration())
        injector.update(Self.faulty(seed: 7))
        let first = Self.draws(injector)
        injector.update(Self.faulty(seed: 7))
        #expect(Self.draws(injector) == first)
    }

    @Test func theServeFlagAndTheAdminBodyCarryTheSeed() throws {
        let options = try ServerOptions.parse(["--fault-seed", "9", "--fault-error-rate", "0.5"])
        #expect(options.configuration(environment: [:]).faults.seed == 9)
        let body = try JSONDecoder().decode(FaultConfiguration.self, from: Data(#"{"error_rate":1,"seed":5}"#.utf8))
        #expect(body.seed == 5)
        #expect(try JSONDecoder().decode(FaultConfiguration.self, from: Data("{}".utf8)).seed == nil)
    }
}
