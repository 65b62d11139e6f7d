import Foundation

/// The small tests on counts insights use, written out (see docs/insights.md for why no
/// statistics library): an exact binomial test, the Rayleigh test of a circular mean and the
/// chi-square tail for even degrees of freedom. Each is checked against published values in
/// `CountTestsTests`.
public enum CountTests {
    /// The exact two-sided binomial test of `k` successes in `n` at `p = ½`: the chance of a split
    /// at least this uneven when both sides are equally likely. 1 when `n` is 0.
    public static func binomialTwoSided(_ k: Int, of n: Int) -> Double {
        guard n > 0 else { return 1 }
        let low = min(k, n - k)
        if 2 * low == n { return 1 }
        // P(X ≤ low), summed in log space from the largest term down.
        let logHalf = Double(n) * log(0.5)
        var total = 0.0
        for i in 0...low {
            total += exp(logChoose(n, i) + logHalf)
        }
        return min(1, 2 * total)
    }

    /// log C(n, k).
    static func logChoose(_ n: Int, _ k: Int) -> Double {
        lgamma(Double(n) + 1) - lgamma(Double(k) + 1) - lgamma(Double(n - k) + 1)
    }

    /// The Rayleigh test's p for `n` angles with mean resultant length `r` (Zar's approximation).
    public static func rayleigh(n: Int, r: Double) -> Double {
        guard n > 0 else { return 1 }
        let nn = Double(n)
        let z = nn * r * r
        let p =
            exp(-z)
            * (1 + (2 * z - z * z) / (4 * nn) - (24 * z - 132 * z * z + 76 * z * z * z - 9 * z * z * z * z)
                / (288 * nn * nn))
        return min(1, max(0, p))
    }

    /// The upper tail of a chi-square with an even number of degrees of freedom, `df = 2m`.
    public static func chiSquareTail(_ x: Double, degreesOfFreedom df: Int) -> Double {
        precondition(df > 0 && df % 2 == 0, "even degrees of freedom only")
        guard x > 0 else { return 1 }
        let half = x / 2
        var term = 1.0
        var sum = 1.0
        for i in 1..<(df / 2) {
            term *= half / Double(i)
            sum += term
        }
        return min(1, exp(-half) * sum)
    }
}
