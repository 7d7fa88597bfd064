import Testing
import RichPushReport

@Suite("Percentiles")
struct PercentilesTests {
    @Test func nearestRankOfOneToHundred() throws {
        let percentiles = try #require(Percentiles.of((1...100).map(Double.init).shuffled()))
        #expect(percentiles == Percentiles(p50: 50, p90: 90, p99: 99, max: 100, count: 100))
    }

    @Test func smallSamplesTakeMeasuredValues() throws {
        #expect(try #require(Percentiles.of([7])) == Percentiles(p50: 7, p90: 7, p99: 7, max: 7, count: 1))
        // Ranks ceil(0.5 × 4) = 2, ceil(0.9 × 4) = 4, ceil(0.99 × 4) = 4.
        #expect(try #require(Percentiles.of([4, 1, 3, 2])) == Percentiles(p50: 2, p90: 4, p99: 4, max: 4, count: 4))
    }

    @Test func emptyOrNonFiniteIsNil() {
        #expect(Percentiles.of([]) == nil)
        #expect(Percentiles.of([.nan, .infinity]) == nil)
        #expect(Percentiles.of([.nan, 3])?.count == 1)
    }
}
