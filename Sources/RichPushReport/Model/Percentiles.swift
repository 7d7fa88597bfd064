/// A latency distribution boiled down to the figures a reader compares: p50, p90, p99 and max.
public struct Percentiles: Codable, Sendable, Equatable {
    /// Median, milliseconds.
    public var p50: Double
    /// 90th percentile, milliseconds.
    public var p90: Double
    /// 99th percentile, milliseconds.
    public var p99: Double
    /// The largest value, milliseconds.
    public var max: Double
    /// How many values the figures were taken from.
    public var count: Int

    public init(p50: Double, p90: Double, p99: Double, max: Double, count: Int) {
        self.p50 = p50
        self.p90 = p90
        self.p99 = p99
        self.max = max
        self.count = count
    }

    /// Nearest-rank percentiles of `values` (the smallest value with at least p% of the values at
    /// or below it), so every figure is a latency that was really measured.
    ///
    /// Non-finite values are left out; nil when no value is left.
    public static func of(_ values: [Double]) -> Percentiles? {
        let sorted = values.filter(\.isFinite).sorted()
        guard let last = sorted.last else { return nil }
        // Integer arithmetic: 0.9 * 100 is 90.00000000000001 in floating point, and its ceiling 91.
        func rank(_ percent: Int) -> Double { sorted[Swift.max(1, (percent * sorted.count + 99) / 100) - 1] }
        return Percentiles(p50: rank(50), p90: rank(90), p99: rank(99), max: last, count: sorted.count)
    }
}
