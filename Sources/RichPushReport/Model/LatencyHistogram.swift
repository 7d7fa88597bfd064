/// Counts latencies into fixed, log-spaced buckets (0.25 ms doubling up to 65,536 ms, then
/// overflow), so millions of deliveries fit in twenty integers and runs compare bucket by bucket.
package struct LatencyHistogram: Sendable, Equatable {
    /// The inclusive upper bound of each bucket but the overflow one, in milliseconds.
    package static let upperBoundsMs: [Double] = (0..<19).map { 0.25 * Double(1 << $0) }

    /// One count per bound, then the overflow count.
    private var counts = [Int](repeating: 0, count: upperBoundsMs.count + 1)

    package init() {}

    /// Counts one latency. Values at or below 0.25 ms (negative ones too, from clock skew) go in
    /// the first bucket, values above 65,536 ms (and infinity) in the overflow; NaN is ignored.
    package mutating func add(_ ms: Double) {
        guard !ms.isNaN else { return }
        let index = Self.upperBoundsMs.firstIndex { ms <= $0 } ?? Self.upperBoundsMs.count
        counts[index] += 1
    }

    /// How many latencies were added (NaN aside).
    package var total: Int { counts.reduce(0, +) }

    /// The buckets from the lowest bound (0.25 ms) up to the highest non-empty one; empty when
    /// nothing was added.
    ///
    /// Empty buckets above the highest value are dropped so the chart is not mostly blank bars;
    /// the leading ones are kept so each bucket's lower bound is the previous bucket's `upperMs`
    /// (0 for the first) and charts of two runs start at the same place.
    package var buckets: [HistogramBucket] {
        guard let last = counts.lastIndex(where: { $0 > 0 }) else { return [] }
        return (0...last).map { index in
            HistogramBucket(upperMs: index < Self.upperBoundsMs.count ? Self.upperBoundsMs[index] : nil, count: counts[index])
        }
    }
}
