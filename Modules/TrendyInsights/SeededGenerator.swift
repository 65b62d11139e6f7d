/// A small seedable random number generator (xoshiro256**, its state filled by SplitMix64), so a
/// correlation run and the synthetic histories that test it replay bit for bit on every platform.
///
/// Not for cryptography. The bounded draws are implemented here rather than through the
/// standard library's `random(in:using:)`, whose algorithm may change between Swift releases.
public struct SeededGenerator: RandomNumberGenerator, Sendable, Hashable {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64

    /// A generator whose whole sequence is fixed by `seed`.
    public init(seed: UInt64) {
        var x = seed
        func splitMix() -> UInt64 {
            x &+= 0x9E37_79B9_7F4A_7C15
            var z = x
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = splitMix()
        s1 = splitMix()
        s2 = splitMix()
        s3 = splitMix()
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        let result = ((s1 &* 5) << 7 | (s1 &* 5) >> 57) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = s3 << 45 | s3 >> 19
        return result
    }

    /// A uniform integer in `0..<bound` (Lemire's multiply-and-reject); `bound` must be positive.
    public mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0, "bound must be positive")
        let n = UInt64(bound)
        var product = next().multipliedFullWidth(by: n)
        if product.low < n {
            let floor = (0 &- n) % n
            while product.low < floor {
                product = next().multipliedFullWidth(by: n)
            }
        }
        return Int(product.high)
    }

    /// A uniform double in `[0, 1)` with 53 random bits.
    public mutating func unit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// A generator for a sub-stream: same seed and `stream` give the same generator, and
    /// different streams are, for every practical purpose, independent.
    public static func stream(_ stream: UInt64, of seed: UInt64) -> SeededGenerator {
        var mixer = SeededGenerator(seed: seed ^ (stream &* 0xD1B5_4A32_D192_ED03))
        return SeededGenerator(seed: mixer.next() ^ stream)
    }
}
