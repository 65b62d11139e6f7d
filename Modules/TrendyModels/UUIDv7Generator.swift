import Foundation
import Synchronization

/// Makes UUIDv7s that are strictly increasing, also within one millisecond and when the clock
/// steps back: the 12-bit `rand_a` field is a counter seeded randomly each new millisecond
/// (RFC 9562 §6.2, method 1); when it runs out, the timestamp is advanced by one.
///
/// Time and randomness are injected, so tests can freeze the clock.
public final class UUIDv7Generator: Sendable {
    struct State {
        var lastMilliseconds: UInt64 = 0
        var counter: UInt16 = 0
    }

    let now: @Sendable () -> Date
    let random: @Sendable () -> UInt64
    let state = Mutex(State())

    /// Creates a generator; by default the system clock and the system random source.
    public init(
        now: @escaping @Sendable () -> Date = Date.init,
        random: @escaping @Sendable () -> UInt64 = { UInt64.random(in: .min ... .max) }
    ) {
        self.now = now
        self.random = random
    }

    /// The next id.
    public func next() -> UUIDv7 {
        let wall = UInt64(max(0, (now().timeIntervalSince1970 * 1000).rounded(.down)))
        let randB = random()
        return state.withLock { s in
            if wall > s.lastMilliseconds {
                s.lastMilliseconds = wall
                // Seed the counter in the lower half so a burst has room to count up.
                s.counter = UInt16(truncatingIfNeeded: random()) & 0x07FF
            } else if s.counter >= 0x0FFF {
                s.lastMilliseconds += 1
                s.counter = UInt16(truncatingIfNeeded: random()) & 0x07FF
            } else {
                s.counter += 1
            }
            return UUIDv7(milliseconds: s.lastMilliseconds, randA: s.counter, randB: randB)
        }
    }
}
