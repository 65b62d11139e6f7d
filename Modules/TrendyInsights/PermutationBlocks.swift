/// One test's whole-week permutation statistic, precomputed so a permutation costs O(blocks).
///
/// The paired days t = start ..< start + 7·blocks (x on day t, y on day t + lag) are cut into
/// blocks of 7 consecutive days. A permutation π moves x's block i against y's block π(i); since
/// blocks are whole weeks, every day keeps its weekday. The table holds the block cross-products
/// C[i][j] = Σ_d x[7i + d]·y[7j + d], so Σ_i C[i][π(i)] is the permuted cross-product.
///
/// When every paired day is present ("dense"), x and y are centred once and only C is needed:
/// n, Σx and Σx² do not change under a permutation of whole blocks. When days are missing
/// ("sparse"), a permutation changes which days pair up, so the table holds six sums per block
/// pair (n, Σx, Σy, Σx², Σy², Σxy over the days both present) and r is recomputed from them.
///
/// `spread` widens the shuffled distribution for dependence the shuffle cannot keep (see
/// `Statistics.dependenceFactor`): a shuffle reaches the test when its |Σ C| (dense) or |r| (sparse)
/// reaches the observed one divided by √spread, which is the same as comparing the observed value with
/// shuffled values scaled up by √spread. With `spread` = 1 this is the plain permutation test.
struct BlockStatistic: Sendable {
    /// Number of 7-day blocks.
    let blocks: Int
    /// Whether every paired day is present.
    let dense: Bool
    /// Pearson r of the identity arrangement.
    let r: Double
    /// Paired days behind `r`.
    let n: Int
    /// True when r is undefined (no spread, or too few pairs): the test is reported with p = 1.
    let degenerate: Bool
    private let table: [Double]
    /// Dense: the |Σ C| a permutation must reach; sparse: the |r| it must reach (both over √spread).
    private let bar: Double
    /// Dense: √(Σx²·Σy²), the fixed denominator.
    private let scale: Double

    /// Sums per block pair in the sparse table.
    static let sparseWidth = 6

    /// Builds the table for x on day t against y on day t + lag; `spread` (at least 1) as above.
    init(x: [Double], y: [Double], lag: Int, start: Int, blocks: Int, spread: Double = 1) {
        let shrink = 1 / max(1, spread).squareRoot()
        self.blocks = blocks
        let length = 7 * blocks
        var xs = [Double](repeating: .nan, count: length)
        var ys = [Double](repeating: .nan, count: length)
        for i in 0..<length {
            if start + i < x.count { xs[i] = x[start + i] }
            if start + i + lag < y.count { ys[i] = y[start + i + lag] }
        }
        let isDense = !xs.contains(where: \.isNaN) && !ys.contains(where: \.isNaN)
        dense = isDense
        if isDense {
            let mx = xs.reduce(0, +) / Double(max(length, 1))
            let my = ys.reduce(0, +) / Double(max(length, 1))
            for i in 0..<length {
                xs[i] -= mx
                ys[i] -= my
            }
            let sxx = xs.reduce(0) { $0 + $1 * $1 }
            let syy = ys.reduce(0) { $0 + $1 * $1 }
            var table = [Double](repeating: 0, count: blocks * blocks)
            xs.withUnsafeBufferPointer { xs in
                ys.withUnsafeBufferPointer { ys in
                    table.withUnsafeMutableBufferPointer { table in
                        for i in 0..<blocks {
                            for j in 0..<blocks {
                                var sum = 0.0
                                for d in 0..<7 { sum += xs[7 * i + d] * ys[7 * j + d] }
                                table[i * blocks + j] = sum
                            }
                        }
                    }
                }
            }
            var diagonal = 0.0
            for i in 0..<blocks { diagonal += table[i * blocks + i] }
            self.table = table
            scale = (sxx * syy).squareRoot()
            n = length
            degenerate = length < 3 || !(scale > 1e-12)
            r = degenerate ? 0 : Statistics.correlation(sxy: diagonal, sxx: sxx, syy: syy)
            bar = abs(diagonal) * shrink - 1e-12 * scale
        } else {
            // Standardise over the present days so the six sums stay well conditioned.
            let (xz, yz) = (Self.standardised(xs), Self.standardised(ys))
            let width = Self.sparseWidth
            var table = [Double](repeating: 0, count: blocks * blocks * width)
            xz.withUnsafeBufferPointer { xz in
                yz.withUnsafeBufferPointer { yz in
                    table.withUnsafeMutableBufferPointer { table in
                        for i in 0..<blocks {
                            for j in 0..<blocks {
                                let base = (i * blocks + j) * width
                                for d in 0..<7 {
                                    let (a, b) = (xz[7 * i + d], yz[7 * j + d])
                                    guard !a.isNaN, !b.isNaN else { continue }
                                    table[base] += 1
                                    table[base + 1] += a
                                    table[base + 2] += b
                                    table[base + 3] += a * a
                                    table[base + 4] += b * b
                                    table[base + 5] += a * b
                                }
                            }
                        }
                    }
                }
            }
            self.table = table
            scale = 1
            var identity = [Double](repeating: 0, count: width)
            for i in 0..<blocks {
                for k in 0..<width { identity[k] += table[(i * blocks + i) * width + k] }
            }
            n = Int(identity[0])
            let observed = Self.sparseR(identity)
            degenerate = observed == nil
            r = observed ?? 0
            bar = abs(r) * shrink - 1e-12
        }
    }

    /// Centres and scales the present values to mean 0, variance 1 (leaves them if constant).
    private static func standardised(_ values: [Double]) -> [Double] {
        guard let mean = Statistics.mean(values) else { return values }
        let present = values.filter { !$0.isNaN }
        let variance = present.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(present.count)
        let sd = variance > 1e-24 ? variance.squareRoot() : 1
        return values.map { $0.isNaN ? .nan : ($0 - mean) / sd }
    }

    /// r from the six sums; nil when undefined.
    private static func sparseR(_ s: [Double]) -> Double? {
        let n = s[0]
        guard n >= 3 else { return nil }
        let sxx = s[3] - s[1] * s[1] / n
        let syy = s[4] - s[2] * s[2] / n
        guard sxx > 1e-9, syy > 1e-9 else { return nil }
        return Statistics.correlation(sxy: s[5] - s[1] * s[2] / n, sxx: sxx, syy: syy)
    }

    /// r under a permutation given as table offsets `i·blocks + π(i)` (for `i` in 0..<blocks).
    func permutedR(offsets: some Collection<Int32>) -> Double {
        if dense {
            var sum = 0.0
            for offset in offsets { sum += table[Int(offset)] }
            return degenerate ? 0 : min(1, max(-1, sum / scale))
        }
        var sums = [Double](repeating: 0, count: Self.sparseWidth)
        for offset in offsets {
            let base = Int(offset) * Self.sparseWidth
            for k in 0..<Self.sparseWidth { sums[k] += table[base + k] }
        }
        return Self.sparseR(sums) ?? 0
    }

    /// Whether the permutation at `offsets[base ..< base + blocks]` gives |r| at least the observed |r|.
    func reaches(_ offsets: UnsafeBufferPointer<Int32>, at base: Int) -> Bool {
        table.withUnsafeBufferPointer { table in
            if dense {
                var sum = 0.0
                for i in base..<(base + blocks) { sum += table[Int(offsets[i])] }
                return abs(sum) >= bar
            }
            var (n, sx, sy, sxx, syy, sxy) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
            for i in base..<(base + blocks) {
                let k = Int(offsets[i]) * 6
                n += table[k]
                sx += table[k + 1]
                sy += table[k + 2]
                sxx += table[k + 3]
                syy += table[k + 4]
                sxy += table[k + 5]
            }
            // An arrangement where r is undefined counts as r = 0.
            guard n >= 3 else { return 0 >= bar }
            let vx = sxx - sx * sx / n
            let vy = syy - sy * sy / n
            guard vx > 1e-9, vy > 1e-9 else { return 0 >= bar }
            return abs(Statistics.correlation(sxy: sxy - sx * sy / n, sxx: vx, syy: vy)) >= bar
        }
    }
}
