/// A latency distribution boiled down to the figures a reader compares: p50, p90, p99 and max.
package struct Percentiles: Codable, Sendable, Equatable {
    /// Median, milliseconds.
    package var p50: Double
    /// 90th percentile, milliseconds.
    package var p90: Double
    /// 99th percentile, milliseconds.
    package var p99: Double
    /// The largest value, milliseconds.
    package var max: Double
    /// How many values the figures were taken from.
    package var count: Int

    package init(p50: Double, p90: Double, p99: Double, max: Double, count: Int) {
        self.p50 = p50
        self.p90 = p90
        self.p99 = p99
        self.max = max
        self.count = count
    }
}
