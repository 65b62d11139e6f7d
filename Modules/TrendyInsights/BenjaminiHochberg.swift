/// The Benjamini–Hochberg (1995) step-up procedure, which controls the false discovery rate of a
/// family of tests.
public enum BenjaminiHochberg {
    /// The BH q-value of each p-value, in the input's order: with p sorted ascending,
    /// q_(i) = min over j ≥ i of p_(j)·m / j, capped at 1 (R's `p.adjust(p, "BH")`).
    /// A test is a discovery at rate α exactly when its q ≤ α.
    public static func qValues(_ pValues: [Double]) -> [Double] {
        let m = pValues.count
        guard m > 0 else { return [] }
        // Ties keep input order, so equal p-values get equal q-values either way.
        let order = pValues.indices.sorted { (pValues[$0], $0) < (pValues[$1], $1) }
        var q = [Double](repeating: 1, count: m)
        var running = 1.0
        for rank in stride(from: m, through: 1, by: -1) {
            let index = order[rank - 1]
            running = min(running, pValues[index] * Double(m) / Double(rank))
            q[index] = min(1, running)
        }
        return q
    }

    /// The indices of the discoveries at false discovery rate `alpha`, in the input's order.
    public static func discoveries(_ pValues: [Double], alpha: Double) -> [Int] {
        qValues(pValues).enumerated().filter { $0.element <= alpha }.map(\.offset)
    }
}
