/// One bar of a latency histogram: the values above the previous bucket's bound, up to this one.
package struct HistogramBucket: Codable, Sendable, Equatable {
    /// Inclusive upper bound in milliseconds; nil for the overflow bucket above the last bound.
    package var upperMs: Double?
    /// How many values fell in the bucket.
    package var count: Int

    package init(upperMs: Double?, count: Int) {
        self.upperMs = upperMs
        self.count = count
    }
}
