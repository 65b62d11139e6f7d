import Foundation
import TrendyAPI
import TrendyAPITesting
import TrendySync
import TrendySyncLive
import TrendyTestSupport

/// A new device joining the account mid-run (a new phone): its first download, in pages of two,
/// is killed at drawn requests and goes on where it stopped (D69) while the others keep writing;
/// later a joined device's pass may be killed again. Drawn from a generator of their own, so the
/// other steps of a seed stay the ones it always drew.
extension Simulation {
    mutating func joinDraw(_ n: Int) -> Int { Int(joinRng.next() % UInt64(n)) }

    mutating func joinStep() async throws {
        let roll = joinDraw(100)
        if roll < 6, step >= 10, devices.count < founders + 2 {
            try await join()
        } else if roll < 12, devices.count > founders {
            try await killedPass(devices[founders + joinDraw(devices.count - founders)], first: false)
        }
    }

    private mutating func join() async throws {
        let h = harness
        let i = devices.count
        let store = try SyncHarness.memoryStore(now: { h.clock.now })
        let apis = clients.map { InterceptingAPIClient($0) }
        let home = i % apis.count
        let identity = IdentityBox(userId)
        let d = Device(
            name: "d\(i)", store: store, apis: apis, home: home, identity: identity,
            engine: engine(on: store, apis[home], identity: identity, pageSize: 2))
        devices.append(d)
        log.append("\(step) \(d.name) joins")
        // Killed again and again, as a phone on a bad link: up to three tries in a row.
        for _ in 0..<3 {
            try await killedPass(d, first: true)
            if try await d.store.cursor() != nil { break }
        }
    }

    /// A pass of a joined device killed at a drawn request (a pass of a new device's download
    /// makes 7 and more).
    private mutating func killedPass(_ d: Device, first: Bool) async throws {
        let calls = 3 + joinDraw(16)
        try await killedPass(
            d, after: calls, losingAnswer: joinDraw(2) == 0, label: first ? "first download" : "pass", pageSize: 2)
    }
}
