import RichPushReport
import Testing

@Suite("Latency histogram")
struct LatencyHistogramTests {
    @Test func boundsDoubleFromAQuarterMillisecond() {
        #expect(LatencyHistogram.upperBoundsMs.first == 0.25)
        #expect(LatencyHistogram.upperBoundsMs.last == 65536)
        #expect(LatencyHistogram.upperBoundsMs.count == 19)
    }

    @Test func valuesLandInTheirBuckets() {
        var histogram = LatencyHistogram()
        histogram.add(0.3)
        histogram.add(100_000)
        histogram.add(1)  // bounds are inclusive
        histogram.add(-2)  // clock skew: first bucket
        histogram.add(.nan)
        let buckets = histogram.buckets
        #expect(buckets.count == 20)
        #expect(buckets[0] == HistogramBucket(upperMs: 0.25, count: 1))
        #expect(buckets[1] == HistogramBucket(upperMs: 0.5, count: 1))
        #expect(buckets[2] == HistogramBucket(upperMs: 1, count: 1))
        #expect(buckets[19] == HistogramBucket(upperMs: nil, count: 1))
        #expect(buckets[3..<19].allSatisfy { $0.count == 0 })
        #expect(histogram.total == 4)
    }

    @Test func emptyBucketsAboveTheLastValueAreDropped() {
        var histogram = LatencyHistogram()
        histogram.add(3)
        histogram.add(3.5)
        histogram.add(0.2)
        #expect(histogram.buckets.map(\.upperMs) == [0.25, 0.5, 1, 2, 4])
        #expect(histogram.buckets.map(\.count) == [1, 0, 0, 0, 2])
        #expect(LatencyHistogram().buckets.isEmpty)
    }
}
