/// SplitMix64: a small, fast, seedable random number generator. Simulations, property tests,
/// fault injection and benchmarks use it so a run replays exactly from its seed.
public struct SplitMix64: RandomNumberGenerator, Sendable, Hashable {
    /// The generator's whole state.
    public var state: UInt64

    /// Starts from `seed` (or resumes from a saved ``state``; the first number is derived from
    /// it + γ).
    public init(seed: UInt64) { self.state = seed }

    /// The next number.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
