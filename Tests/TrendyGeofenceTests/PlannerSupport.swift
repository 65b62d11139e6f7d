import TrendyModels

/// A deterministic random source, so a failing property run can be replayed from its seed.
typealias SeededRandom = SplitMix64

extension SplitMix64 {
    /// The property tests' seeding (their recorded seeds replay as before).
    init(propertySeed seed: UInt64) { self.init(seed: seed &+ 0x9E37_79B9_7F4A_7C15) }
}

/// A point `metres` north of `c`.
func north(of c: Coordinate, _ metres: Double) -> Coordinate {
    Coordinate(latitude: c.latitude + metres / 111_195, longitude: c.longitude)
}

let berlin = Coordinate(latitude: 52.52, longitude: 13.405)
