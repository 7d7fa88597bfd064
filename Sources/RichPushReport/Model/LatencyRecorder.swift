import Histogram

/// Latencies of a load test in an HdrHistogram (microseconds, three significant digits): memory
/// stays fixed however many millions of pushes are recorded, and each record is O(1).
package struct LatencyRecorder: Sendable {
    private var histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)

    package init() {}

    /// Records one latency in milliseconds; NaN and infinities are left out, negative values
    /// (clock skew) count as 0.
    package mutating func record(ms: Double) {
        guard ms.isFinite else { return }
        histogram.record(UInt64(max(0, ms * 1000).rounded()))
    }

    package var count: Int { Int(histogram.totalCount) }

    /// p50, p90, p99 and the largest value recorded, in milliseconds (each within 0.1% of a
    /// measured value); nil when nothing was recorded.
    package var percentiles: Percentiles? {
        guard histogram.totalCount > 0 else { return nil }
        func ms(_ micros: UInt64) -> Double { Double(micros) / 1000 }
        return Percentiles(
            p50: ms(histogram.valueAtPercentile(50)), p90: ms(histogram.valueAtPercentile(90)),
            p99: ms(histogram.valueAtPercentile(99)), max: ms(histogram.maxRecorded), count: count)
    }

    package mutating func reset() {
        histogram.reset()
    }
}
